#include "engine/optim/receding_horizon.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "engine/optim/rigid_loss.h"
#include "engine/optim/rigid_parameters.h"
#include "engine/rigid/rigid_solver.h"

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
Result<RecedingHorizonT<S>> RecedingHorizonT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                        RecedingHorizonOptions options) {
  const std::string where = "task '" + task.name + "', receding horizon: ";
  if (options.window < 1) return Status::error(where + "the window must be >= 1 frame");
  if (options.iterations < 0) return Status::error(where + "iterations must be >= 0");
  if (options.execute < 1 || options.execute > options.window)
    return Status::error(where + "frames executed per plan must be in 1..window");
  if (task.has_policy) return Status::error(where + "a policy task is a controller already");
  if (std::none_of(task.parameters.begin(), task.parameters.end(),
                   [](const scene::ParamSpec& p) { return p.kind == scene::ParamKind::actuator_control; }))
    return Status::error(where + "needs actuator_control parameters (the inputs it plans)");
  auto full = RigidTaskRunnerT<S>::create(cs, task);  // the task itself must make sense
  if (!full) return full.status();
  RecedingHorizonT r;
  r.cs_ = &cs;
  r.task_ = task;
  r.options_ = options;
  return r;
}

template <class S>
scene::Task RecedingHorizonT<S>::window_task(int frame) const {
  const int T = task_.horizon;
  const int w = std::min(options_.window, T - frame);
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
  const scene::CompiledSceneT<S>& cs = *cs_;
  const int T = task_.horizon;
  const std::string where = "task '" + task_.name + "', receding horizon";

  // the whole task: the layout of the inputs applied, and the loss of the real trajectory
  auto full_params = RigidParametersT<S>::create(cs, task_);
  if (!full_params) return full_params.status();
  auto full_loss = RigidLossT<S>::create(cs, task_, *full_params);
  if (!full_loss) return full_loss.status();
  full_loss->bind(&cs.model.rigid);
  const std::vector<const ParamBlock*> full_blocks = input_blocks(full_params->blocks());

  RecedingHorizonReport<S> report;
  report.theta = full_params->initial(cs);
  RigidSolverT<S> solver({.substeps = cs.substeps});
  StateT<S> state = cs.model.make_state(), next = state;
  report.states.push_back(state);

  scene::CompiledSceneT<S> sub = cs;  // the plans start from the real state
  std::vector<S> plan;                // the last plan's inputs, for the warm start
  std::vector<ParamBlock> plan_blocks;
  int shift = 0;  // frames of that plan applied since
  ModelT<S> plan_model;
  StateT<S> plan_initial;
  std::vector<ControlT<S>> controls;
  for (int f = 0; f < T;) {
    sub.model.joint_q = state.joint_q;
    sub.model.joint_qd = state.joint_qd;
    auto runner = RigidTaskRunnerT<S>::create(sub, window_task(f));
    if (!runner) return Status::error(where + ", frame " + std::to_string(f) + ": " + runner.status().message());
    const std::vector<const ParamBlock*> blocks = input_blocks(runner->parameters().blocks());
    if (!plan.empty()) {  // warm start: the previous plan, moved on by the frames applied
      std::vector<S> theta = runner->theta();
      const std::vector<const ParamBlock*> prev = input_blocks(plan_blocks);
      for (int t = 0; t < runner->task().horizon; ++t) copy_frame(plan, prev, t + shift, theta, blocks, t);
      runner->set_theta(std::move(theta));
    }
    for (int k = 0; k < options_.iterations; ++k)
      if (auto it = runner->iterate(); !it)
        return Status::error(where + ", frame " + std::to_string(f) + ": " + it.status().message());

    // apply the plan's first frames to the real system (apply() edits a copy of the model)
    plan_model = cs.model;
    plan_initial = state;
    runner->parameters().apply(runner->theta(), cs.model.rigid, plan_model, plan_initial, controls);
    const int n = std::min(options_.execute, T - f);
    for (int e = 0; e < n; ++e) {
      if (disturb) disturb(f + e, state);
      const ControlT<S>& c = controls[std::min(size_t(e), controls.size() - 1)];
      if (Status st = solver.step(cs.model.rigid, state, next, c, cs.frame_dt); !st)
        return Status::error(where + ", frame " + std::to_string(f + e) + ": " + st.message());
      std::swap(state, next);
      report.states.push_back(state);
      copy_frame(runner->theta(), blocks, e, report.theta, full_blocks, f + e);
    }
    plan = runner->theta();
    plan_blocks = runner->parameters().blocks();
    shift = n;
    f += n;
    ++report.replans;
  }

  full_loss->begin();
  for (int t = 0; t <= T; ++t) full_loss->observe(t, report.states[size_t(t)]);
  report.loss = double(full_loss->value(report.theta));
  report.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

template class RecedingHorizonT<float>;
template class RecedingHorizonT<double>;

}  // namespace adj::optim
