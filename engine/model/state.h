// State (what changes each step) and Control (the inputs of a step) of one world: particles
// (cloth, soft bodies, free particles) and articulated bodies side by side. A scene without
// robots has empty joint arrays; one without particles has empty particle arrays.
// joint coordinates per joint type: engine/model/rigid_model.h.
#pragma once

#include <cmath>
#include <cstddef>

#include "engine/core/array.h"
#include "engine/core/math.h"

namespace adj {

template <class S>
struct StateT {
  Array<vec3<S>> particle_q;   // positions [m], (particle_count)
  Array<vec3<S>> particle_qd;  // velocities [m/s], (particle_count)
  Array<S> joint_q;            // generalized positions (joint_q_count), per joint type
  Array<S> joint_qd;           // generalized velocities (joint_dof_count)

  int particle_count() const { return int(particle_q.size()); }
  int q_count() const { return int(joint_q.size()); }
  int dof_count() const { return int(joint_qd.size()); }
  std::size_t bytes() const {
    return (particle_q.size() + particle_qd.size()) * sizeof(vec3<S>) + (joint_q.size() + joint_qd.size()) * sizeof(S);
  }
  void zero();
};

template <class S>
struct ControlT {
  Array<vec3<S>> particle_f;  // external forces [N], (particle_count); may be empty (none)
  Array<S> spring_act;        // actuation: rest length scaled by (1 + act), (spring_count)
  Array<S> tet_act;           // muscle activation added to the volume term, (tet_count)
  Array<S> joint_act;         // actuator inputs: torque [N m or N] or thrust [N] per gear, or PD
                              // target [rad or m], (actuator_count)

  void zero();
};

// a state of zeros shaped like `like` (adjoint seeds)
template <class S>
StateT<S> zero_like(const StateT<S>& like) {
  StateT<S> z;
  z.particle_q.assign(like.particle_q.size(), vec3<S>());
  z.particle_qd.assign(like.particle_qd.size(), vec3<S>());
  z.joint_q.assign(like.joint_q.size(), S(0));
  z.joint_qd.assign(like.joint_qd.size(), S(0));
  return z;
}

// the Euclidean norm of every entry of a state (an adjoint's size, for plots), summed in double
template <class S>
S state_norm(const StateT<S>& s) {
  double sum = 0;
  for (const auto& v : s.particle_q) sum += double(dot(v, v));
  for (const auto& v : s.particle_qd) sum += double(dot(v, v));
  for (S v : s.joint_q) sum += double(v) * double(v);
  for (S v : s.joint_qd) sum += double(v) * double(v);
  return S(std::sqrt(sum));
}

using State = StateT<float>;
using Control = ControlT<float>;

}  // namespace adj
