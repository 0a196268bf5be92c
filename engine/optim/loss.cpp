#include "engine/optim/loss.h"

#include <cassert>
#include <type_traits>

namespace adj::optim {

using scene::LossKind;

template <class S>
Result<LossT<S>> LossT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                  const ParametersT<S>& params) {
  LossT l;
  if (task.loss.empty()) return Status::error("task '" + task.name + "': no loss terms");
  l.model_ = &cs.model.rigid;
  l.up_ = cs.up_axis;
  const TaskSides sides = split_task(cs, task);
  for (TermSide side : {TermSide::bodies, TermSide::particles}) {
    const bool bodies = side == TermSide::bodies;
    const scene::Task& st = bodies ? sides.robot : sides.particles;
    const std::vector<LossRowT<S>>& rows = bodies ? body_loss_rows<S>() : particle_loss_rows<S>();
    for (std::size_t n = 0; n < st.loss.size(); ++n) {
      const scene::LossTerm& spec = st.loss[n];
      const std::string where =
          "task '" + task.name + "': loss[" + std::to_string(n) + "] (" + scene::to_string(spec.kind) + ")";
      Term t;
      t.kind = spec.kind;
      t.weight = S(spec.weight);
      for (const LossRowT<S>& r : rows)
        if (r.kind == spec.kind) t.row = &r;
      const scene::ObjectRange* obj = cs.find(spec.object);
      if (bodies) {
        // a robot's terms: every frame up to the horizon, the robot and its body in the label
        t.frame = spec.step < 0 ? task.horizon : spec.step;
        if (t.frame > task.horizon) return Status::error(where + ": step is past the horizon");
        t.label = std::string(scene::to_string(spec.kind)) + "[" + spec.object +
                  (spec.body.empty() ? "" : "." + spec.body) + "]";
        if (spec.kind != LossKind::effort && (!obj || obj->kind != scene::ObjectKind::robot))
          return Status::error(where + ": \"" + spec.object + "\" is not a robot");
        if (!t.row)
          return Status::error(where +
                               ": not defined for robots (position, distance, joint, effort, cartpole, height, "
                               "upright, speed, reach, forward_velocity, up_projection, heading, height_reward, "
                               "alive are)");
      } else {
        // an object's particles: the label closes after the row names its target
        t.label = std::string(scene::to_string(spec.kind)) + "[" + spec.object;
        if (!t.row)
          return Status::error(where + ": not defined for particles (position, distance, shape, velocity, effort are)");
        if (spec.kind != LossKind::effort) {
          if (!obj) return Status::error(where + ": no object named '" + spec.object + "'");
          if (obj->particle_end <= obj->particle_begin)
            return Status::error(where + ": object '" + spec.object + "' has no particles");
          t.frame = spec.step < 0 ? task.horizon : spec.step;
          if (spec.step < -1 || t.frame > task.horizon)
            return Status::error(where + ": step " + std::to_string(spec.step) + " outside the horizon 0.." +
                                 std::to_string(task.horizon) + " (-1 = last)");
        }
      }
      if (Status s = t.row->create(LossBuildT<S>{cs, st, params, obj, where}, spec, t); !s) return s;
      if (!bodies) t.label += "]";
      // a robot policy task's effort without actuator inputs to measure: the policy's outputs
      if (bodies && spec.kind == LossKind::effort && t.blocks.empty()) l.action_effort_ += S(spec.weight);
      ++l.side_terms_[int(side)];
      l.terms_.push_back(std::move(t));
    }
  }
  l.term_values_.assign(l.terms_.size(), S(0));
  return l;
}

template <class S>
void LossT<S>::begin() {
  for (Term& t : terms_) {
    t.q0.clear();
    t.q.clear();
    t.qd.clear();
  }
  q_.clear();
  qd_.clear();
}

template <class S>
void LossT<S>::observe(int step, const StateT<S>& s) {
  // the particle terms keep their particles at frame 0 and at the frame they read
  for (Term& t : terms_) {
    if (t.particles.empty()) continue;
    auto take = [&](std::vector<vec3<S>>& dst, const Array<vec3<S>>& src) {
      dst.resize(t.particles.size());
      for (std::size_t k = 0; k < t.particles.size(); ++k) dst[k] = src[t.particles[k]];
    };
    if (step == 0) take(t.q0, s.particle_q);
    if (step == t.frame) {
      take(t.q, s.particle_q);
      take(t.qd, s.particle_qd);
    }
  }
  // the body terms read the joints of any frame
  if (!has_side(TermSide::bodies)) return;
  if (int(q_.size()) <= step) q_.resize(step + 1), qd_.resize(step + 1);
  q_[step] = s.joint_q;
  qd_[step] = s.joint_qd;
}

template <class S>
S LossT<S>::value(const std::vector<S>& theta) {
  term_values_.assign(terms_.size(), S(0));
  // each side summed from zero, then the two sums added
  S total[2] = {S(0), S(0)};
  for (std::size_t n = 0; n < terms_.size(); ++n) {
    const Term& t = terms_[n];
    term_values_[n] = t.weight * t.row->value(*this, t, theta);
    total[int(t.row->side)] += term_values_[n];
  }
  if (!has_side(TermSide::particles)) return total[int(TermSide::bodies)];
  if (!has_side(TermSide::bodies)) return total[int(TermSide::particles)];
  return total[int(TermSide::bodies)] + total[int(TermSide::particles)];
}

template <class S>
template <class T>
void LossT<S>::seed_frames(int step, const SeedFramesT<T>& f, StateT<T>& adj) const {
  for (const Term& t : terms_) {
    if constexpr (std::is_same_v<T, S>) {
      if (t.row->seed) t.row->seed(*this, t, step, f, adj);
    } else {
      if (t.row->seed_tangent) t.row->seed_tangent(*this, t, step, f, adj);
    }
  }
}

template <class S>
void LossT<S>::seed(int step, StateT<S>& adj) const {
  seed_frames(step, SeedFramesT<S>{nullptr, nullptr, true}, adj);
}

template <class S>
template <class T>
void LossT<S>::seed(int step, const StateT<T>& state, StateT<T>& adj) const {
  seed_frames(step, SeedFramesT<T>{nullptr, &state, true}, adj);
}

template <class S>
template <class T>
void LossT<S>::seed(int step, const StateT<T>& first, const StateT<T>& at, StateT<T>& adj) const {
  seed_frames(step, SeedFramesT<T>{&first, &at, false}, adj);
}

template <class S>
void LossT<S>::add_effort(const std::vector<S>& theta, std::vector<S>& grad) const {
  for (const Term& t : terms_)
    for (auto [a, b] : t.blocks)
      for (int i = a; i < b; ++i) grad[i] += S(2) * t.weight * theta[i];
}

template class LossT<float>;
template class LossT<double>;
#define ADJ_LOSS_SEEDS(S, T)                                             \
  template void LossT<S>::seed(int, const StateT<T>&, StateT<T>&) const; \
  template void LossT<S>::seed(int, const StateT<T>&, const StateT<T>&, StateT<T>&) const;
using TangentF = Dual<float, 1>;
using TangentD = Dual<double, 1>;
ADJ_LOSS_SEEDS(float, float)
ADJ_LOSS_SEEDS(double, double)
ADJ_LOSS_SEEDS(float, TangentF)
ADJ_LOSS_SEEDS(double, TangentD)

}  // namespace adj::optim
