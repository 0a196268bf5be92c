// What the loss terms and policy observations of bodies read of one body: its world centre of
// mass (with d com / d q), and a probe of com, axes, com velocity and angular velocity with
// its adjoint through the body's kinematics. Each runs on the model's scalar S and on tangent
// numbers T = Dual<S, 1> over the same model (the H v products of engine/optim/pods.h).
#pragma once

#include <vector>

#include "engine/core/spatial.h"
#include "engine/model/rigid_model.h"

namespace adj::optim {

// world centre of mass of `body` and, when jac is given, d com / d q (q_count rows)
template <class T, class S>
vec3<T> rigid_body_com(const RigidModelT<S>& m, const std::vector<T>& q, int body, std::vector<vec3<T>>* jac);

// what the running costs read of one body at (q, qd): com c [m], axes R, com velocity vc [m/s],
// angular velocity w (world) [rad/s]
template <class S>
struct RigidBodyProbe {
  vec3<S> c, vc;
  mat33<S> R;
  vec3<S> w;
};
template <class T, class S>
RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd,
                                   int body);
// adj_q += d <adj, probe> / d q, adj_qd likewise (adj.c, adj.R, adj.vc: adjoints of the probe)
template <class T, class S>
void rigid_body_probe_adjoint(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd, int body,
                              const RigidBodyProbe<T>& adj, std::vector<T>& adj_q, std::vector<T>& adj_qd);

}  // namespace adj::optim
