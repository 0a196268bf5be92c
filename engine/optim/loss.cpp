#include "engine/optim/loss.h"

#include <cassert>
#include <cmath>

namespace adj::optim {

using scene::LossKind;

template <class S>
Result<LossT<S>> LossT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                  const ParametersT<S>& params) {
  LossT l;
  if (task.loss.empty()) return Status::error("task '" + task.name + "': no loss terms");
  const ModelT<S>& m = cs.model;
  for (std::size_t n = 0; n < task.loss.size(); ++n) {
    const scene::LossTerm& spec = task.loss[n];
    std::string where =
        "task '" + task.name + "': loss[" + std::to_string(n) + "] (" + scene::to_string(spec.kind) + ")";
    Term t;
    t.kind = spec.kind;
    t.weight = S(spec.weight);
    t.label = std::string(scene::to_string(spec.kind)) + "[" + spec.object;
    if (spec.kind == LossKind::effort) {
      for (const ParamBlock& b : params.blocks())
        if (is_control(b.kind) && (spec.object.empty() || b.object == spec.object))
          t.blocks.push_back({b.offset, b.offset + b.count});
      if (t.blocks.empty())
        return Status::error(where + ": no control parameters" +
                             (spec.object.empty() ? std::string() : " of '" + spec.object + "'") + " to measure");
      t.label += "]";
      l.terms_.push_back(std::move(t));
      continue;
    }
    const scene::ObjectRange* obj = cs.find(spec.object);
    if (!obj) return Status::error(where + ": no object named '" + spec.object + "'");
    if (obj->particle_end <= obj->particle_begin)
      return Status::error(where + ": object '" + spec.object + "' has no particles");
    t.frame = spec.step < 0 ? task.horizon : spec.step;
    if (spec.step < -1 || t.frame > task.horizon)
      return Status::error(where + ": step " + std::to_string(spec.step) + " outside the horizon 0.." +
                           std::to_string(task.horizon) + " (-1 = last)");
    S mass = 0;
    for (int i = obj->particle_begin; i < obj->particle_end; ++i) {
      t.particles.push_back(i);
      mass += m.particle_mass[i];
    }
    for (int i : t.particles)
      t.w.push_back(mass > S(0) ? m.particle_mass[i] / mass : S(1) / S(t.particles.size()));
    if (spec.kind == LossKind::position || spec.kind == LossKind::shape) {
      const scene::ObjectRange* target = cs.find(spec.target);
      if (!target || target->kind != scene::ObjectKind::target)
        return Status::error(where + ": '" + spec.target + "' is not a target object");
      t.target = {S(target->target[0]), S(target->target[1]), S(target->target[2])};
      t.label += " -> " + spec.target;
      if (spec.kind == LossKind::shape && !target->target_points.empty()) {
        if (target->target_points.size() != t.particles.size())
          return Status::error(where + ": target '" + spec.target + "' lists " +
                               std::to_string(target->target_points.size()) + " points but '" + spec.object +
                               "' has " + std::to_string(t.particles.size()) + " particles");
        for (const scene::V3& p : target->target_points) t.points.push_back({S(p[0]), S(p[1]), S(p[2])});
      }
    }
    if (spec.kind == LossKind::distance) {
      double len = std::sqrt(spec.axis[0] * spec.axis[0] + spec.axis[1] * spec.axis[1] + spec.axis[2] * spec.axis[2]);
      if (!(len > 0)) return Status::error(where + ": the axis is zero");
      t.axis = {S(spec.axis[0] / len), S(spec.axis[1] / len), S(spec.axis[2] / len)};
    }
    t.label += "]";
    l.terms_.push_back(std::move(t));
  }
  l.term_values_.assign(l.terms_.size(), S(0));
  return l;
}

template <class S>
template <class T>
vec3<T> LossT<S>::com(const Term& t, const std::vector<vec3<T>>& x) {
  vec3<T> c;
  for (std::size_t k = 0; k < x.size(); ++k) c += x[k] * T(t.w[k]);
  return c;
}

template <class S>
void LossT<S>::begin() {
  for (Term& t : terms_) {
    t.q0.clear();
    t.q.clear();
    t.qd.clear();
  }
}

template <class S>
void LossT<S>::observe(int step, const StateT<S>& s) {
  for (Term& t : terms_) {
    if (t.kind == LossKind::effort) continue;
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
}

template <class S>
S LossT<S>::value(const std::vector<S>& theta) {
  term_values_.assign(terms_.size(), S(0));
  S total = 0;
  for (std::size_t n = 0; n < terms_.size(); ++n) {
    const Term& t = terms_[n];
    assert((t.kind == LossKind::effort || (!t.q.empty() && !t.q0.empty())) && "value() before observe()");
    S v = 0;
    switch (t.kind) {
      case LossKind::position: v = length_sq(com(t, t.q) - t.target); break;
      case LossKind::distance: v = -dot(com(t, t.q) - com(t, t.q0), t.axis); break;
      case LossKind::shape: {
        vec3<S> off = t.target - com(t, t.q0);
        for (std::size_t k = 0; k < t.q.size(); ++k)
          v += t.points.empty() ? length_sq(t.q[k] - t.q0[k] - off) : length_sq(t.q[k] - t.points[k]);
        v /= S(t.q.size());
        break;
      }
      case LossKind::velocity: v = length_sq(com(t, t.qd)); break;
      case LossKind::effort:
        for (auto [a, b] : t.blocks)
          for (int i = a; i < b; ++i) v += theta[i] * theta[i];
        break;
      default:  // robot terms (engine/optim/rigid_loss.h), refused by create()
        break;
    }
    term_values_[n] = t.weight * v;
    total += term_values_[n];
  }
  return total;
}

template <class S>
template <class T>
void LossT<S>::seed_term(const Term& t, int step, const std::vector<vec3<T>>& q0, const std::vector<vec3<T>>& q,
                         const std::vector<vec3<T>>& qd, StateT<T>& adj) {
  const std::size_t n = t.particles.size();
  auto add_q = [&](std::size_t k, const vec3<T>& g) { adj.particle_q[t.particles[k]] += g; };
  const vec3<T> target = lift<T>(t.target), axis = lift<T>(t.axis);
  if (step == t.frame) {
    switch (t.kind) {
      case LossKind::position: {
        vec3<T> g = (com(t, q) - target) * T(S(2) * t.weight);
        for (std::size_t k = 0; k < n; ++k) add_q(k, g * T(t.w[k]));
        break;
      }
      case LossKind::distance:
        for (std::size_t k = 0; k < n; ++k) add_q(k, axis * T(-t.weight * t.w[k]));
        break;
      case LossKind::shape: {
        vec3<T> off = target - com(t, q0);
        for (std::size_t k = 0; k < n; ++k) {
          vec3<T> r = t.points.empty() ? q[k] - q0[k] - off : q[k] - lift<T>(t.points[k]);
          add_q(k, r * T(S(2) * t.weight / S(n)));
        }
        break;
      }
      case LossKind::velocity: {
        vec3<T> g = com(t, qd) * T(S(2) * t.weight);
        for (std::size_t k = 0; k < n; ++k) adj.particle_qd[t.particles[k]] += g * T(t.w[k]);
        break;
      }
      case LossKind::effort:
        break;
      default:
        break;  // robot terms, refused by create()
    }
  }
  // terms that also read the initial state
  if (step == 0) {
    if (t.kind == LossKind::distance)
      for (std::size_t k = 0; k < n; ++k) add_q(k, axis * T(t.weight * t.w[k]));
    if (t.kind == LossKind::shape && t.points.empty()) {
      vec3<T> off = target - com(t, q0), sum;
      std::vector<vec3<T>> r(n);
      for (std::size_t k = 0; k < n; ++k) sum += (r[k] = q[k] - q0[k] - off);
      T c = T(S(2) * t.weight / S(n));
      for (std::size_t k = 0; k < n; ++k) add_q(k, (sum * T(t.w[k]) - r[k]) * c);
    }
  }
}

template <class S>
void LossT<S>::seed(int step, StateT<S>& adj) const {
  for (const Term& t : terms_)
    if (t.kind != LossKind::effort) seed_term(t, step, t.q0, t.q, t.qd, adj);
}

template <class S>
template <class T>
void LossT<S>::seed(int step, const StateT<T>& first, const StateT<T>& at, StateT<T>& adj) const {
  std::vector<vec3<T>> q0, q, qd;
  for (const Term& t : terms_) {
    if (t.kind == LossKind::effort) continue;
    assert(t.frame == step && "seed(t, first, at, adj): every term reads frame t");
    q0.clear(), q.clear(), qd.clear();
    for (int i : t.particles) {
      q0.push_back(first.particle_q[i]);
      q.push_back(at.particle_q[i]);
      qd.push_back(at.particle_qd[i]);
    }
    seed_term(t, step, q0, q, qd, adj);
  }
}

template <class S>
void LossT<S>::add_effort(const std::vector<S>& theta, std::vector<S>& grad) const {
  for (const Term& t : terms_)
    if (t.kind == LossKind::effort)
      for (auto [a, b] : t.blocks)
        for (int i = a; i < b; ++i) grad[i] += S(2) * t.weight * theta[i];
}

template <class S>
std::string LossT<S>::term_name(int k) const {
  return terms_[k].label;
}

template class LossT<float>;
template class LossT<double>;
template void LossT<float>::seed(int, const StateT<float>&, const StateT<float>&, StateT<float>&) const;
template void LossT<double>::seed(int, const StateT<double>&, const StateT<double>&, StateT<double>&) const;
template void LossT<float>::seed(int, const StateT<Dual<float, 1>>&, const StateT<Dual<float, 1>>&,
                                 StateT<Dual<float, 1>>&) const;
template void LossT<double>::seed(int, const StateT<Dual<double, 1>>&, const StateT<Dual<double, 1>>&,
                                  StateT<Dual<double, 1>>&) const;

}  // namespace adj::optim
