#include "engine/optim/receding_horizon.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

namespace adj::optim {

namespace {

// the blocks of per-frame actuator inputs, in theta order
std::vector<const ParamBlock*> input_blocks(const std::vector<ParamBlock>& blocks) {
  std::vector<const ParamBlock*> out;
  for (const ParamBlock& b : blocks)
    if (b.kind == scene::ParamKind::actuator_control) out.push_back(&b);
  return out;
}

// frame `from` of plan a (entries of every input block) into frame `to` of b; frames past
// a's end repeat its last frame
template <class S>
void copy_frame(const std::vector<S>& a, const std::vector<const ParamBlock*>& ab, int from, std::vector<S>& b,
                const std::vector<const ParamBlock*>& bb, int to) {
  for (size_t k = 0; k < ab.size() && k < bb.size(); ++k) {
    const ParamBlock& x = *ab[k];
    const ParamBlock& y = *bb[k];
    if (x.elements != y.elements || to >= y.steps || x.steps < 1) continue;
    const int f = std::min(from, x.steps - 1);
    for (int e = 0; e < x.elements; ++e)
      b[size_t(y.offset + to * y.elements + e)] = a[size_t(x.offset + f * x.elements + e)];
  }
}

}  // namespace

template <class S>
Result<RecedingHorizonT<S>> RecedingHorizonT<S>::create(const TaskT<S>& task, RecedingHorizonOptions options) {
  const scene::Task& spec = task.task();
  const std::string where = "task '" + spec.name + "', receding horizon: ";
  if (options.window < 1) return Status::error(where + "the window must be >= 1 frame");
  if (options.iterations < 0) return Status::error(where + "iterations must be >= 0");
  if (options.execute < 1 || options.execute > options.window)
    return Status::error(where + "frames executed per plan must be in 1..window");
  if (spec.has_policy) return Status::error(where + "a policy task is a controller already");
  if (std::none_of(task.blocks().begin(), task.blocks().end(),
                   [](const ParamBlock& b) { return b.kind == scene::ParamKind::actuator_control; }))
    return Status::error(where + "needs actuator_control parameters (the inputs it plans)");
  for (const ParamBlock& b : task.blocks())
    if (b.knots > 0)
      return Status::error(where + scene::to_string(b.kind) + (b.object.empty() ? "" : " of '" + b.object + "'") +
                           " has \"knots\"; the planner shifts its plan frame by frame and plans one value a "
                           "frame (remove \"knots\" from the task's parameters for receding horizon)");
  RecedingHorizonT r;
  r.full_ = &task;
  r.task_ = spec;
  r.options_ = options;
  return r;
}

template <class S>
scene::Task RecedingHorizonT<S>::window_task(int frame, int frames) const {
  const int T = task_.horizon;
  const int w = std::min(frames, T - frame);
  scene::Task t = task_;
  t.horizon = w;
  t.loss.clear();
  // the next term still ahead of the window: it counts at the window's end
  int ahead = std::numeric_limits<int>::max();
  for (const scene::LossTerm& l : task_.loss) {
    if (l.kind == scene::LossKind::effort) continue;
    const int s = l.step < 0 ? T : l.step;
    if (s > frame + w) ahead = std::min(ahead, s);
  }
  for (const scene::LossTerm& l : task_.loss) {
    scene::LossTerm c = l;
    if (l.kind == scene::LossKind::effort) {  // over the window's own inputs
      t.loss.push_back(c);
      continue;
    }
    const int s = l.step < 0 ? T : l.step;
    if (s <= frame) continue;  // already past
    if (s <= frame + w) {
      c.step = s - frame;
    } else if (s == ahead) {
      c.step = w;
    } else {
      continue;
    }
    t.loss.push_back(c);
  }
  return t;
}

template <class S>
Result<RecedingHorizonReport<S>> RecedingHorizonT<S>::run(
    const std::function<void(int frame, StateT<S>& state)>& disturb) {
  const auto t0 = std::chrono::steady_clock::now();
  const TaskT<S>& full = *full_;
  const int T = task_.horizon;
  const std::string where = "task '" + task_.name + "', receding horizon";
  auto at = [&](int f, const Status& st) {
    return Status::error(where + ", frame " + std::to_string(f) + ": " + st.message());
  };

  // the inputs applied, in the whole task's layout
  RecedingHorizonReport<S> report;
  report.theta = full.theta();
  const std::vector<const ParamBlock*> full_blocks = input_blocks(full.blocks());
  StateT<S> state = full.start();
  report.states.push_back(state);

  std::vector<S> plan;  // the last plan's inputs, for the warm start
  std::vector<ParamBlock> plan_blocks;
  int shift = 0;  // frames of that plan applied since
  for (int f = 0; f < T;) {
    auto runner = full.restart(state, window_task(f, options_.window));  // the plan starts from the real state
    if (!runner) return at(f, runner.status());
    TaskT<S>& planner = **runner;
    const std::vector<const ParamBlock*> blocks = input_blocks(planner.blocks());
    if (!plan.empty()) {  // warm start: the previous plan, moved on by the frames applied
      std::vector<S> theta = planner.theta();
      const std::vector<const ParamBlock*> prev = input_blocks(plan_blocks);
      for (int t = 0; t < planner.task().horizon; ++t) copy_frame(plan, prev, t + shift, theta, blocks, t);
      planner.set_theta(std::move(theta));
    }
    for (int k = 0; k < options_.iterations; ++k)
      if (auto it = planner.iterate(); !it) return at(f, it.status());
    if (options_.iterations > 0 && planner.task().optimizer.backtrack)  // a last step that raised the loss is undone
      if (auto l = planner.finish(); !l) return at(f, l.status());

    // the plan's first frames flown by the real system, one frame at a time from the state as it is
    const int n = std::min(options_.execute, T - f);
    for (int e = 0; e < n; ++e) {
      if (disturb) disturb(f + e, state);
      auto one = full.restart(state, window_task(f + e, 1));
      if (!one) return at(f + e, one.status());
      std::vector<S> theta = (*one)->theta();
      copy_frame(planner.theta(), blocks, e, theta, input_blocks((*one)->blocks()), 0);
      if (auto l = (*one)->evaluate(theta); !l) return at(f + e, l.status());
      state = (*one)->final_state();
      report.states.push_back(state);
      copy_frame(planner.theta(), blocks, e, report.theta, full_blocks, f + e);
    }
    plan = planner.theta();
    plan_blocks = planner.blocks();
    shift = n;
    f += n;
    ++report.replans;
  }

  Result<S> loss = full.trajectory_loss(report.states, report.theta);
  if (!loss) return loss.status();
  report.loss = double(loss.value());
  report.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

template class RecedingHorizonT<float>;
template class RecedingHorizonT<double>;

}  // namespace adj::optim
