// small robots built with RigidBuilder: the reference scenes of the rigid tests and demos
// (each returns the builder, so callers pick the scalar and may change it before finalize)
#pragma once

#include "engine/model/rigid_builder.h"

namespace adj {

// point-like bob (sphere of radius 0.01 m) of `mass` [kg] on a massless rod of `length` [m],
// hinged at the origin about z; q = 0 hangs straight down; no ground
RigidBuilder rigid_pendulum(double length = 1.0, double mass = 1.0);

// a free box of half-extents `half` [m] and `density` [kg/m^3] above the ground
RigidBuilder rigid_free_box(const vec3<double>& half, double density);

// SHAC's cartpole: cart (1 kg) on a prismatic x rail, pole (0.5 kg, 1 m rod) hinged about z;
// q = (x, theta), theta = 0 upright; one torque actuator on the cart (gear 20 N); no ground
RigidBuilder rigid_cartpole();

// a planar 3-link arm on a fixed base (capsules of 0.5 m, revolute about z, limits of
// +-2.5 rad) with PD actuators (kp 50, kd 5); no ground
RigidBuilder rigid_arm3();

// a 4-legged walker: free-base torso box and 4 legs of hip and knee (revolute) with
// capsule shins, 8 PD actuators; ground contact. the light legs need joint armature
// (0.01 kg m^2) for explicit integration at dt 1/60 with 8 substeps
RigidBuilder rigid_quadruped();

}  // namespace adj
