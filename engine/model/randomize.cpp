#include "engine/model/randomize.h"

#include <cmath>
#include <cstdio>

#include "engine/model/model.h"
#include "engine/model/rigid_model.h"

namespace adj {

namespace {

// splitmix64's finalizer: a bijection that spreads every input bit over the output
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// a number in [0, 1) from (seed, world, quantity) alone: 53 bits of the mixed key (the same on
// every platform and library, unlike std::uniform_real_distribution)
double unit(std::uint64_t seed, int world, int q) {
  std::uint64_t h = mix(mix(mix(seed) ^ std::uint64_t(std::uint32_t(world))) ^ std::uint64_t(q));
  return double(h >> 11) * 0x1.0p-53;
}

template <class S, class A>
void scale(A& a, double f) {
  for (auto& x : a) x = x * S(f);
}

double factor(const Randomization& r, std::uint64_t seed, int world, RandomRange Randomization::*p) {
  const auto& all = random_quantities();
  for (std::size_t q = 0; q < all.size(); ++q)
    if (all[q].range == p) return random_factor(r, seed, world, int(q));
  return 1.0;
}

}  // namespace

bool Randomization::active() const {
  for (const RandomQuantity& q : random_quantities())
    if ((this->*q.range).active()) return true;
  return false;
}

const std::vector<RandomQuantity>& random_quantities() {
  static const std::vector<RandomQuantity> q = {
      {"body_mass", &Randomization::body_mass},
      {"particle_mass", &Randomization::particle_mass},
      {"contact_ke", &Randomization::contact_ke},
      {"contact_kd", &Randomization::contact_kd},
      {"contact_mu", &Randomization::contact_mu},
      {"joint_damping", &Randomization::joint_damping},
      {"joint_armature", &Randomization::joint_armature},
      {"actuator_kp", &Randomization::actuator_kp},
      {"actuator_kd", &Randomization::actuator_kd},
      {"actuator_strength", &Randomization::actuator_strength},
      {"gravity", &Randomization::gravity},
  };
  return q;
}

double random_factor(const Randomization& r, std::uint64_t seed, int world, int q) {
  const RandomRange& range = r.*(random_quantities()[std::size_t(q)].range);
  if (!range.active()) return 1.0;
  const double u = unit(seed, world, q);
  if (range.log_uniform) return std::exp(std::log(range.lo) + u * (std::log(range.hi) - std::log(range.lo)));
  return range.lo + u * (range.hi - range.lo);
}

template <class S>
void randomize_world(const Randomization& r, std::uint64_t seed, int world, RigidModelT<S>& m) {
  auto f = [&](RandomRange Randomization::*p) { return factor(r, seed, world, p); };
  const double mass = f(&Randomization::body_mass);
  scale<S>(m.body_mass, mass);
  for (auto& I : m.body_inertia)
    for (auto& row : I.m)
      for (S& x : row) x = x * S(mass);
  m.contact_ke *= S(f(&Randomization::contact_ke));
  m.contact_kd *= S(f(&Randomization::contact_kd));
  m.contact_mu *= S(f(&Randomization::contact_mu));
  scale<S>(m.dof_damping, f(&Randomization::joint_damping));
  scale<S>(m.dof_armature, f(&Randomization::joint_armature));
  scale<S>(m.actuator_kp, f(&Randomization::actuator_kp));
  scale<S>(m.actuator_kd, f(&Randomization::actuator_kd));
  scale<S>(m.actuator_gear, f(&Randomization::actuator_strength));
  m.gravity = m.gravity * S(f(&Randomization::gravity));
}

template <class S>
void randomize_world(const Randomization& r, std::uint64_t seed, int world, ModelT<S>& m) {
  auto f = [&](RandomRange Randomization::*p) { return factor(r, seed, world, p); };
  scale<S>(m.particle_mass, f(&Randomization::particle_mass));
  m.contact_ke *= S(f(&Randomization::contact_ke));
  m.contact_kd *= S(f(&Randomization::contact_kd));
  m.contact_mu *= S(f(&Randomization::contact_mu));
  m.gravity = m.gravity * S(f(&Randomization::gravity));
  randomize_world(r, seed, world, m.rigid);
}

std::string describe_world(const Randomization& r, std::uint64_t seed, int world) {
  std::string out;
  const auto& all = random_quantities();
  for (std::size_t q = 0; q < all.size(); ++q) {
    if (!(r.*(all[q].range)).active()) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s x%.4g", out.empty() ? "" : ", ", all[q].name,
                  random_factor(r, seed, world, int(q)));
    out += buf;
  }
  return out;
}

template void randomize_world(const Randomization&, std::uint64_t, int, ModelT<float>&);
template void randomize_world(const Randomization&, std::uint64_t, int, ModelT<double>&);
template void randomize_world(const Randomization&, std::uint64_t, int, RigidModelT<float>&);
template void randomize_world(const Randomization&, std::uint64_t, int, RigidModelT<double>&);

}  // namespace adj
