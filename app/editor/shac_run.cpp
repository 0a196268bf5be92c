#include "app/editor/shac_run.h"

#include <chrono>

#include "engine/optim/policy_env.h"

namespace adj::editor {

ShacRun::ShacRun(optim::BatchShacTrainerT<float> trainer, scene::Task task)
    : trainer_(std::move(trainer)), task_(std::move(task)) {
  // the eval copy holds the task's start until its first episode
  initial_ = trainer_.eval_env().state(0);
}

Result<optim::IterationStats> ShacRun::iterate() {
  const auto t0 = std::chrono::steady_clock::now();
  // the policy as it is, from the task's start: the loss before this window's step
  std::vector<State> frames{initial_};
  auto cost = trainer_.evaluate([&](int, const optim::PolicyEnvT<float>& env) { frames.push_back(env.state(0)); });
  if (!cost) return cost.status();
  auto st = trainer_.step();
  if (!st) return st.status();
  last_ = *st;
  frames_ = std::move(frames);
  optim::IterationStats it;
  it.iteration = int(history_.size());
  it.loss = double(*cost);
  it.grad_norm = st->grad_norm;
  it.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  history_.push_back(it);
  return it;
}

}  // namespace adj::editor
