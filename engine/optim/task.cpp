#include "engine/optim/task.h"

#include <type_traits>

#include "engine/optim/coupled_task.h"
#include "engine/optim/rigid_parameters.h"
#include "engine/optim/rigid_task.h"

namespace adj::optim {

namespace {

// the one question about what a task holds, asked here only: a robot task has a parameter
// or a loss term on a robot object (then the robot runners; with particles in the scene too,
// the coupled one)
template <class S>
bool is_robot_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  auto robot = [&](const std::string& name) {
    const scene::ObjectRange* r = cs.find(name);
    return r && r->kind == scene::ObjectKind::robot;
  };
  for (const scene::ParamSpec& p : task.parameters)
    if (robot(p.object)) return true;
  for (const scene::LossTerm& l : task.loss)
    if (robot(l.object)) return true;
  return false;
}

// the blocks of each runner's parameters
template <class S>
const std::vector<ParamBlock>& blocks_of(const TaskRunnerT<S>& r) {
  return r.parameters().blocks();
}
template <class S>
const std::vector<ParamBlock>& blocks_of(const RigidTaskRunnerT<S>& r) {
  return r.parameters().blocks();
}
template <class S>
const std::vector<ParamBlock>& blocks_of(const CoupledTaskRunnerT<S>& r) {
  return r.blocks();
}

// a runner behind the Task interface
template <class S, class Runner>
class RunnerTask final : public TaskT<S> {
 public:
  RunnerTask(Runner r, const char* kind) : r_(std::move(r)), kind_(kind) {}
  const char* kind() const override { return kind_; }
  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad) override { return r_.evaluate(theta, grad); }
  Result<IterationStats> iterate() override { return r_.iterate(); }
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed) override {
    return r_.check_grad(samples, eps, seed);
  }
  std::string entry_name(int i) const override { return r_.entry_name(i); }
  int iterations_left() const override { return r_.iterations_left(); }
  const std::vector<S>& theta() const override { return r_.theta(); }
  void set_theta(std::vector<S> theta) override { r_.set_theta(std::move(theta)); }
  const std::vector<S>& grad() const override { return r_.grad(); }
  const std::vector<IterationStats>& history() const override { return r_.history(); }
  const std::vector<ParamBlock>& blocks() const override { return blocks_of(r_); }
  const scene::Task& task() const override { return r_.task(); }
  const std::vector<StateT<S>>& frames() const override { return r_.frames(); }
  const StateT<S>& final_state() const override {
    if constexpr (std::is_same_v<Runner, TaskRunnerT<S>>)
      return r_.final_state();
    else
      return r_.frames().back();
  }
  const std::vector<S>& step_grad_norms() const override {
    if constexpr (std::is_same_v<Runner, TaskRunnerT<S>>)
      return r_.step_grad_norms();
    else
      return none_;
  }

 private:
  Runner r_;
  const char* kind_;
  std::vector<S> none_;
};

template <class S, class Runner>
Result<std::unique_ptr<TaskT<S>>> wrap(Result<Runner> r, const char* kind) {
  if (!r) return r.status();
  return std::unique_ptr<TaskT<S>>(new RunnerTask<S, Runner>(std::move(r.value()), kind));
}

}  // namespace

const char* to_string(Method m) {
  switch (m) {
    case Method::bptt:
      return "BPTT";
    case Method::shac:
      return "SHAC";
    case Method::receding_horizon:
      return "receding horizon";
  }
  return "?";
}

template <class S>
Status supports(const scene::CompiledSceneT<S>& cs, const scene::Task& task, Method method) {
  const std::string who = "task '" + task.name + "': ";
  switch (method) {
    case Method::bptt:
      return Status::ok();
    case Method::shac:  // the batched copies are robot copies (engine/optim/rigid_policy_env)
      if (!task.has_policy) return Status::error(who + "SHAC trains a policy; the task has no policy");
      if (!is_robot_task(cs, task))
        return Status::error(who + "SHAC trains a robot task's policy; the task has no robot");
      if (cs.has_particles())  // its copies step the bodies alone
        return Status::error(who + "SHAC's copies step robots alone; this scene also has particles (use BPTT)");
      return Status::ok();
    case Method::receding_horizon:  // plans actuator inputs
      if (!is_robot_task(cs, task))
        return Status::error(who + "receding horizon plans robot actuator inputs; the task has no robot");
      return Status::ok();
  }
  return Status::error(who + "unknown method");
}

template <class S>
Result<std::unique_ptr<TaskT<S>>> make_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                            TaskOptions options) {
  if (is_robot_task(cs, task)) {
    if (cs.has_particles())  // robots and particles acting on each other
      return wrap<S>(CoupledTaskRunnerT<S>::create(cs, task, options.thread_count), "robot + particles, coupled");
    return wrap<S>(RigidTaskRunnerT<S>::create(cs, task), "robot");
  }
  return wrap<S>(
      TaskRunnerT<S>::create(cs, task, {.thread_count = options.thread_count, .keep_frames = options.keep_frames}),
      "particles");
}

template Status supports(const scene::CompiledSceneT<float>&, const scene::Task&, Method);
template Status supports(const scene::CompiledSceneT<double>&, const scene::Task&, Method);
template Result<std::unique_ptr<TaskT<float>>> make_task(const scene::CompiledSceneT<float>&, const scene::Task&,
                                                         TaskOptions);
template Result<std::unique_ptr<TaskT<double>>> make_task(const scene::CompiledSceneT<double>&, const scene::Task&,
                                                          TaskOptions);

}  // namespace adj::optim
