// Task: one interface over every scene task, whatever the scene holds (particles, robots or
// both): the optimization methods (BPTT: iterate(); SHAC, PPO, PODS: policy_env(); receding
// horizon: restart()), `adjoint optimize` / `check-grad` and the editor take a Task.
// make_task() makes the one TaskRunner (trainer.h) for every scene: particles, robots, or
// both, stepped by the one solver; the runner binds each parameter and loss term to the arrays
// its object has; policy_env() makes the one env (ScenePolicyEnv, policy_env.h) of the
// task's policy.
//
//   auto task = optim::make_task(compiled, *scene.find_task(name));
//   if (!task) report(task.status());
//   while ((*task)->iterations_left() > 0) {
//     auto it = (*task)->iterate();  // {iteration, loss, grad_norm, ms}
//     if (!it) { report(it.status()); break; }
//   }
//   auto table = make_task(compiled_double, spec).value()->check_grad(16, 1e-6, seed);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/optim/policy_env.h"
#include "engine/optim/trainer.h"

namespace adj::optim {

struct TaskOptions {
  int thread_count = 0;      // OpenMP threads of the particle stages, 0 = default
  bool keep_frames = false;  // particle tasks: keep every state of the last evaluate (frames())
};

template <class S>
class TaskT {
 public:
  virtual ~TaskT() = default;
  // what the scene holds, for messages: "particles", "robot", "robot + particles, coupled"
  virtual const char* kind() const = 0;
  // loss at theta and, when grad is given, dLoss/dtheta; errors name the step and element
  virtual Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad = nullptr) = 0;
  // one optimizer step from theta(): evaluate, step, clamp to the bounds (optimizer.backtrack:
  // a point that raised the loss is rejected and the step from the last accepted one halved)
  virtual Result<IterationStats> iterate() = 0;
  // the loss at the final theta, after the last iterate(); with optimizer.backtrack a last step
  // that raised the loss is undone first
  virtual Result<S> finish() = 0;
  // central differences on `samples` entries chosen with `seed` (every entry when <= 0)
  virtual Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed) = 0;
  virtual std::string entry_name(int i) const = 0;
  virtual int iterations_left() const = 0;
  virtual const std::vector<S>& theta() const = 0;
  virtual void set_theta(std::vector<S> theta) = 0;
  virtual const std::vector<S>& grad() const = 0;
  virtual const std::vector<IterationStats>& history() const = 0;
  // theta's blocks (kind, object, offset, count, ...)
  virtual const std::vector<ParamBlock>& blocks() const = 0;
  virtual const scene::Task& task() const = 0;
  // the states of the last evaluate(), t = 0..horizon (particle tasks: TaskOptions::keep_frames;
  // tasks with bodies always keep them)
  virtual const std::vector<StateT<S>>& frames() const = 0;
  // the end of the last evaluate()'s rollout (only after one has run)
  virtual const StateT<S>& final_state() const = 0;
  // |dL/d state_t| of the last evaluate, t = 0..horizon (empty where not measured)
  virtual const std::vector<S>& step_grad_norms() const = 0;

  // the state the task starts from (frame 0)
  virtual const StateT<S>& start() const = 0;
  // copies of the task's world that a policy drives frame by frame (SHAC, PPO, PODS:
  // engine/optim/policy_env.h); errors name the task and what it lacks (a policy, ...)
  virtual Result<std::unique_ptr<PolicyEnvT<S>>> policy_env(const PolicyEnvOptions& options) const = 0;
  // the same world from `start` under another spec (horizon, loss, parameters): receding
  // horizon's plans and the frames it flies
  virtual Result<std::unique_ptr<TaskT>> restart(const StateT<S>& start, const scene::Task& spec) const = 0;
  // this task's loss of a trajectory flown elsewhere (frames t = 0..horizon) under inputs theta
  virtual Result<S> trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const = 0;
};

// the methods that train a task (the CLI's --method, the editor's method combo)
enum class Method {
  bptt,              // every task: TaskT::iterate
  shac,              // short windows over many copies and a critic (engine/optim/shac_task.h)
  pods,              // improved action sequences, the policy regressed onto them (engine/optim/pods.h)
  receding_horizon,  // plans of a few frames, re-planned as they are flown (receding_horizon.h)
};
const char* to_string(Method m);

template <class S>
Result<std::unique_ptr<TaskT<S>>> make_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                            TaskOptions options = {});

// the randomized starts SHAC, PPO and PODS train from: the task's policy spec (start_q_range,
// start_qd_range), env_count copies
inline PolicyEnvOptions training_starts(const scene::Task& task, int env_count = 1) {
  PolicyEnvOptions o;
  o.env_count = env_count;
  o.q_range = task.policy.start_q_range;
  o.qd_range = task.policy.start_qd_range;
  o.root_position_range = task.policy.start_root_position_range;
  o.root_angle_range = task.policy.start_root_angle_range;
  o.world_seed = task.seed;
  return o;
}

// what SHAC, PPO and PODS train on: task.policy_env(options), and one more copy from the task's
// own start (no randomized starts) that their evaluate() runs; errors begin with `who`
template <class S>
struct PolicyEnvPair {
  std::unique_ptr<PolicyEnvT<S>> train, eval;
};
template <class S>
Result<PolicyEnvPair<S>> make_policy_envs(const TaskT<S>& task, const PolicyEnvOptions& options,
                                          const std::string& who) {
  auto train = task.policy_env(options);
  if (!train) return Status::error(who + ": " + train.status().message());
  PolicyEnvOptions one = options;
  one.env_count = 1;
  one.q_range = one.qd_range = 0;
  one.randomize = false;  // evaluated as the papers report: the scene's own parameters
  auto eval = task.policy_env(one);
  if (!eval) return Status::error(who + ": " + eval.status().message());
  return PolicyEnvPair<S>{std::move(train.value()), std::move(eval.value())};
}

}  // namespace adj::optim
