#include "engine/articulation/rigid_queries.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace adj {

namespace {

// the joint that owns coordinate i of joint_q (or dof i of joint_qd)
template <class S>
int owner(const Array<int>& start, int i) {
  int j = 0;
  while (j + 1 < int(start.size()) && start[j + 1] <= i) ++j;
  return j;
}

// a state's mass matrix is not positive definite (forward dynamics and drawing of one state;
// a step's failure is told by rigid_step_failure)
template <class S>
Status singular(const RigidModelT<S>& m) {
  return Status::error("rigid: the mass matrix is not positive definite (" + std::to_string(m.body_count()) +
                       " bodies): a coordinate is not finite, or a body with dofs has no mass or inertia");
}

constexpr const char* kBlowupHint =
    "the substep is too long for the stiffness acting on so little inertia (stiff contact, gains or limits on a "
    "light link): try more substeps (settings.substeps), more joint damping or armature, or lower gains or contact "
    "stiffness";

template <class S>
std::string number(S v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", double(v));
  return buf;
}

// the first non-finite entry of a state's coordinates (q) or velocities (qd), as "joint_qd[4]
// of joint 4 (body wrist)"; empty when all are finite
template <class S>
std::string first_non_finite(const RigidModelT<S>& m, const S* q, const S* qd) {
  for (int i = 0; i < m.q_count(); ++i)
    if (!is_finite(q[i])) return "joint_q[" + std::to_string(i) + "] of " + m.joint_label(owner<S>(m.joint_q_start, i));
  for (int i = 0; i < m.dof_count(); ++i)
    if (!is_finite(qd[i])) return "joint_qd[" + std::to_string(i) + "] of " + m.joint_label(m.dof_joint[i]);
  return "";
}

// the dof moving fastest at a state, as "joint_qd[4] of joint 4 (body wrist) was 3e+05"
template <class S>
std::string fastest(const RigidModelT<S>& m, const S* qd) {
  int f = 0;
  for (int d = 1; d < m.dof_count(); ++d)
    if (std::abs(double(qd[d])) > std::abs(double(qd[f]))) f = d;
  if (m.dof_count() == 0) return "no dofs";
  return "joint_qd[" + std::to_string(f) + "] of " + m.joint_label(m.dof_joint[f]) + " was " + number(qd[f]);
}

}  // namespace

template <class S>
Status rigid_check_shape(const RigidModelT<S>& m, const StateT<S>& s, const char* what) {
  if (s.q_count() != m.q_count() || s.dof_count() != m.dof_count())
    return Status::error(std::string("rigid: ") + what + " has " + std::to_string(s.q_count()) + " coordinates and " +
                         std::to_string(s.dof_count()) + " dofs, the model " + std::to_string(m.q_count()) + " and " +
                         std::to_string(m.dof_count()));
  return Status::ok();
}

template <class S>
Status rigid_substep_failure(const RigidModelT<S>& m, const S* q, const S* qd, int k, int n) {
  const std::string at = "rigid step, substep " + std::to_string(k + 1) + " of " + std::to_string(n) + ": ";
  const std::string bad = first_non_finite(m, q, qd);
  if (!bad.empty()) return Status::error(at + bad + " is not finite: the state blew up; " + kBlowupHint);
  // the mass matrix at the rest pose: a dof whose bodies have no mass or inertia fails there
  // too (a state that is finite but huge loses it to round-off: a blow-up, below)
  const rigid::Params<S> par = rigid::lift_params<S>(m);
  const StateT<S> rest = m.make_state();
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, par, rest.joint_q.data(), rest.joint_qd.data(), w);
  rigid::crba(m, par, w);
  int row = -1;
  if (!rigid::cholesky(w.M, w.L, m.dof_count(), &row) && row >= 0)
    return Status::error(at + "the mass matrix is not positive definite at dof " + std::to_string(row) + " of " +
                         m.joint_label(m.dof_joint[row]) + ": the bodies it moves have no mass or inertia about it");
  return Status::error(at + "the system matrix is not positive definite: the state blew up within the substep (" +
                       fastest(m, qd) + " at its start); " + kBlowupHint);
}

template <class S>
Status rigid_step_failure(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control, S dt,
                          int substeps) {
  const int n = std::max(1, substeps), na = m.actuator_count();
  for (int k = 0; k < na && k < int(control.joint_act.size()); ++k)
    if (!is_finite(control.joint_act[k]))
      return Status::error("rigid step: control joint_act[" + std::to_string(k) + "] (actuator " + std::to_string(k) +
                           " on " + m.joint_label(m.dof_joint[m.actuator_dof[k]]) + ") is not finite");
  const std::string bad = first_non_finite(m, in.joint_q.data(), in.joint_qd.data());
  if (!bad.empty()) return Status::error("rigid step: the input's " + bad + " is not finite");
  // the substeps again, one by one, to the first that fails or leaves a non-finite state
  const S h = dt / S(n);
  const rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  std::vector<S> q = in.joint_q, qd = in.joint_qd, q1 = q, qd1 = qd;
  for (int k = 0; k < n; ++k) {
    if (!rigid::substep(m, par, q.data(), qd.data(), control.joint_act.data(), h, q1.data(), qd1.data(), w,
                        static_cast<RigidContactsT<S>*>(nullptr)))
      return rigid_substep_failure(m, q.data(), qd.data(), k, n);
    const std::string out = first_non_finite(m, q1.data(), qd1.data());
    if (!out.empty())
      return Status::error("rigid step, substep " + std::to_string(k + 1) + " of " + std::to_string(n) + ": " + out +
                           " became not finite (" + fastest(m, qd.data()) + " at the substep's start); " + kBlowupHint);
    std::swap(q, q1);
    std::swap(qd, qd1);
  }
  return Status::ok();
}

template <class S>
Status rigid_check_finite(const RigidModelT<S>& m, const StateT<S>& s, const char* what) {
  for (int i = 0; i < s.q_count(); ++i)
    if (!is_finite(s.joint_q[i]))
      return Status::error(std::string(what) + ": joint_q[" + std::to_string(i) + "] is not finite, " +
                           m.joint_label(owner<S>(m.joint_q_start, i)));
  for (int i = 0; i < s.dof_count(); ++i)
    if (!is_finite(s.joint_qd[i]))
      return Status::error(std::string(what) + ": joint_qd[" + std::to_string(i) + "] is not finite, " +
                           m.joint_label(m.dof_joint[i]));
  return Status::ok();
}

template <class S>
Status rigid_step_dual_chunk(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control, S dt,
                             int substeps, int chunk, std::vector<RigidJacobianDual<S>>& out,
                             rigid::Work<RigidJacobianDual<S>>& work) {
  using D = RigidJacobianDual<S>;
  constexpr int kChunk = kRigidJacobianChunk;
  const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  const int lo = chunk * kChunk;
  int k = 0;  // running input index
  auto seed = [&](S x) {
    D r = (k >= lo && k < lo + kChunk) ? D::var(x, k - lo) : D(x);
    ++k;
    return r;
  };
  std::vector<D> q(nq), qd(nv), act(na);
  for (int i = 0; i < nq; ++i) q[i] = seed(in.joint_q[i]);
  for (int i = 0; i < nv; ++i) qd[i] = seed(in.joint_qd[i]);
  for (int i = 0; i < na; ++i) act[i] = seed(control.joint_act[i]);
  rigid::Params<D> par;
  for (S v : m.body_mass) par.body_mass.push_back(seed(v));
  for (S v : m.actuator_kp) par.actuator_kp.push_back(seed(v));
  for (S v : m.actuator_kd) par.actuator_kd.push_back(seed(v));
  for (S v : m.dof_damping) par.dof_damping.push_back(seed(v));
  for (S v : m.dof_armature) par.dof_armature.push_back(seed(v));
  par.contact_ke = seed(m.contact_ke);
  par.contact_kd = seed(m.contact_kd);
  par.contact_mu = seed(m.contact_mu);
  for (int c = 0; c < 3; ++c) par.gravity[c] = seed(m.gravity[c]);
  work.resize(m.body_count(), nq, nv);
  out.resize(std::size_t(nq + nv));
  if (!rigid::step(m, par, q.data(), qd.data(), act.data(), dt, std::max(1, substeps), out.data(), out.data() + nq,
                   work))
    return rigid_step_failure(m, in, control, dt, substeps);
  return Status::ok();
}

template <class S>
Status rigid_step_jacobian(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control, S dt, int substeps,
                           std::vector<S>& J) {
  constexpr int kChunk = kRigidJacobianChunk;
  rigid::Work<RigidJacobianDual<S>> work;
  const int nq = m.q_count(), nv = m.dof_count();
  const int n_in = nq + nv + m.actuator_count() + m.param_count(), n_out = nq + nv;
  J.assign(std::size_t(n_in) * n_out, S(0));
  std::vector<RigidJacobianDual<S>> out;
  for (int c = 0; c * kChunk < n_in; ++c) {
    Status st = rigid_step_dual_chunk(m, in, control, dt, substeps, c, out, work);
    if (!st) return st;
    for (int t = 0; t < kChunk && c * kChunk + t < n_in; ++t)
      for (int o = 0; o < n_out; ++o) J[std::size_t(o) * n_in + c * kChunk + t] = out[o].d[t];
  }
  return Status::ok();
}

template <class S>
Status rigid_step_adjoint_dual(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control, S dt,
                               int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                               RigidModelGradT<S>& adj_model) {
  Status st = rigid_check_shape(m, in, "input state");
  if (!st) return st;
  st = rigid_check_shape(m, adj_out, "adjoint of the output state");
  if (!st) return st;
  const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count(), nb = m.body_count();
  if (int(control.joint_act.size()) != na) return Status::error("rigid: control does not match the actuators");
  adj_control.joint_act.resize(std::size_t(na), S(0));
  if (int(adj_model.body_mass.size()) != nb || int(adj_model.actuator_kp.size()) != na ||
      int(adj_model.dof_damping.size()) != nv)
    adj_model = m.make_grad();
  rigid::Work<RigidJacobianDual<S>> work;
  const int n_in = nq + nv + na + m.param_count();
  std::vector<S> g(std::size_t(n_in), S(0));
  std::vector<RigidJacobianDual<S>> out;
  for (int c = 0; c * kRigidJacobianChunk < n_in; ++c) {
    st = rigid_step_dual_chunk(m, in, control, dt, substeps, c, out, work);
    if (!st) return st;
    for (int t = 0; t < kRigidJacobianChunk && c * kRigidJacobianChunk + t < n_in; ++t) {
      S s = S(0);
      for (int o = 0; o < nq; ++o) s += adj_out.joint_q[o] * out[o].d[t];
      for (int o = 0; o < nv; ++o) s += adj_out.joint_qd[o] * out[nq + o].d[t];
      g[std::size_t(c * kRigidJacobianChunk + t)] = s;
    }
  }
  // unpack in the seeding order: q, qd, act, mass, kp, kd, damping, armature, ke, kd, mu,
  // gravity
  adj_in.joint_q.assign(g.begin(), g.begin() + nq);
  adj_in.joint_qd.assign(g.begin() + nq, g.begin() + nq + nv);
  int k = nq + nv;
  for (int i = 0; i < na; ++i) adj_control.joint_act[i] += g[k++];
  for (int i = 0; i < nb; ++i) adj_model.body_mass[i] += g[k++];
  for (int i = 0; i < na; ++i) adj_model.actuator_kp[i] += g[k++];
  for (int i = 0; i < na; ++i) adj_model.actuator_kd[i] += g[k++];
  for (int i = 0; i < nv; ++i) adj_model.dof_damping[i] += g[k++];
  for (int i = 0; i < nv; ++i) adj_model.dof_armature[i] += g[k++];
  adj_model.contact_ke += g[k++];
  adj_model.contact_kd += g[k++];
  adj_model.contact_mu += g[k++];
  for (int c = 0; c < 3; ++c) adj_model.gravity[c] += g[k++];
  return rigid_check_finite(m, adj_in, "rigid dual step adjoint");
}

template <class S>
Status rigid_contacts(const RigidModelT<S>& m, const StateT<S>& s, const ControlT<S>& control, RigidContactsT<S>& out) {
  Status st = rigid_check_shape(m, s, "state");
  if (!st) return st;
  const int nv = m.dof_count();
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), nv);
  out = RigidContactsT<S>();
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  rigid::contact(m, par, w, &out);
  rigid::thrust(m, control.joint_act.data(), w);
  rigid::joint_forces(m, par, s.joint_q.data(), s.joint_qd.data(), control.joint_act.data(), w);
  rigid::rnea(m, m.gravity, s.joint_qd.data(), static_cast<const S*>(nullptr), w, w.bias.data());
  rigid::crba(m, par, w);
  if (!rigid::cholesky(w.M, w.L, nv)) return singular(m);
  for (int d = 0; d < nv; ++d) w.qdd[d] = w.tau[d] - w.bias[d];
  rigid::cholesky_solve(w.L, nv, w.qdd.data(), w.qdd.data());
  // the force each joint transmits is what its subtree needs beyond the external forces
  rigid::rnea(m, m.gravity, s.joint_qd.data(), w.qdd.data(), w, w.bias.data());
  for (int i = 0; i < m.body_count(); ++i) {
    out.joint_point.push_back(w.p[i]);
    out.joint_force.push_back(w.f[i].v);
    out.joint_torque.push_back(w.f[i].w - cross(w.p[i], w.f[i].v));
  }
  return Status::ok();
}

template <class S>
void body_particle_contacts(const ModelT<S>& pm, const StateT<S>& s, rigid::CouplingContactsT<S>& out) {
  const RigidModelT<S>& m = pm.rigid;
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, rigid::lift_params<S>(m), s.joint_q.data(), s.joint_qd.data(), w);
  std::vector<vec3<S>> f_particle;
  std::vector<rigid::svec<S>> f_body;
  out = rigid::CouplingContactsT<S>();
  rigid::coupling_forces(m, rigid::coupling_params(pm), w.R, w.p, w.v, pm, s, f_particle, f_body, &out);
}

template <class S>
void rigid_forward_kinematics(const RigidModelT<S>& m, const StateT<S>& s, std::vector<vec3<S>>& pos,
                              std::vector<mat33<S>>& rot) {
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  pos = w.p;
  rot = w.R;
}

template <class S>
std::vector<S> rigid_mass_matrix(const RigidModelT<S>& m, const StateT<S>& s) {
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  rigid::crba(m, par, w);
  return w.M;
}

template <class S>
std::vector<S> rigid_inverse_dynamics(const RigidModelT<S>& m, const StateT<S>& s, const std::vector<S>& qdd) {
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  rigid::contact(m, par, w, static_cast<RigidContactsT<S>*>(nullptr));
  std::vector<S> tau(static_cast<std::size_t>(m.dof_count()));
  rigid::rnea(m, m.gravity, s.joint_qd.data(), qdd.data(), w, tau.data());
  return tau;
}

template <class S>
Result<std::vector<S>> rigid_forward_dynamics(const RigidModelT<S>& m, const StateT<S>& s, const ControlT<S>& control) {
  const int nv = m.dof_count();
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), nv);
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  rigid::contact(m, par, w, static_cast<RigidContactsT<S>*>(nullptr));
  rigid::thrust(m, control.joint_act.data(), w);
  rigid::joint_forces(m, par, s.joint_q.data(), s.joint_qd.data(), control.joint_act.data(), w);
  rigid::rnea(m, m.gravity, s.joint_qd.data(), static_cast<const S*>(nullptr), w, w.bias.data());
  rigid::crba(m, par, w);
  if (!rigid::cholesky(w.M, w.L, nv)) return singular(m);
  std::vector<S> qdd(static_cast<std::size_t>(nv));
  for (int d = 0; d < nv; ++d) qdd[d] = w.tau[d] - w.bias[d];
  rigid::cholesky_solve(w.L, nv, qdd.data(), qdd.data());
  return qdd;
}

template <class S>
S rigid_energy(const RigidModelT<S>& m, const StateT<S>& s) {
  rigid::Params<S> par = rigid::lift_params<S>(m);
  rigid::Work<S> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
  S e = S(0);
  for (int i = 0; i < m.body_count(); ++i) {
    e += S(0.5) * rigid::sdot(w.v[i], w.I[i] * w.v[i]);
    vec3<S> c = w.p[i] + w.R[i] * m.body_com[i];
    e -= m.body_mass[i] * dot(m.gravity, c);
  }
  return e;
}

#define ADJ_RIGID_INSTANTIATE(S)                                                                                       \
  template Status rigid_check_shape(const RigidModelT<S>&, const StateT<S>&, const char*);                             \
  template Status rigid_step_dual_chunk(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&, S, int, int,      \
                                        std::vector<RigidJacobianDual<S>>&, rigid::Work<RigidJacobianDual<S>>&);       \
  template Status rigid_step_jacobian(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&, S, int,             \
                                      std::vector<S>&);                                                                \
  template Status rigid_step_adjoint_dual(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&, S, int,         \
                                          const StateT<S>&, StateT<S>&, ControlT<S>&, RigidModelGradT<S>&);            \
  template Status rigid_contacts(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&, RigidContactsT<S>&);     \
  template void body_particle_contacts(const ModelT<S>&, const StateT<S>&, rigid::CouplingContactsT<S>&);              \
  template void rigid_forward_kinematics(const RigidModelT<S>&, const StateT<S>&, std::vector<vec3<S>>&,               \
                                         std::vector<mat33<S>>&);                                                      \
  template std::vector<S> rigid_mass_matrix(const RigidModelT<S>&, const StateT<S>&);                                  \
  template std::vector<S> rigid_inverse_dynamics(const RigidModelT<S>&, const StateT<S>&, const std::vector<S>&);      \
  template Result<std::vector<S>> rigid_forward_dynamics(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&); \
  template S rigid_energy(const RigidModelT<S>&, const StateT<S>&);                                                    \
  template Status rigid_check_finite(const RigidModelT<S>&, const StateT<S>&, const char*);                            \
  template Status rigid_step_failure(const RigidModelT<S>&, const StateT<S>&, const ControlT<S>&, S, int);             \
  template Status rigid_substep_failure(const RigidModelT<S>&, const S*, const S*, int, int);

ADJ_RIGID_INSTANTIATE(float)
ADJ_RIGID_INSTANTIATE(double)

}  // namespace adj
