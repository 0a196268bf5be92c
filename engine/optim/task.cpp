#include "engine/optim/task.h"

namespace adj::optim {

namespace {

// the task's runner behind the Task interface
template <class S>
class RunnerTask final : public TaskT<S> {
 public:
  RunnerTask(TaskRunnerT<S> r, std::shared_ptr<const scene::CompiledSceneT<S>> cs, TaskOptions options)
      : r_(std::move(r)), cs_(std::move(cs)), options_(options), start_(cs_->model.make_state()) {}
  const char* kind() const override { return r_.kind(); }
  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad) override { return r_.evaluate(theta, grad); }
  Result<IterationStats> iterate() override { return r_.iterate(); }
  Result<S> finish() override { return r_.finish(); }
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed) override {
    return r_.check_grad(samples, eps, seed);
  }
  std::string entry_name(int i) const override { return r_.entry_name(i); }
  int iterations_left() const override { return r_.iterations_left(); }
  const std::vector<S>& theta() const override { return r_.theta(); }
  void set_theta(std::vector<S> theta) override { r_.set_theta(std::move(theta)); }
  const std::vector<S>& grad() const override { return r_.grad(); }
  const std::vector<IterationStats>& history() const override { return r_.history(); }
  const std::vector<ParamBlock>& blocks() const override { return r_.blocks(); }
  const scene::Task& task() const override { return r_.task(); }
  const std::vector<StateT<S>>& frames() const override { return r_.frames(); }
  const StateT<S>& final_state() const override { return r_.final_state(); }
  const std::vector<S>& step_grad_norms() const override { return r_.step_grad_norms(); }
  const StateT<S>& start() const override { return start_; }
  Result<std::unique_ptr<PolicyEnvT<S>>> policy_env(const PolicyEnvOptions& o) const override {
    auto env = ScenePolicyEnvT<S>::create(*cs_, r_.task(), o);
    if (!env) return env.status();
    return std::unique_ptr<PolicyEnvT<S>>(std::move(env.value()));
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
    return r_.trajectory_loss(frames, theta);
  }

 private:
  TaskRunnerT<S> r_;
  std::shared_ptr<const scene::CompiledSceneT<S>> cs_;  // restart() and policy_env() build from it
  TaskOptions options_;
  StateT<S> start_;
};

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
  auto r = TaskRunnerT<S>::create(cs, task, {.thread_count = options.thread_count, .keep_frames = options.keep_frames});
  if (!r) return r.status();
  return std::unique_ptr<TaskT<S>>(
      new RunnerTask<S>(std::move(r.value()), std::make_shared<const scene::CompiledSceneT<S>>(cs), options));
}

template Result<std::unique_ptr<TaskT<float>>> make_task(const scene::CompiledSceneT<float>&, const scene::Task&,
                                                         TaskOptions);
template Result<std::unique_ptr<TaskT<double>>> make_task(const scene::CompiledSceneT<double>&, const scene::Task&,
                                                          TaskOptions);

}  // namespace adj::optim
