// the stages of one rigid step, generic over the scalar T (float, double, Dual) so that the
// same code gives the primal step and, on dual numbers, its exact Jacobian:
//   kinematics (poses, motion subspaces, velocities) -> contact -> joint forces (actuators,
//   damping, limits) -> bias forces by RNEA -> mass matrix by CRBA -> the implicit system
//   (M + h D + h^2 K: joint damping, springs, limits, PD gains and couplings in velocity, as
//   MuJoCo's implicitfast) -> Cholesky solve -> semi-implicit Euler in joint space
//   (quaternions by the exp map, renormalized)
// and generic over the model (RigidModelT, or RigidViewT's spans on a device: rigid_view.h), the
// scratch (Work, or WorkView over an arena) and the parameters (Params, or ParamsT over spans);
// every stage is ADJ_HD, so one source runs on the host and in the CUDA batch (rigid_batch.h)
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "engine/articulation/body_contact.h"
#include "engine/model/rigid_model.h"
#include "engine/model/rigid_view.h"

namespace adj::rigid {

// the differentiable parameters, lifted to T; packed order: body_mass, actuator_kp,
// actuator_kd, dof_damping, dof_armature, contact_ke, contact_kd, contact_mu, gravity (x, y,
// z). V: std::vector on the host, Span over an arena or the model's arrays on a device
// (rigid_batch.h)
template <class T, class V = std::vector<T>>
struct ParamsT {
  V body_mass, actuator_kp, actuator_kd, dof_damping, dof_armature;
  T contact_ke = T(0), contact_kd = T(0), contact_mu = T(0);
  vec3<T> gravity;
};
template <class T>
using Params = ParamsT<T>;

template <class T, class S>
inline Params<T> lift_params(const RigidModelT<S>& m) {
  Params<T> p;
  for (S v : m.body_mass) p.body_mass.push_back(T(v));
  for (S v : m.actuator_kp) p.actuator_kp.push_back(T(v));
  for (S v : m.actuator_kd) p.actuator_kd.push_back(T(v));
  for (S v : m.dof_damping) p.dof_damping.push_back(T(v));
  for (S v : m.dof_armature) p.dof_armature.push_back(T(v));
  p.contact_ke = T(m.contact_ke);
  p.contact_kd = T(m.contact_kd);
  p.contact_mu = T(m.contact_mu);
  p.gravity = vec3<T>(T(m.gravity.x), T(m.gravity.y), T(m.gravity.z));
  return p;
}

// zero parameter adjoints of a model's shape (the reverse pass accumulates into them), in the
// adjoints' scalar T (the model's, or a dual)
template <class T = void, class S>
inline auto zero_params(const RigidModelT<S>& m) {
  using A = std::conditional_t<std::is_void_v<T>, S, T>;
  Params<A> p;
  p.body_mass.assign(m.body_mass.size(), A(0));
  p.actuator_kp.assign(m.actuator_kp.size(), A(0));
  p.actuator_kd.assign(m.actuator_kd.size(), A(0));
  p.dof_damping.assign(m.dof_damping.size(), A(0));
  p.dof_armature.assign(m.dof_armature.size(), A(0));
  return p;
}

// adds parameter adjoints (as zero_params shapes them) to a model gradient of the same model
template <class S>
inline void add_param_grads(const Params<S>& p, RigidModelGradT<S>& g) {
  for (std::size_t i = 0; i < p.body_mass.size(); ++i) g.body_mass[i] += p.body_mass[i];
  for (std::size_t i = 0; i < p.actuator_kp.size(); ++i) g.actuator_kp[i] += p.actuator_kp[i];
  for (std::size_t i = 0; i < p.actuator_kd.size(); ++i) g.actuator_kd[i] += p.actuator_kd[i];
  for (std::size_t i = 0; i < p.dof_damping.size(); ++i) g.dof_damping[i] += p.dof_damping[i];
  for (std::size_t i = 0; i < p.dof_armature.size(); ++i) g.dof_armature[i] += p.dof_armature[i];
  g.contact_ke += p.contact_ke;
  g.contact_kd += p.contact_kd;
  g.contact_mu += p.contact_mu;
  g.gravity += p.gravity;
}

// scratch of one step
template <class T>
struct Work {
  std::vector<mat33<T>> R;        // body axes, world, (body_count)
  std::vector<vec3<T>> p;         // body origin, world [m], (body_count)
  std::vector<svec<T>> S;         // motion subspace column of each dof, world, (dof_count)
  std::vector<svec<T>> v, a;      // body spatial velocity / acceleration, (body_count)
  std::vector<svec<T>> f;         // force across each joint, parent on child, (body_count)
  std::vector<svec<T>> fext;      // external (contact) force on each body, (body_count)
  std::vector<sinertia<T>> I;     // body spatial inertia, world, (body_count)
  std::vector<sinertia<T>> Ic;    // composite inertia of each subtree, (body_count)
  std::vector<T> M, L;            // mass matrix and its Cholesky factor, (dof_count^2)
  std::vector<T> tau, bias, qdd;  // (dof_count)
  std::vector<T> stiff, damp;     // implicit diagonal K and D of each dof (implicit_terms), (dof_count)
  std::vector<T> q0, qd0;         // substep ping buffers
  // external forces added to fext after contact and thrust, e.g. particles pushing on the
  // bodies (engine/articulation/body_particle.h); (body_count) or empty = none. the reverse pass leaves
  // dL/d fext in AdjWork::fext, which is also dL/d fext_extra
  std::vector<svec<T>> fext_extra;
  void resize(int nb, int nq, int nv) {
    R.resize(nb);
    p.resize(nb);
    v.resize(nb);
    a.resize(nb);
    f.resize(nb);
    fext.resize(nb);
    I.resize(nb);
    Ic.resize(nb);
    S.resize(nv);
    M.assign(std::size_t(nv) * nv, T(0));
    L.assign(std::size_t(nv) * nv, T(0));
    tau.resize(nv);
    bias.resize(nv);
    qdd.resize(nv);
    stiff.resize(nv);
    damp.resize(nv);
    q0.resize(nq);
    qd0.resize(nv);
  }
  std::size_t bytes() const {
    return R.size() * sizeof(mat33<T>) + p.size() * sizeof(vec3<T>) +
           (S.size() + v.size() + a.size() + f.size() + fext.size() + fext_extra.size()) * sizeof(svec<T>) +
           (I.size() + Ic.size()) * sizeof(sinertia<T>) +
           (M.size() + L.size() + tau.size() + bias.size() + qdd.size() + stiff.size() + damp.size() + q0.size() +
            qd0.size()) *
               sizeof(T);
  }
};

// Work's fields as spans carved from an arena (one environment's slice on a device); the
// same names, so the stages run on either (fext_extra: empty in the rigid batch, carved by the
// coupled path of engine/solver/coupled_kernels.h for the body-particle forces)
template <class T>
struct WorkView {
  Span<mat33<T>> R;
  Span<vec3<T>> p;
  Span<svec<T>> S;
  Span<svec<T>> v, a;
  Span<svec<T>> f;
  Span<svec<T>> fext;
  Span<sinertia<T>> I;
  Span<sinertia<T>> Ic;
  Span<T> M, L;
  Span<T> tau, bias, qdd;
  Span<T> stiff, damp;
  Span<T> q0, qd0;
  Span<svec<T>> fext_extra;
  ADJ_HD void carve(ArenaCursor& arena, int nb, int nq, int nv) {
    R = arena.take<mat33<T>>(nb);
    p = arena.take<vec3<T>>(nb);
    v = arena.take<svec<T>>(nb);
    a = arena.take<svec<T>>(nb);
    f = arena.take<svec<T>>(nb);
    fext = arena.take<svec<T>>(nb);
    I = arena.take<sinertia<T>>(nb);
    Ic = arena.take<sinertia<T>>(nb);
    S = arena.take<svec<T>>(nv);
    M = arena.take<T>(nv * nv);
    L = arena.take<T>(nv * nv);
    tau = arena.take<T>(nv);
    bias = arena.take<T>(nv);
    qdd = arena.take<T>(nv);
    stiff = arena.take<T>(nv);
    damp = arena.take<T>(nv);
    q0 = arena.take<T>(nq);
    qd0 = arena.take<T>(nv);
  }
};

template <class T>
ADJ_HD inline vec3<T> q3(const T* q) {
  return {q[0], q[1], q[2]};
}
template <class T>
ADJ_HD inline quat<T> q4(const T* q) {
  return {q[0], q[1], q[2], q[3]};
}

// pose, motion subspace columns (S, one per dof), spatial inertia and velocity of body i from
// its parent's pose and velocity (identity and zero for the world)
template <class T, class M>
ADJ_HD void body_kinematics(const M& m, int i, const mat33<T>& Rp, const vec3<T>& pp, const svec<T>& vp, const T* qj,
                            const T* qdj, const T& mass, mat33<T>& R, vec3<T>& p, svec<T>* Sj, sinertia<T>& I,
                            svec<T>& v) {
  mat33<T> RJ = Rp * lift<T>(m.joint_rot[i]);
  vec3<T> pJ = pp + Rp * lift<T>(m.joint_pos[i]);
  vec3<T> ax = lift<T>(m.joint_axis[i]);
  switch (m.joint_type[i]) {
    case RIGID_JOINT_REVOLUTE:
      R = RJ * axis_angle(ax, qj[0]);
      p = pJ;
      Sj[0] = axis_motion(RJ * ax, pJ);
      break;
    case RIGID_JOINT_PRISMATIC:
      R = RJ;
      p = pJ + RJ * (ax * qj[0]);
      Sj[0] = {vec3<T>(), RJ * ax};
      break;
    case RIGID_JOINT_BALL:
      R = RJ * qmat(q4(qj));
      p = pJ;
      for (int k = 0; k < 3; ++k) Sj[k] = axis_motion(R.col(k), pJ);
      break;
    case RIGID_JOINT_FREE:
      // translations along the joint frame's axes (fixed in the parent), rotations about the
      // body's own axes through its origin
      R = RJ * qmat(q4(qj + 3));
      p = pJ + RJ * q3(qj);
      for (int k = 0; k < 3; ++k) {
        Sj[k] = {vec3<T>(), RJ.col(k)};
        Sj[3 + k] = axis_motion(R.col(k), p);
      }
      break;
    default:
      R = RJ;
      p = pJ;
  }
  // inertia scales with the mass parameter (fixed geometry)
  using S = model_scalar_t<M>;
  S m0 = m.body_mass[i];
  T scale = m0 > S(0) ? mass / T(m0) : T(0);
  mat33<T> Iw = R * lift<T>(m.body_inertia[i]) * transpose(R);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) Iw.m[r][c] = Iw.m[r][c] * scale;
  I = make_inertia(mass, p + R * lift<T>(m.body_com[i]), Iw);
  // velocity: parent's plus the joint's
  v = vp;
  for (int k = 0; k < rigid_joint_dof_count(m.joint_type[i]); ++k) v += Sj[k] * qdj[k];
}

// body poses, motion subspaces, body spatial inertias and velocities, root to leaves
template <class T, class M, class P, class W>
ADJ_HD void kinematics(const M& m, const P& par, const T* q, const T* qd, W& w) {
  for (int i = 0; i < m.body_count(); ++i) {
    int pi = m.joint_parent[i];
    int d0 = m.joint_dof_start[i];
    body_kinematics(m, i, pi < 0 ? mat33<T>::identity() : w.R[pi], pi < 0 ? vec3<T>() : w.p[pi],
                    pi < 0 ? svec<T>{} : w.v[pi], q + m.joint_q_start[i], qd + d0, par.body_mass[i], w.R[i], w.p[i],
                    w.S.data() + d0, w.I[i], w.v[i]);
  }
}

// every contact force (ground, static colliders, other bodies) summed per body into fext
// (engine/articulation/body_contact.h; J^T f reaches the joints through RNEA's backward sweep)
template <class M, class P, class W, class Rec>
ADJ_HD void contact(const M& m, const P& par, W& w, Rec* record) {
  contact_forces(m, par.contact_ke, par.contact_kd, par.contact_mu, w.R.data(), w.p.data(), w.v.data(), w.fext.data(),
                 record);
}

// C1 ramp of the limit penalty and its slope
template <class T, class S>
ADJ_HD inline T ramp(T d, S eps) {
  if (!(value(d) > 0)) return T(0);
  if (value(d) < eps) return d * d / T(2 * eps);
  return d - T(eps / 2);
}
template <class T, class S>
ADJ_HD inline T ramp_slope(T d, S eps) {
  if (!(value(d) > 0)) return T(0);
  if (value(d) < eps) return d / T(eps);
  return T(1);
}

// generalized forces of actuators, joint damping, joint springs, couplings and limits (smooth penalties)
template <class T, class M, class P, class W>
ADJ_HD void joint_forces(const M& m, const P& par, const T* q, const T* qd, const T* act, W& w) {
  using S = model_scalar_t<M>;
  for (int d = 0; d < m.dof_count(); ++d) w.tau[d] = -par.dof_damping[d] * qd[d];
  for (int j = 0; j < m.body_count(); ++j) {
    int t = m.joint_type[j];
    if (t != RIGID_JOINT_REVOLUTE && t != RIGID_JOINT_PRISMATIC) continue;
    int d = m.joint_dof_start[j];
    T x = q[m.joint_q_start[j]];
    if (m.joint_stiffness[j] != S(0)) w.tau[d] -= T(m.joint_stiffness[j]) * (x - T(m.joint_spring_q[j]));
    if (m.joint_limit_ke[j] == S(0) && m.joint_limit_kd[j] == S(0)) continue;
    T lo = T(m.joint_lower[j]) - x, hi = x - T(m.joint_upper[j]);
    S eps = m.joint_limit_eps;
    w.tau[d] += T(m.joint_limit_ke[j]) * (ramp(lo, eps) - ramp(hi, eps)) -
                T(m.joint_limit_kd[j]) * qd[d] * (ramp_slope(lo, eps) + ramp_slope(hi, eps));
  }
  for (int c = 0; c < m.coupling_count(); ++c) {
    const int a = m.coupling_joint[c], b = m.coupling_leader[c];
    const int da = m.joint_dof_start[a], db = m.joint_dof_start[b];
    const T r = T(m.coupling_ratio[c]);
    const T e = q[m.joint_q_start[a]] - r * q[m.joint_q_start[b]] - T(m.coupling_offset[c]);
    const T f = T(m.coupling_ke[c]) * e + T(m.coupling_kd[c]) * (qd[da] - r * qd[db]);
    w.tau[da] -= f;
    w.tau[db] += r * f;
  }
  for (int k = 0; k < m.actuator_count(); ++k) {
    int d = m.actuator_dof[k];
    if (m.actuator_type[k] == RIGID_ACTUATOR_THRUST) {
      continue;  // a body force: thrust() below
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_TORQUE) {
      w.tau[d] += T(m.actuator_gear[k]) * act[k];
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_VELOCITY) {
      w.tau[d] += par.actuator_kd[k] * (act[k] - qd[d]);
    } else {
      int qi = m.joint_q_start[m.dof_joint[d]];
      w.tau[d] += par.actuator_kp[k] * (act[k] - q[qi]) - par.actuator_kd[k] * qd[d];
    }
  }
}

// spatial force (world, about the origin) of thrust actuator k on its body at pose (R, p)
template <class T, class M>
ADJ_HD inline svec<T> thrust_force(const M& m, int k, const mat33<T>& R, const vec3<T>& p, const T& act) {
  vec3<T> x = p + R * lift<T>(m.actuator_pos[k]);
  vec3<T> f = R * (lift<T>(m.actuator_axis[k]) * (T(m.actuator_gear[k]) * act));
  return svec<T>{cross(x, f), f};
}

// thrust actuators' forces into fext (after contact(), which clears it)
template <class T, class M, class W>
ADJ_HD void thrust(const M& m, const T* act, W& w) {
  for (int k = 0; k < m.actuator_count(); ++k) {
    if (m.actuator_type[k] != RIGID_ACTUATOR_THRUST) continue;
    int b = m.dof_joint[m.actuator_dof[k]];
    w.fext[b] += thrust_force(m, k, w.R[b], w.p[b], act[k]);
  }
}

// the force a body needs for acceleration a at velocity v: I a + v x* I v
template <class T>
ADJ_HD inline svec<T> body_force(const sinertia<T>& I, const svec<T>& a, const svec<T>& v) {
  return I * a + crf(v, I * v);
}

// joint i's velocity split by where its motion-subspace columns are fixed: vj the columns fixed
// in the child body, vt a free joint's translations (fixed in the parent frame, MuJoCo's qvel:
// rigid_joint_parent_dofs); RNEA's velocity product and its adjoint read both
template <class T, class M, class W>
ADJ_HD inline void joint_velocity_parts(const M& m, const W& w, const T* qd, int i, svec<T>& vt, svec<T>& vj) {
  const int d0 = m.joint_dof_start[i], nt = rigid_joint_parent_dofs(m.joint_type[i]);
  vt = svec<T>{};
  vj = svec<T>{};
  for (int d = d0; d < m.joint_dof_start[i + 1]; ++d) (d < d0 + nt ? vt : vj) += w.S[d] * qd[d];
}

// recursive Newton-Euler (world frame): out = M qdd + c(q, qd) - J^T fext, qdd = nullptr
// for the bias forces; leaves the force across every joint in w.f
template <class T, class M, class W, class G>
ADJ_HD void rnea(const M& m, const vec3<G>& gravity, const T* qd, const T* qdd, W& w, T* out) {
  const svec<T> a0{vec3<T>(), -lift<T>(gravity)};  // gravity as a base acceleration
  for (int i = 0; i < m.body_count(); ++i) {
    int pi = m.joint_parent[i];
    svec<T> a = pi < 0 ? a0 : w.a[pi];
    svec<T> vt, vj;
    joint_velocity_parts(m, w, qd, i, vt, vj);
    if (qdd)
      for (int d = m.joint_dof_start[i]; d < m.joint_dof_start[i + 1]; ++d) a += w.S[d] * qdd[d];
    // dS/dt qd: columns fixed in the child body move with it, the free joint's translations
    // with the parent
    a += crm(w.v[i], vj);
    if (rigid_joint_parent_dofs(m.joint_type[i]) > 0 && pi >= 0) a += crm(w.v[pi], vt);
    w.a[i] = a;
    w.f[i] = body_force(w.I[i], a, w.v[i]) - w.fext[i];
  }
  for (int i = m.body_count() - 1; i >= 0; --i) {
    for (int d = m.joint_dof_start[i]; d < m.joint_dof_start[i + 1]; ++d) out[d] = sdot(w.S[d], w.f[i]);
    if (m.joint_parent[i] >= 0) w.f[m.joint_parent[i]] += w.f[i];
  }
}

// composite rigid body algorithm: the joint-space mass matrix with the armature on its
// diagonal (row-major, dof_count^2)
template <class M, class P, class W>
ADJ_HD void crba(const M& m, const P& par, W& w) {
  using T = std::remove_reference_t<decltype(w.M[0])>;
  const int nv = m.dof_count();
  for (int k = 0; k < nv * nv; ++k) w.M[k] = T(0);
  for (int i = 0; i < m.body_count(); ++i) w.Ic[i] = w.I[i];
  for (int i = m.body_count() - 1; i >= 0; --i)
    if (m.joint_parent[i] >= 0) w.Ic[m.joint_parent[i]] += w.Ic[i];
  for (int i = 0; i < m.body_count(); ++i) {
    for (int d = m.joint_dof_start[i]; d < m.joint_dof_start[i + 1]; ++d) {
      svec<T> F = w.Ic[i] * w.S[d];
      // this joint's block, then up the chain of ancestors
      for (int j = i; j >= 0; j = m.joint_parent[j])
        for (int e = m.joint_dof_start[j]; e < m.joint_dof_start[j + 1]; ++e) {
          T v = sdot(w.S[e], F);
          w.M[std::size_t(e) * nv + d] = v;
          w.M[std::size_t(d) * nv + e] = v;
        }
    }
  }
  for (int d = 0; d < nv; ++d) w.M[std::size_t(d) * nv + d] += par.dof_armature[d];
}

// the joint forces' own stiffness K = -d tau/d q and damping D = -d tau/d qd on each dof's
// diagonal: joint damping, springs, limits (their ramp's slope) and PD and velocity actuators,
// which the step integrates implicitly in velocity (couplings' 2x2 blocks: implicit_system)
template <class T, class M, class P, class W>
ADJ_HD void implicit_terms(const M& m, const P& par, const T* q, W& w) {
  using S = model_scalar_t<M>;
  for (int d = 0; d < m.dof_count(); ++d) {
    w.stiff[d] = T(0);
    w.damp[d] = par.dof_damping[d];
  }
  for (int j = 0; j < m.body_count(); ++j) {
    int t = m.joint_type[j];
    if (t != RIGID_JOINT_REVOLUTE && t != RIGID_JOINT_PRISMATIC) continue;
    int d = m.joint_dof_start[j];
    w.stiff[d] += T(m.joint_stiffness[j]);
    if (m.joint_limit_ke[j] == S(0) && m.joint_limit_kd[j] == S(0)) continue;
    T x = q[m.joint_q_start[j]];
    S eps = m.joint_limit_eps;
    T s = ramp_slope(T(m.joint_lower[j]) - x, eps) + ramp_slope(x - T(m.joint_upper[j]), eps);
    w.stiff[d] += T(m.joint_limit_ke[j]) * s;
    w.damp[d] += T(m.joint_limit_kd[j]) * s;
  }
  for (int k = 0; k < m.actuator_count(); ++k) {
    int d = m.actuator_dof[k];
    if (m.actuator_type[k] == RIGID_ACTUATOR_PD) {
      w.stiff[d] += par.actuator_kp[k];
      w.damp[d] += par.actuator_kd[k];
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_VELOCITY) {
      w.damp[d] += par.actuator_kd[k];
    }
  }
}

// the implicit velocity update: the joint forces taken at the substep's end (q + h qd_out,
// qd_out), linearized, give (M + h D + h^2 K) qdd = tau - bias - h K qd. w.M (the mass matrix
// on entry) becomes the system matrix and w.qdd its right-hand side; couplings add their 2x2
// blocks ke, kd [1 -r; -r r^2]
template <class T, class M, class S, class W>
ADJ_HD void implicit_system(const M& m, const T* qd, S h, W& w) {
  const int nv = m.dof_count();
  const T ht = T(h), h2 = T(h * h);
  for (int d = 0; d < nv; ++d) {
    w.M[std::size_t(d) * nv + d] += ht * w.damp[d] + h2 * w.stiff[d];
    w.qdd[d] = w.tau[d] - w.bias[d] - ht * w.stiff[d] * qd[d];
  }
  for (int c = 0; c < m.coupling_count(); ++c) {
    const int da = m.joint_dof_start[m.coupling_joint[c]], db = m.joint_dof_start[m.coupling_leader[c]];
    const T r = T(m.coupling_ratio[c]), ke = T(m.coupling_ke[c]);
    const T g = ht * T(m.coupling_kd[c]) + h2 * ke;
    w.M[std::size_t(da) * nv + da] += g;
    w.M[std::size_t(db) * nv + db] += r * r * g;
    w.M[std::size_t(da) * nv + db] -= r * g;
    w.M[std::size_t(db) * nv + da] -= r * g;
    const T f = ht * ke * (qd[da] - r * qd[db]);
    w.qdd[da] -= f;
    w.qdd[db] += r * f;
  }
}

// dense Cholesky M = L L^T; false if M is not positive definite (its first failing row in
// *failed when given)
template <class VM, class VL>
ADJ_HD bool cholesky(const VM& M, VL& L, int n, int* failed = nullptr) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(L[0])>>;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      T s = M[std::size_t(i) * n + j];
      for (int k = 0; k < j; ++k) s -= L[std::size_t(i) * n + k] * L[std::size_t(j) * n + k];
      if (i == j) {
        if (!(value(s) > 0)) {
          if (failed) *failed = i;
          return false;
        }
        L[std::size_t(i) * n + i] = sqrt_(s);
      } else {
        L[std::size_t(i) * n + j] = s / L[std::size_t(j) * n + j];
      }
    }
  return true;
}

// x = (L L^T)^-1 b (x may alias b)
template <class T, class VL>
ADJ_HD void cholesky_solve(const VL& L, int n, const T* b, T* x) {
  for (int i = 0; i < n; ++i) {
    T s = b[i];
    for (int k = 0; k < i; ++k) s -= L[std::size_t(i) * n + k] * x[k];
    x[i] = s / L[std::size_t(i) * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    T s = x[i];
    for (int k = i + 1; k < n; ++k) s -= L[std::size_t(k) * n + i] * x[k];
    x[i] = s / L[std::size_t(i) * n + i];
  }
}

// one joint's coordinates advanced with its new velocities (quaternions by the exp map,
// renormalized)
template <class T>
ADJ_HD void integrate_joint(int type, const T* qj, const T* v, T h, T* qo) {
  switch (type) {
    case RIGID_JOINT_REVOLUTE:
    case RIGID_JOINT_PRISMATIC:
      qo[0] = qj[0] + h * v[0];
      break;
    case RIGID_JOINT_BALL: {
      quat<T> r = qnormalize(qmul(q4(qj), qexp(q3(v), h)));
      qo[0] = r.w;
      qo[1] = r.x;
      qo[2] = r.y;
      qo[3] = r.z;
      break;
    }
    case RIGID_JOINT_FREE: {
      quat<T> rot = q4(qj + 3);
      vec3<T> pos = q3(qj) + q3(v) * h;
      quat<T> r = qnormalize(qmul(rot, qexp(q3(v + 3), h)));
      qo[0] = pos.x;
      qo[1] = pos.y;
      qo[2] = pos.z;
      qo[3] = r.w;
      qo[4] = r.x;
      qo[5] = r.y;
      qo[6] = r.z;
      break;
    }
    default:
      break;
  }
}

template <class T, class M, class S>
ADJ_HD void integrate_positions(const M& m, const T* q, const T* qd, S h, T* q_out) {
  for (int j = 0; j < m.body_count(); ++j)
    integrate_joint(m.joint_type[j], q + m.joint_q_start[j], qd + m.joint_dof_start[j], T(h),
                    q_out + m.joint_q_start[j]);
}

// one substep of length h: q, qd -> q_out, qd_out; false if the mass matrix is singular
template <class T, class M, class P, class S, class W, class Rec>
ADJ_HD bool substep(const M& m, const P& par, const T* q, const T* qd, const T* act, S h, T* q_out, T* qd_out, W& w,
                    Rec* record) {
  const int nv = m.dof_count();
  kinematics(m, par, q, qd, w);
  contact(m, par, w, record);
  thrust(m, act, w);
  for (int i = 0; i < int(w.fext_extra.size()); ++i) w.fext[i] += w.fext_extra[i];
  joint_forces(m, par, q, qd, act, w);
  rnea(m, par.gravity, qd, static_cast<const T*>(nullptr), w, w.bias.data());
  crba(m, par, w);
  implicit_terms(m, par, q, w);
  implicit_system(m, qd, h, w);
  if (!cholesky(w.M, w.L, nv)) return false;
  cholesky_solve(w.L, nv, w.qdd.data(), w.qdd.data());
  for (int d = 0; d < nv; ++d) qd_out[d] = qd[d] + T(h) * w.qdd[d];
  integrate_positions(m, q, qd_out, h, q_out);
  return true;
}

// a step of dt in `substeps` substeps; false (with the substep) if a mass matrix is singular
template <class T, class M, class P, class S, class W, class Rec = RigidContactsT<model_scalar_t<M>>>
ADJ_HD bool step(const M& m, const P& par, const T* q, const T* qd, const T* act, S dt, int substeps, T* q_out,
                 T* qd_out, W& w, Rec* record = nullptr) {
  const int nq = m.q_count(), nv = m.dof_count();
  const S h = dt / S(substeps);
  for (int i = 0; i < nq; ++i) w.q0[i] = q[i];
  for (int i = 0; i < nv; ++i) w.qd0[i] = qd[i];
  for (int s = 0; s < substeps; ++s) {
    Rec* rec = s + 1 == substeps ? record : nullptr;
    if (!substep(m, par, w.q0.data(), w.qd0.data(), act, h, q_out, qd_out, w, rec)) return false;
    if (s + 1 < substeps) {
      for (int i = 0; i < nq; ++i) w.q0[i] = q_out[i];
      for (int i = 0; i < nv; ++i) w.qd0[i] = qd_out[i];
    }
  }
  return true;
}

}  // namespace adj::rigid
