// domain randomization: the per-world parameters of a batch of worlds. A scene states, for any
// of the quantities below, a range of factors on its own values (settings.randomize,
// docs/scene-format.md); world w of a run with seed s draws each factor from its own stream,
// seeded by (s, w, quantity) alone, so a world's parameters do not depend on how many worlds
// run, on threads or processes, or on which other quantities are randomized. World draws are
// uniform in [lo, hi] or log-uniform (uniform in log space: for stiffnesses spanning decades).
//
//   Randomization r;
//   r.body_mass = {0.8, 1.2};
//   ModelT<double> world = model;
//   randomize_world(r, /*seed=*/7, /*world=*/3, world);   // masses and inertias x U(0.8, 1.2)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adj {

template <class S>
struct ModelT;
template <class S>
struct RigidModelT;

struct RandomRange {
  double lo = 1, hi = 1;  // factor range; lo == hi == 1: not randomized
  bool log_uniform = false;

  bool active() const { return lo != 1 || hi != 1; }
  bool operator==(const RandomRange&) const = default;
};

// each a factor on the scene's values (1: as the scene states them)
struct Randomization {
  RandomRange body_mass;          // every body's mass and rotational inertia (a density factor)
  RandomRange particle_mass;      // every particle's mass
  RandomRange contact_ke;         // normal contact stiffness (bodies' and particles')
  RandomRange contact_kd;         // normal contact damping
  RandomRange contact_mu;         // Coulomb friction coefficient
  RandomRange joint_damping;      // every dof's viscous damping
  RandomRange joint_armature;     // every dof's armature
  RandomRange actuator_kp;        // PD actuators' stiffness
  RandomRange actuator_kd;        // PD and velocity actuators' damping
  RandomRange actuator_strength;  // torque actuators' gear (the torque per unit of action)
  RandomRange gravity;            // the gravity vector's length

  bool active() const;
  bool operator==(const Randomization&) const = default;
};

// the quantities in a fixed order with their scene-file names (the order of the draws' streams)
struct RandomQuantity {
  const char* name;
  RandomRange Randomization::*range;
};
const std::vector<RandomQuantity>& random_quantities();

// world `world`'s factor of quantity q (an index into random_quantities()) for `seed`
double random_factor(const Randomization& r, std::uint64_t seed, int world, int q);

// world `world`'s parameters: the model's values times the world's factors (a model of one world;
// each call multiplies, so apply it once to a copy of the scene's model)
template <class S>
void randomize_world(const Randomization& r, std::uint64_t seed, int world, ModelT<S>& model);
template <class S>
void randomize_world(const Randomization& r, std::uint64_t seed, int world, RigidModelT<S>& model);

// the world's factors as "body_mass x1.0712, contact_ke x0.613" (active quantities only), for logs
std::string describe_world(const Randomization& r, std::uint64_t seed, int world);

}  // namespace adj
