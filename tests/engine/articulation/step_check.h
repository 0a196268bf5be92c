// shared by the rigid gradient tests: SolverT's step of a model of bodies only as a function of
// rigid_step_jacobian's packed inputs, and one check of a step's gradients: the dual Jacobian
// against central differences and SolverT's reverse adjoint (and the dual-number adjoint,
// rigid_step_adjoint_dual) against J^T adj_out, in double
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "rigid_test_util.h"

namespace adj::test {

// (q, qd, act, body mass, actuator kp, kd, dof damping, armature, contact ke, kd, mu, gravity):
// rigid_step_jacobian's inputs in its column order, and a step_adjoint's results (adj_in, adj_u, adj_m) in the same
// order
inline std::vector<double> pack_step(const RigidModelT<double>& m, const StateT<double>& s, const ControlT<double>& u,
                                     const RigidModelGradT<double>& p) {
  std::vector<double> x = s.joint_q;
  x.insert(x.end(), s.joint_qd.begin(), s.joint_qd.end());
  x.insert(x.end(), u.joint_act.begin(), u.joint_act.end());
  x.insert(x.end(), p.body_mass.begin(), p.body_mass.end());
  x.insert(x.end(), p.actuator_kp.begin(), p.actuator_kp.end());
  x.insert(x.end(), p.actuator_kd.begin(), p.actuator_kd.end());
  x.insert(x.end(), p.dof_damping.begin(), p.dof_damping.end());
  x.insert(x.end(), p.dof_armature.begin(), p.dof_armature.end());
  for (double v : {p.contact_ke, p.contact_kd, p.contact_mu, p.gravity.x, p.gravity.y, p.gravity.z}) x.push_back(v);
  REQUIRE(int(x.size()) == m.q_count() + m.dof_count() + m.actuator_count() + m.param_count());
  return x;
}

// the step's inputs: the state, the control and the model's parameters
inline std::vector<double> pack_step_inputs(const RigidModelT<double>& m, const StateT<double>& s,
                                            const ControlT<double>& u) {
  return pack_step(m, s, u,
                   {m.body_mass, m.actuator_kp, m.actuator_kd, m.dof_damping, m.dof_armature, m.contact_ke,
                    m.contact_kd, m.contact_mu, m.gravity});
}

// the step as a function of the packed inputs; its outputs are (q, qd)
inline std::vector<double> step_of(const RigidModelT<double>& m0, const std::vector<double>& x, double dt,
                                   int substeps) {
  RigidModelT<double> m = m0;
  StateT<double> in = m.make_state(), out;
  ControlT<double> u = m.make_control();
  std::size_t k = 0;
  for (double& v : in.joint_q) v = x[k++];
  for (double& v : in.joint_qd) v = x[k++];
  for (double& v : u.joint_act) v = x[k++];
  // a changed mass scales the inertia with it, as the step does (RigidModelGradT::body_mass)
  for (int b = 0; b < m.body_count(); ++b) {
    double sc = x[k++] / m.body_mass[b];
    m.body_mass[b] *= sc;
    for (auto& row : m.body_inertia[b].m)
      for (double& v : row) v *= sc;
  }
  for (double& v : m.actuator_kp) v = x[k++];
  for (double& v : m.actuator_kd) v = x[k++];
  for (double& v : m.dof_damping) v = x[k++];
  for (double& v : m.dof_armature) v = x[k++];
  m.contact_ke = x[k++];
  m.contact_kd = x[k++];
  m.contact_mu = x[k++];
  for (int c = 0; c < 3; ++c) m.gravity[c] = x[k++];
  SolverT<double> solver({.substeps = substeps});
  REQUIRE(solver.step(world(m), in, out, u, dt).is_ok());
  std::vector<double> y = out.joint_q;
  y.insert(y.end(), out.joint_qd.begin(), out.joint_qd.end());
  return y;
}

// the step and the tolerances of one check
struct StepCheck {
  double dt = 1.0 / 240.0;
  int substeps = 2;
  double fd_eps = 1e-6;  // central-difference step, times max(1, |x|)
  // |AD - FD| <= fd_abs + fd_rel |FD|
  double fd_abs = 1e-6, fd_rel = 1e-4;
  // |reverse - J^T adj_out| <= rev_abs + rev_rel |J^T adj_out| + rev_of_largest max |J^T adj_out|
  double rev_abs = 0, rev_rel = 0, rev_of_largest = 1e-11;
  unsigned adj_seed = 5;            // adj_out = random_state(m, mt19937(adj_seed), 1, 1) ...
  std::mt19937* adj_rng = nullptr;  // ... or drawn from this stream when set
  bool contact_in_step = true;      // the contact must be in the gradient: dL/dke != 0
};

// every column of rigid_step_jacobian against central differences of step_of, then SolverT's
// step_adjoint (reverse, and by dual numbers) against J^T adj_out for every input
inline void check_step_gradients(const RigidModelT<double>& m, const StateT<double>& s, const ControlT<double>& u,
                                 const StepCheck& opt = {}) {
  SolverT<double> solver({.substeps = opt.substeps});
  const ModelT<double> bodies = world(m);
  std::vector<double> J;
  REQUIRE(rigid_step_jacobian(m, s, u, opt.dt, opt.substeps, J).is_ok());
  const std::vector<double> x = pack_step_inputs(m, s, u);
  const int n_in = int(x.size()), n_out = m.q_count() + m.dof_count();
  REQUIRE(int(J.size()) == n_in * n_out);
  // armature columns: a step of fd_eps would be a fair share of a light link's inertia (the
  // curvature of 1 / (I + a) makes the difference inexact); a tenth of it
  const int arm_lo = n_in - 6 - m.dof_count(), arm_hi = n_in - 6;
  for (int i = 0; i < n_in; ++i) {
    const double eps = (i >= arm_lo && i < arm_hi ? 0.1 : 1.0) * opt.fd_eps * std::max(1.0, std::fabs(x[i]));
    std::vector<double> xp = x, xm = x;
    xp[i] += eps;
    xm[i] -= eps;
    std::vector<double> yp = step_of(m, xp, opt.dt, opt.substeps), ym = step_of(m, xm, opt.dt, opt.substeps);
    for (int o = 0; o < n_out; ++o) {
      const double fd = (yp[o] - ym[o]) / (2 * eps), ad = J[std::size_t(o) * n_in + i];
      INFO("d out " << o << " / d in " << i << ": AD " << ad << " FD " << fd);
      CHECK(std::fabs(ad - fd) <= opt.fd_abs + opt.fd_rel * std::fabs(fd));
    }
  }
  // the reverse pass is J^T adj_out
  std::mt19937 own(opt.adj_seed);
  const StateT<double> adj_out = random_state(m, opt.adj_rng ? *opt.adj_rng : own, 1.0, 1.0);
  StateT<double> adj_in;
  ControlT<double> adj_u = m.make_control();
  ModelGradT<double> adj_world = bodies.make_grad();
  REQUIRE(solver.step_adjoint(bodies, s, u, opt.dt, adj_out, adj_in, adj_u, adj_world).is_ok());
  const RigidModelGradT<double>& adj_m = adj_world.rigid;
  std::vector<double> ao = adj_out.joint_q;
  ao.insert(ao.end(), adj_out.joint_qd.begin(), adj_out.joint_qd.end());
  std::vector<double> want(std::size_t(n_in), 0.0);
  for (int o = 0; o < n_out; ++o)
    for (int i = 0; i < n_in; ++i) want[i] += ao[o] * J[std::size_t(o) * n_in + i];
  const std::vector<double> got = pack_step(m, adj_in, adj_u, adj_m);
  double largest = 0;  // max |J^T adj_out|
  for (double v : want) largest = std::max(largest, std::fabs(v));
  auto tol = [&](double w) { return opt.rev_abs + opt.rev_rel * std::fabs(w) + opt.rev_of_largest * largest; };
  for (int i = 0; i < n_in; ++i) {
    INFO("input " << i << ": reverse " << got[i] << ", J^T adj_out " << want[i] << ", largest " << largest);
    CHECK(std::fabs(got[i] - want[i]) <= tol(want[i]));
  }
  // and the dual-number path of step_adjoint agrees with the reverse pass
  StateT<double> adj_in2;
  ControlT<double> adj_u2 = m.make_control();
  RigidModelGradT<double> adj_m2 = m.make_grad();
  REQUIRE(rigid_step_adjoint_dual(m, s, u, opt.dt, opt.substeps, adj_out, adj_in2, adj_u2, adj_m2).is_ok());
  const std::vector<double> got2 = pack_step(m, adj_in2, adj_u2, adj_m2);
  for (int i = 0; i < n_in; ++i) {
    INFO("input " << i << ": dual adjoint " << got2[i] << ", reverse " << got[i]);
    CHECK(std::fabs(got2[i] - got[i]) <= tol(got[i]));
  }
  if (opt.contact_in_step) CHECK(adj_m.contact_ke != 0.0);
}

}  // namespace adj::test
