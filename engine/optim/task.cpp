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

// the env of each runner's world
template <class S>
Result<std::unique_ptr<PolicyEnvT<S>>> env_of(const TaskRunnerT<S>&, const scene::CompiledSceneT<S>& cs,
                                              const scene::Task& task, const PolicyEnvOptions& o) {
  auto env = ParticlePolicyEnvT<S>::create(cs, task, o);
  if (!env) return env.status();
  return std::unique_ptr<PolicyEnvT<S>>(std::move(env.value()));
}
template <class S>
Result<std::unique_ptr<PolicyEnvT<S>>> env_of(const RigidTaskRunnerT<S>&, const scene::CompiledSceneT<S>& cs,
                                              const scene::Task& task, const PolicyEnvOptions& o) {
  auto env = RigidPolicyEnvT<S>::create(cs, task, o);
  if (!env) return env.status();
  return std::unique_ptr<PolicyEnvT<S>>(std::move(env.value()));
}
template <class S>
Result<std::unique_ptr<PolicyEnvT<S>>> env_of(const CoupledTaskRunnerT<S>&, const scene::CompiledSceneT<S>&,
                                              const scene::Task& task, const PolicyEnvOptions&) {
  // TODO(optim): a coupled env (robots and particles stepped together, frame by frame); safe
  // to leave: the scenes' coupled tasks have no policy, and BPTT trains them
  return Status::error("task '" + task.name + "': policies on robots and particles together train by BPTT only");
}

// the loss of given frames, by each runner's loss
template <class S, class Loss>
S loss_of(Loss loss, const std::vector<StateT<S>>& frames, const std::vector<S>& theta) {
  loss.begin();
  for (std::size_t t = 0; t < frames.size(); ++t) loss.observe(int(t), frames[t]);
  return loss.value(theta);
}

// a runner behind the Task interface
template <class S, class Runner>
class RunnerTask final : public TaskT<S> {
 public:
  RunnerTask(Runner r, const char* kind, std::shared_ptr<const scene::CompiledSceneT<S>> cs, TaskOptions options)
      : r_(std::move(r)), kind_(kind), cs_(std::move(cs)), options_(options), start_(cs_->model.make_state()) {}
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
  const StateT<S>& start() const override { return start_; }
  Result<std::unique_ptr<PolicyEnvT<S>>> policy_env(const PolicyEnvOptions& options) const override {
    return env_of(r_, *cs_, r_.task(), options);
  }
  Result<std::unique_ptr<TaskT<S>>> restart(const StateT<S>& start, const scene::Task& spec) const override {
    scene::CompiledSceneT<S> cs = *cs_;  // the model's initial state is where the task starts
    cs.model.particle_q = start.particle_q;
    cs.model.particle_qd = start.particle_qd;
    cs.model.joint_q = start.joint_q;
    cs.model.joint_qd = start.joint_qd;
    return make_task(cs, spec, options_);
  }
  Result<S> trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const override {
    if (int(frames.size()) != r_.task().horizon + 1)
      return Status::error("task '" + r_.task().name + "': a trajectory of " + std::to_string(frames.size()) +
                           " frames, the horizon needs " + std::to_string(r_.task().horizon + 1));
    if constexpr (std::is_same_v<Runner, CoupledTaskRunnerT<S>>)
      return Status::error("task '" + r_.task().name + "': the loss of a given trajectory is not measured here yet");
    else
      return loss_of<S>(r_.loss(), frames, theta);
  }

 private:
  Runner r_;
  const char* kind_;
  std::shared_ptr<const scene::CompiledSceneT<S>> cs_;  // restart() and policy_env() build from it
  TaskOptions options_;
  StateT<S> start_;
  std::vector<S> none_;
};

template <class S, class Runner>
Result<std::unique_ptr<TaskT<S>>> wrap(Result<Runner> r, const char* kind,
                                       std::shared_ptr<const scene::CompiledSceneT<S>> cs, TaskOptions options) {
  if (!r) return r.status();
  return std::unique_ptr<TaskT<S>>(new RunnerTask<S, Runner>(std::move(r.value()), kind, std::move(cs), options));
}

}  // namespace

const char* to_string(Method m) {
  switch (m) {
    case Method::bptt:
      return "BPTT";
    case Method::shac:
      return "SHAC";
    case Method::pods:
      return "PODS";
    case Method::receding_horizon:
      return "receding horizon";
  }
  return "?";
}

template <class S>
Result<std::unique_ptr<TaskT<S>>> make_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                            TaskOptions options) {
  auto shared = std::make_shared<const scene::CompiledSceneT<S>>(cs);
  if (is_robot_task(cs, task)) {
    if (cs.has_particles())  // robots and particles acting on each other
      return wrap<S>(CoupledTaskRunnerT<S>::create(cs, task, options.thread_count), "robot + particles, coupled",
                     shared, options);
    return wrap<S>(RigidTaskRunnerT<S>::create(cs, task), "robot", shared, options);
  }
  return wrap<S>(
      TaskRunnerT<S>::create(cs, task, {.thread_count = options.thread_count, .keep_frames = options.keep_frames}),
      "particles", shared, options);
}

template Result<std::unique_ptr<TaskT<float>>> make_task(const scene::CompiledSceneT<float>&, const scene::Task&,
                                                         TaskOptions);
template Result<std::unique_ptr<TaskT<double>>> make_task(const scene::CompiledSceneT<double>&, const scene::Task&,
                                                          TaskOptions);

}  // namespace adj::optim
