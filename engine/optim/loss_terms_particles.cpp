// The loss rows of particle terms (loss.h): an object's centre of mass, shape and velocity at
// the frame a term reads, and the effort of the particle controls.
#include <cassert>
#include <cmath>
#include <type_traits>

#include "engine/optim/loss.h"

namespace adj::optim {

using scene::LossKind;

template <class S>
Status object_com_weights(const ModelT<S>& m, const scene::ObjectRange& object, std::vector<int>& particles,
                          std::vector<S>& w, const std::vector<int>& subset, const std::string& where) {
  const int count = object.particle_end - object.particle_begin;
  for (std::size_t k = 0; k < subset.size(); ++k)
    if (subset[k] < 0 || subset[k] >= count)
      return Status::error(where + ": particles[" + std::to_string(k) + "] is " + std::to_string(subset[k]) + " but '" +
                           object.name + "' has " + std::to_string(count) + " particles (0.." +
                           std::to_string(count - 1) + ")");
  particles.clear();
  w.clear();
  if (subset.empty())
    for (int i = object.particle_begin; i < object.particle_end; ++i) particles.push_back(i);
  for (int i : subset) particles.push_back(object.particle_begin + i);
  S mass = 0;
  for (int i : particles) mass += m.particle_mass[i];
  for (int i : particles) w.push_back(mass > S(0) ? m.particle_mass[i] / mass : S(1) / S(particles.size()));
  return Status::ok();
}
template Status object_com_weights(const ModelT<float>&, const scene::ObjectRange&, std::vector<int>&,
                                   std::vector<float>&, const std::vector<int>&, const std::string&);
template Status object_com_weights(const ModelT<double>&, const scene::ObjectRange&, std::vector<int>&,
                                   std::vector<double>&, const std::vector<int>&, const std::string&);

namespace {

template <class S>
using Term = LossTermT<S>;

template <class S, class T>
vec3<T> com(const Term<S>& t, const std::vector<vec3<T>>& x) {
  vec3<T> c;
  for (std::size_t k = 0; k < x.size(); ++k) c += x[k] * T(t.w[k]);
  return c;
}

// create: the object's particles (all, or those the term lists) and their centre-of-mass weights
template <class S>
Status create_particles(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  return object_com_weights(b.cs.model, *b.object, t.particles, t.w, spec.particles, b.where);
}

template <class S>
Status create_target(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = create_particles(b, spec, t); !s) return s;
  const scene::ObjectRange* target = b.cs.find(spec.target);
  if (!target || target->kind != scene::ObjectKind::target)
    return Status::error(b.where + ": '" + spec.target + "' is not a target object");
  t.target = {S(target->target[0]), S(target->target[1]), S(target->target[2])};
  t.label += " -> " + spec.target;
  if (spec.kind == LossKind::shape && !target->target_points.empty()) {
    if (target->target_points.size() != t.particles.size())
      return Status::error(b.where + ": target '" + spec.target + "' lists " +
                           std::to_string(target->target_points.size()) + " points but '" + spec.object + "' has " +
                           std::to_string(t.particles.size()) + " particles");
    for (const scene::V3& p : target->target_points) t.points.push_back({S(p[0]), S(p[1]), S(p[2])});
  }
  return Status::ok();
}

template <class S>
Status create_axis(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = create_particles(b, spec, t); !s) return s;
  double len = std::sqrt(spec.axis[0] * spec.axis[0] + spec.axis[1] * spec.axis[1] + spec.axis[2] * spec.axis[2]);
  if (!(len > 0)) return Status::error(b.where + ": the axis is zero");
  t.axis = {S(spec.axis[0] / len), S(spec.axis[1] / len), S(spec.axis[2] / len)};
  return Status::ok();
}

template <class S>
Status create_effort(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  for (const ParamBlock& p : b.params.blocks())
    if (is_control(p.kind) && (spec.object.empty() || p.object == spec.object)) {
      if (p.knots > 0)
        return Status::error(b.where + ": effort measures one value a frame; " + scene::to_string(p.kind) + " of '" +
                             p.object + "' has \"knots\" (drop the effort term or the knots)");
      t.blocks.push_back({p.offset, p.offset + p.count});
    }
  if (t.blocks.empty())
    return Status::error(b.where + ": no control parameters" +
                         (spec.object.empty() ? std::string() : " of '" + spec.object + "'") + " to measure");
  return Status::ok();
}

template <class S>
void check_observed(const Term<S>& t) {
  assert(!t.q.empty() && !t.q0.empty() && "value() before observe()");
  (void)t;
}

template <class S>
S value_position(const LossT<S>&, const Term<S>& t, const std::vector<S>&) {
  check_observed(t);
  return length_sq(com(t, t.q) - t.target);
}

template <class S>
S value_distance(const LossT<S>&, const Term<S>& t, const std::vector<S>&) {
  check_observed(t);
  return -dot(com(t, t.q) - com(t, t.q0), t.axis);
}

template <class S>
S value_shape(const LossT<S>&, const Term<S>& t, const std::vector<S>&) {
  check_observed(t);
  S v = 0;
  vec3<S> off = t.target - com(t, t.q0);
  for (std::size_t k = 0; k < t.q.size(); ++k)
    v += t.points.empty() ? length_sq(t.q[k] - t.q0[k] - off) : length_sq(t.q[k] - t.points[k]);
  return v / S(t.q.size());
}

template <class S>
S value_velocity(const LossT<S>&, const Term<S>& t, const std::vector<S>&) {
  check_observed(t);
  return length_sq(com(t, t.qd));
}

// the particles a seed reads: positions at frame 0 and at the term's frame, velocities at it
template <class T>
struct Particles {
  const std::vector<vec3<T>>* q0;
  const std::vector<vec3<T>>* q;
  const std::vector<vec3<T>>* qd;
  std::vector<vec3<T>> own0, own, ownd;  // when gathered from states or lifted
};

template <class S, class T>
Particles<T> particles_of(const Term<S>& t, int step, const SeedFramesT<T>& f) {
  Particles<T> p;
  if (f.recorded) {
    if constexpr (std::is_same_v<T, S>) {
      p.q0 = &t.q0, p.q = &t.q, p.qd = &t.qd;
      return p;
    } else {
      for (const vec3<S>& x : t.q0) p.own0.push_back(lift<T>(x));
      for (const vec3<S>& x : t.q) p.own.push_back(lift<T>(x));
      for (const vec3<S>& x : t.qd) p.ownd.push_back(lift<T>(x));
    }
  } else {
    assert(t.frame == step && "seed(t, first, at, adj): every term reads frame t");
    (void)step;
    for (int i : t.particles) {
      p.own0.push_back(f.first->particle_q[i]);
      p.own.push_back(f.at->particle_q[i]);
      p.ownd.push_back(f.at->particle_qd[i]);
    }
  }
  p.q0 = &p.own0, p.q = &p.own, p.qd = &p.ownd;
  return p;
}

template <class S, class T>
void add_q(const Term<S>& t, std::size_t k, const vec3<T>& g, StateT<T>& adj) {
  adj.particle_q[t.particles[k]] += g;
}

template <class S, class T>
void seed_position(const LossT<S>&, const Term<S>& t, int step, const SeedFramesT<T>& f, StateT<T>& adj) {
  if (step != t.frame) return;
  const Particles<T> p = particles_of(t, step, f);
  vec3<T> g = (com(t, *p.q) - lift<T>(t.target)) * T(S(2) * t.weight);
  for (std::size_t k = 0; k < t.particles.size(); ++k) add_q(t, k, g * T(t.w[k]), adj);
}

template <class S, class T>
void seed_distance(const LossT<S>&, const Term<S>& t, int step, const SeedFramesT<T>&, StateT<T>& adj) {
  const vec3<T> axis = lift<T>(t.axis);
  const std::size_t n = t.particles.size();
  if (step == t.frame)
    for (std::size_t k = 0; k < n; ++k) add_q(t, k, axis * T(-t.weight * t.w[k]), adj);
  // the initial state's part
  if (step == 0)
    for (std::size_t k = 0; k < n; ++k) add_q(t, k, axis * T(t.weight * t.w[k]), adj);
}

template <class S, class T>
void seed_shape(const LossT<S>&, const Term<S>& t, int step, const SeedFramesT<T>& f, StateT<T>& adj) {
  if (step != t.frame && !(step == 0 && t.points.empty())) return;
  const Particles<T> p = particles_of(t, t.frame, f);
  const std::vector<vec3<T>>&q0 = *p.q0, &q = *p.q;
  const std::size_t n = t.particles.size();
  const vec3<T> target = lift<T>(t.target);
  if (step == t.frame) {
    vec3<T> off = target - com(t, q0);
    for (std::size_t k = 0; k < n; ++k) {
      vec3<T> r = t.points.empty() ? q[k] - q0[k] - off : q[k] - lift<T>(t.points[k]);
      add_q(t, k, r * T(S(2) * t.weight / S(n)), adj);
    }
  }
  // the initial state's part: it places the shape the term compares against
  if (step == 0 && t.points.empty()) {
    vec3<T> off = target - com(t, q0), sum;
    std::vector<vec3<T>> r(n);
    for (std::size_t k = 0; k < n; ++k) sum += (r[k] = q[k] - q0[k] - off);
    T c = T(S(2) * t.weight / S(n));
    for (std::size_t k = 0; k < n; ++k) add_q(t, k, (sum * T(t.w[k]) - r[k]) * c, adj);
  }
}

template <class S, class T>
void seed_velocity(const LossT<S>&, const Term<S>& t, int step, const SeedFramesT<T>& f, StateT<T>& adj) {
  if (step != t.frame) return;
  const Particles<T> p = particles_of(t, step, f);
  vec3<T> g = com(t, *p.qd) * T(S(2) * t.weight);
  for (std::size_t k = 0; k < t.particles.size(); ++k) adj.particle_qd[t.particles[k]] += g * T(t.w[k]);
}

}  // namespace

template <class S>
const std::vector<LossRowT<S>>& particle_loss_rows() {
  static const std::vector<LossRowT<S>> rows = {
      ADJ_LOSS_ROW(particles, position, create_target, value_position, &seed_position),
      ADJ_LOSS_ROW(particles, distance, create_axis, value_distance, &seed_distance),
      ADJ_LOSS_ROW(particles, shape, create_target, value_shape, &seed_shape),
      ADJ_LOSS_ROW(particles, velocity, create_particles, value_velocity, &seed_velocity),
      LossRowT<S>{LossKind::effort, TermSide::particles, &create_effort<S>, &effort_value<S>, nullptr, nullptr},
  };
  return rows;
}

template const std::vector<LossRowT<float>>& particle_loss_rows();
template const std::vector<LossRowT<double>>& particle_loss_rows();

}  // namespace adj::optim
