#include "app/editor/shac_run.h"

#include <chrono>

#include "engine/optim/policy_env.h"

namespace adj::editor {

Result<optim::IterationStats> PolicyRun::iterate() {
  const auto t0 = std::chrono::steady_clock::now();
  // the policy as it is, from the task's start: the loss before this iteration's step
  std::vector<State> frames{start()};
  auto cost = episode(frames);
  if (!cost) return cost.status();
  auto shown = train();
  if (!shown) return shown.status();
  frames_ = std::move(frames);
  optim::IterationStats it;
  it.iteration = int(history_.size());
  it.loss = double(*cost);
  it.grad_norm = shown->shown;
  it.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  history_.push_back(it);
  train_returns_.push_back(shown->train_return);
  return it;
}

ShacRun::ShacRun(optim::BatchShacTrainerT<float> trainer, scene::Task task)
    : PolicyRun(std::move(task)), trainer_(std::move(trainer)) {
  initial_ = trainer_.eval_env().state(0);  // the eval copy holds the task's start until its first episode
}

Result<float> ShacRun::episode(std::vector<State>& frames) {
  return trainer_.evaluate([&](int, const optim::PolicyEnvT<float>& env) { frames.push_back(env.state(0)); });
}

Result<PolicyRun::Trained> ShacRun::train() {
  auto st = trainer_.step();
  if (!st) return st.status();
  return Trained{st->grad_norm, st->train_return};
}

PodsRun::PodsRun(optim::PodsTrainerT<float> trainer, scene::Task task)
    : PolicyRun(std::move(task)), trainer_(std::move(trainer)) {
  initial_ = trainer_.eval_env().state(0);
}

Result<float> PodsRun::episode(std::vector<State>& frames) {
  return trainer_.evaluate([&](int, const optim::PolicyEnvT<float>& env) { frames.push_back(env.state(0)); });
}

Result<PolicyRun::Trained> PodsRun::train() {
  auto st = trainer_.step();
  if (!st) return st.status();
  return Trained{st->step_rms};
}

}  // namespace adj::editor
