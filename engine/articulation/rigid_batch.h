// a batch of independent environments (worlds) of one rigid model (1024 cartpoles, a batch of
// walkers), each stepping its own state under its own control: the per-environment step and
// step adjoint as ADJ_HD functors over a RigidViewT and one arena slice per environment, run as
// one CUDA thread per environment (CudaSolverT's worlds: engine/cuda/cuda_worlds.cu).
//
// the functors run the functions SolverT's articulation stage runs for a model of bodies only
// (engine/solver/articulation_stage.h): rigid::step, and rigid::substep with
// rigid::substep_adjoint for the reverse pass (rigid_dynamics.h / rigid_adjoint.h), instantiated
// on the view instead of the model: on the host the results are bit-equal to SolverT's
// (tests/engine/articulation/batch_test.cpp runs them in a host loop). per-environment parameter
// gradients are written to their own rows (no atomics: deterministic); CudaSolverT adds each row
// to its world's gradient, batch_sum_param_grads sums them in environment order.
//
// arrays are packed environment-major: q (env_count x q_count), qd (env_count x dof_count),
// act (env_count x actuator_count), parameter gradients (env_count x param_count, in
// RigidModelT::param_count order: body_mass, actuator_kp, actuator_kd, dof_damping,
// dof_armature, contact ke, kd, mu).
#pragma once

#include <string>
#include <vector>

#include "engine/articulation/rigid_adjoint.h"
#include "engine/core/status.h"
#include "engine/model/rigid_view.h"

namespace adj::rigid {

// the forward parameters of a view: the model's own arrays (no copy)
template <class S>
ADJ_HD inline ParamsT<S, Span<const S>> view_params(const RigidViewT<S>& m) {
  ParamsT<S, Span<const S>> p;
  p.body_mass = m.body_mass;
  p.actuator_kp = m.actuator_kp;
  p.actuator_kd = m.actuator_kd;
  p.dof_damping = m.dof_damping;
  p.dof_armature = m.dof_armature;
  p.contact_ke = m.contact_ke;
  p.contact_kd = m.contact_kd;
  p.contact_mu = m.contact_mu;
  p.gravity = m.gravity;
  return p;
}

// parameter adjoints over one packed row: the arrays as spans into it, the scalars loaded
template <class S>
ADJ_HD inline ParamsT<S, Span<S>> param_spans(const RigidViewT<S>& m, S* ap) {
  const ParamRow r = m.param_row();
  const int pc = r.scalars();
  ParamsT<S, Span<S>> p;
  p.body_mass = Span<S>(ap, r.nb);
  p.actuator_kp = Span<S>(ap + r.actuator_kp(), r.na);
  p.actuator_kd = Span<S>(ap + r.actuator_kd(), r.na);
  p.dof_damping = Span<S>(ap + r.dof_damping(), r.nv);
  p.dof_armature = Span<S>(ap + r.dof_armature(), r.nv);
  p.contact_ke = ap[pc];
  p.contact_kd = ap[pc + 1];
  p.contact_mu = ap[pc + 2];
  p.gravity = vec3<S>(ap[pc + 3], ap[pc + 4], ap[pc + 5]);
  return p;
}

// the scalars of param_spans' parameters (contact, gravity) back into their row
template <class S>
ADJ_HD inline void store_scalar_params(const RigidViewT<S>& m, const ParamsT<S, Span<S>>& p, S* ap) {
  const int pc = m.param_row().scalars();
  ap[pc] = p.contact_ke;
  ap[pc + 1] = p.contact_kd;
  ap[pc + 2] = p.contact_mu;
  for (int c = 0; c < 3; ++c) ap[pc + 3 + c] = p.gravity[c];
}

// bytes of one environment's slice: forward only, or forward plus what the adjoint needs
template <class S>
inline std::size_t batch_slice_bytes(const RigidViewT<S>& m, int substeps, bool adjoint) {
  ArenaCursor a;
  const int nb = m.body_count(), nq = m.q_count(), nv = m.dof_count();
  WorkView<S> w;
  w.carve(a, nb, nq, nv);
  if (adjoint) {
    a.take<S>((substeps + 1) * nq);
    a.take<S>((substeps + 1) * nv);
    for (int s = 0; s < substeps; ++s) w.carve(a, nb, nq, nv);
    AdjWorkView<S> g;
    g.carve(a, nb, nv);
    a.take<S>(2 * (nq + nv));
  }
  return (a.offset + 15) / 16 * 16;
}

// the step of environment `env`: q, qd, act -> q_out, qd_out (ok[env] = 0 if a mass matrix is
// singular)
template <class S>
struct BatchStepKernel {
  RigidViewT<S> m;
  int substeps = 1;
  S dt = S(0);
  const S* q = nullptr;
  const S* qd = nullptr;
  const S* act = nullptr;
  S* q_out = nullptr;
  S* qd_out = nullptr;
  int* ok = nullptr;
  char* arena = nullptr;
  std::size_t stride = 0;  // bytes per environment
  ADJ_HD void operator()(int env) const {
    const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
    ArenaCursor a{arena + stride * std::size_t(env), 0};
    WorkView<S> w;
    w.carve(a, m.body_count(), nq, nv);
    const ParamsT<S, Span<const S>> par = view_params(m);
    ok[env] =
        step(m, par, q + std::size_t(env) * nq, qd + std::size_t(env) * nv, act + std::size_t(env) * na, dt, substeps,
             q_out + std::size_t(env) * nq, qd_out + std::size_t(env) * nv, w, static_cast<NoRecord*>(nullptr))
            ? 1
            : 0;
  }
};

// one environment's record in its arena slice, as record_substeps and reverse_substeps
// (rigid_adjoint.h) read it: the substeps' inputs (tq, tqd: substeps + 1 states) and, from
// work_at on, each substep's scratch, carved one after another
template <class S>
struct ArenaTape {
  Span<S> tq, tqd;
  int nb = 0, nq = 0, nv = 0;
  char* base = nullptr;
  std::size_t work_at = 0;
  ADJ_HD S* q(int s) const { return tq.data() + s * nq; }
  ADJ_HD S* qd(int s) const { return tqd.data() + s * nv; }
  ADJ_HD WorkView<S> work(int s) const {
    ArenaCursor at{base, work_at};
    WorkView<S> w;
    for (int k = 0; k <= s; ++k) w.carve(at, nb, nq, nv);
    return w;
  }
};

// the step adjoint of environment `env` (the reverse pass of SolverT's articulation stage):
// records the substeps, then runs them backwards (record_substeps, reverse_substeps); writes
// adj_q, adj_qd, adj_act (this step's only) and the parameter gradients of this environment
template <class S>
struct BatchAdjointKernel {
  RigidViewT<S> m;
  int substeps = 1;
  S dt = S(0);
  const S* q = nullptr;
  const S* qd = nullptr;
  const S* act = nullptr;
  const S* adj_q_out = nullptr;
  const S* adj_qd_out = nullptr;
  S* adj_q = nullptr;
  S* adj_qd = nullptr;
  S* adj_act = nullptr;
  S* adj_param = nullptr;  // (env_count x param_count)
  int* ok = nullptr;
  char* arena = nullptr;
  std::size_t stride = 0;
  ADJ_HD void operator()(int env) const {
    const int nb = m.body_count(), nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
    const S h = dt / S(substeps);
    ArenaCursor a{arena + stride * std::size_t(env), 0};
    WorkView<S> w;
    w.carve(a, nb, nq, nv);  // the forward step's scratch (unused here; keeps one layout)
    ArenaTape<S> tape;
    tape.tq = a.take<S>((substeps + 1) * nq);
    tape.tqd = a.take<S>((substeps + 1) * nv);
    tape.nb = nb, tape.nq = nq, tape.nv = nv;
    tape.base = a.base;
    tape.work_at = a.offset;
    for (int s = 0; s < substeps; ++s) w.carve(a, nb, nq, nv);  // past the substeps' scratch
    const ParamsT<S, Span<const S>> par = view_params(m);
    const S* act_e = act + std::size_t(env) * na;
    for (int i = 0; i < nq; ++i) tape.q(0)[i] = q[std::size_t(env) * nq + i];
    for (int i = 0; i < nv; ++i) tape.qd(0)[i] = qd[std::size_t(env) * nv + i];
    // forward, keeping every substep's input and scratch
    ok[env] = 1;
    if (!record_substeps(m, par, act_e, h, substeps, tape)) {
      ok[env] = 0;
      return;
    }
    AdjWorkView<S> g;
    g.carve(a, nb, nv);
    S* buf = a.take<S>(2 * (nq + nv)).data();
    // this environment's parameter gradients and actuator adjoints, zeroed
    S* ap = adj_param + std::size_t(env) * m.param_count();
    for (int k = 0; k < m.param_count(); ++k) ap[k] = S(0);
    ParamsT<S, Span<S>> adj_par = param_spans(m, ap);
    S* adj_act_e = adj_act + std::size_t(env) * na;
    for (int k = 0; k < na; ++k) adj_act_e[k] = S(0);
    // backward
    reverse_substeps(m, par, act_e, h, substeps, tape, adj_q_out + std::size_t(env) * nq,
                     adj_qd_out + std::size_t(env) * nv, adj_q + std::size_t(env) * nq, adj_qd + std::size_t(env) * nv,
                     adj_act_e, adj_par, g, buf);
    store_scalar_params(m, adj_par, ap);
  }
};

// adds the per-environment parameter gradients (env_count x param_count) to adj_model, in
// environment order
template <class S>
inline void batch_sum_param_grads(const RigidModelT<S>& m, int env_count, const S* adj_param,
                                  RigidModelGradT<S>& adj_model) {
  const ParamRow r = m.param_row();
  const int np = r.count(), pc = r.scalars();
  if (int(adj_model.body_mass.size()) != r.nb || int(adj_model.actuator_kp.size()) != r.na ||
      int(adj_model.dof_damping.size()) != r.nv)
    adj_model = m.make_grad();
  auto add = [](Array<S>& to, const S* from, int n) {
    for (int i = 0; i < n; ++i) to[i] += from[i];
  };
  for (int e = 0; e < env_count; ++e) {
    const S* ap = adj_param + std::size_t(e) * np;
    add(adj_model.body_mass, ap, r.nb);
    add(adj_model.actuator_kp, ap + r.actuator_kp(), r.na);
    add(adj_model.actuator_kd, ap + r.actuator_kd(), r.na);
    add(adj_model.dof_damping, ap + r.dof_damping(), r.nv);
    add(adj_model.dof_armature, ap + r.dof_armature(), r.nv);
    adj_model.contact_ke += ap[pc];
    adj_model.contact_kd += ap[pc + 1];
    adj_model.contact_mu += ap[pc + 2];
    adj_model.gravity += vec3<S>(ap[pc + 3], ap[pc + 4], ap[pc + 5]);
  }
}

// the first environment whose step failed, as an error naming it (ok: per environment)
inline Status batch_check_ok(const std::vector<int>& ok, const char* what) {
  for (std::size_t e = 0; e < ok.size(); ++e)
    if (!ok[e]) {
      std::string msg = what;
      msg += ": environment ";
      msg += std::to_string(e);
      msg += ": the mass matrix is not positive definite";
      return Status::error(msg);
    }
  return Status::ok();
}

}  // namespace adj::rigid
