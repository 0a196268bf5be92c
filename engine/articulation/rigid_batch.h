// a batch of independent environments of one rigid model (1024 cartpoles, a batch of walkers),
// each stepping its own state under its own control: the per-environment step and step
// adjoint as ADJ_HD functors over a RigidViewT and one arena slice per environment, so the
// same source runs in a plain host loop (RigidBatchHostT below; the parity test) and as one
// CUDA thread per environment (engine/cuda/rigid_cuda.cu).
//
// the functors run exactly what RigidSolverT::step and its reverse step_adjoint run (the
// stages of rigid_dynamics.h / rigid_adjoint.h, instantiated on the view instead of the
// model): on the host the results are bit-equal to RigidSolverT. per-environment parameter
// gradients are written to their own slots and summed over the environments in a fixed
// order afterwards (no atomics: deterministic).
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
  return p;
}

// parameter adjoints over one packed row (param_count, in the order of the top comment): the
// arrays as spans into it; the contact scalars ke, kd, mu (its last three entries) loaded
template <class S>
ADJ_HD inline ParamsT<S, Span<S>> param_spans(const RigidViewT<S>& m, S* ap) {
  const int nb = m.body_count(), na = m.actuator_count(), nv = m.dof_count(), pc = nb + 2 * na + 2 * nv;
  ParamsT<S, Span<S>> p;
  p.body_mass = Span<S>(ap, nb);
  p.actuator_kp = Span<S>(ap + nb, na);
  p.actuator_kd = Span<S>(ap + nb + na, na);
  p.dof_damping = Span<S>(ap + nb + 2 * na, nv);
  p.dof_armature = Span<S>(ap + nb + 2 * na + nv, nv);
  p.contact_ke = ap[pc];
  p.contact_kd = ap[pc + 1];
  p.contact_mu = ap[pc + 2];
  return p;
}

// the contact scalars of param_spans' parameters back into their row
template <class S>
ADJ_HD inline void store_contact_params(const RigidViewT<S>& m, const ParamsT<S, Span<S>>& p, S* ap) {
  const int pc = m.body_count() + 2 * m.actuator_count() + 2 * m.dof_count();
  ap[pc] = p.contact_ke;
  ap[pc + 1] = p.contact_kd;
  ap[pc + 2] = p.contact_mu;
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
    a.take<S>(nq);
    a.take<S>(nv);
    a.take<S>(nq);
    a.take<S>(nv);
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

// the step adjoint of environment `env` (RigidSolverT::step_adjoint's reverse pass): records
// the substeps, then runs them backwards; writes adj_q, adj_qd, adj_act (this step's only) and
// the parameter gradients of this environment
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
    Span<S> tq = a.take<S>((substeps + 1) * nq), tqd = a.take<S>((substeps + 1) * nv);
    const std::size_t tape_at = a.offset;
    const ParamsT<S, Span<const S>> par = view_params(m);
    const S* act_e = act + std::size_t(env) * na;
    for (int i = 0; i < nq; ++i) tq[i] = q[std::size_t(env) * nq + i];
    for (int i = 0; i < nv; ++i) tqd[i] = qd[std::size_t(env) * nv + i];
    // forward, keeping every substep's input and scratch
    ok[env] = 1;
    for (int s = 0; s < substeps; ++s) {
      WorkView<S> ws;
      ws.carve(a, nb, nq, nv);
      if (!substep(m, par, tq.data() + s * nq, tqd.data() + s * nv, act_e, h, tq.data() + (s + 1) * nq,
                   tqd.data() + (s + 1) * nv, ws, static_cast<NoRecord*>(nullptr))) {
        ok[env] = 0;
        return;
      }
    }
    AdjWorkView<S> g;
    g.carve(a, nb, nv);
    Span<S> aq = a.take<S>(nq), aqd = a.take<S>(nv), aq_prev = a.take<S>(nq), aqd_prev = a.take<S>(nv);
    // this environment's parameter gradients, zeroed
    S* ap = adj_param + std::size_t(env) * m.param_count();
    for (int k = 0; k < m.param_count(); ++k) ap[k] = S(0);
    ParamsT<S, Span<S>> adj_par = param_spans(m, ap);
    S* adj_act_e = adj_act + std::size_t(env) * na;
    for (int k = 0; k < na; ++k) adj_act_e[k] = S(0);
    for (int i = 0; i < nq; ++i) aq[i] = adj_q_out[std::size_t(env) * nq + i];
    for (int i = 0; i < nv; ++i) aqd[i] = adj_qd_out[std::size_t(env) * nv + i];
    // backward
    for (int s = substeps - 1; s >= 0; --s) {
      ArenaCursor at{a.base, tape_at};
      WorkView<S> ws;
      for (int k = 0; k <= s; ++k) ws.carve(at, nb, nq, nv);
      substep_adjoint(m, par, tq.data() + s * nq, tqd.data() + s * nv, act_e, h, ws, aq.data(), aqd.data(),
                      aq_prev.data(), aqd_prev.data(), adj_act_e, adj_par, g);
      Span<S> t = aq;
      aq = aq_prev;
      aq_prev = t;
      t = aqd;
      aqd = aqd_prev;
      aqd_prev = t;
    }
    for (int i = 0; i < nq; ++i) adj_q[std::size_t(env) * nq + i] = aq[i];
    for (int i = 0; i < nv; ++i) adj_qd[std::size_t(env) * nv + i] = aqd[i];
    store_contact_params(m, adj_par, ap);
  }
};

// adds the per-environment parameter gradients (env_count x param_count) to adj_model, in
// environment order
template <class S>
inline void batch_sum_param_grads(const RigidModelT<S>& m, int env_count, const S* adj_param,
                                  RigidModelGradT<S>& adj_model) {
  const int nb = m.body_count(), na = m.actuator_count(), nv = m.dof_count(), np = m.param_count();
  if (int(adj_model.body_mass.size()) != nb || int(adj_model.actuator_kp.size()) != na ||
      int(adj_model.dof_damping.size()) != nv)
    adj_model = m.make_grad();
  for (int e = 0; e < env_count; ++e) {
    const S* ap = adj_param + std::size_t(e) * np;
    for (int i = 0; i < nb; ++i) adj_model.body_mass[i] += ap[i];
    for (int i = 0; i < na; ++i) {
      adj_model.actuator_kp[i] += ap[nb + i];
      adj_model.actuator_kd[i] += ap[nb + na + i];
    }
    for (int i = 0; i < nv; ++i) {
      adj_model.dof_damping[i] += ap[nb + 2 * na + i];
      adj_model.dof_armature[i] += ap[nb + 2 * na + nv + i];
    }
    const int pc = nb + 2 * na + 2 * nv;
    adj_model.contact_ke += ap[pc];
    adj_model.contact_kd += ap[pc + 1];
    adj_model.contact_mu += ap[pc + 2];
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

namespace adj {

// the batch on the host: the functors above in a plain loop over the environments (the
// reference of the CUDA batch, engine/cuda/rigid_cuda.h, which has the same interface)
template <class S>
class RigidBatchHostT {
 public:
  RigidBatchHostT() = default;
  RigidBatchHostT(const RigidBatchHostT&) = delete;  // the view points into model_
  RigidBatchHostT& operator=(const RigidBatchHostT&) = delete;

  // copies the model; each environment gets its own scratch slice (`substeps` per step)
  Status upload(const RigidModelT<S>& model, int env_count, int substeps) {
    model_ = model;
    view_ = rigid::make_rigid_view(model_);
    env_count_ = env_count;
    substeps_ = substeps < 1 ? 1 : substeps;
    stride_ = rigid::batch_slice_bytes(view_, substeps_, true);
    arena_.assign(stride_ * std::size_t(env_count) / sizeof(double) + 1, 0.0);
    ok_.assign(std::size_t(env_count), 1);
    return Status::ok();
  }
  int env_count() const { return env_count_; }

  // packed states and controls (see rigid_batch.h's top comment)
  Status step(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt, std::vector<S>& q_out,
              std::vector<S>& qd_out) {
    Status st = check(q, qd, act);
    if (!st) return st;
    q_out.resize(q.size());
    qd_out.resize(qd.size());
    auto k = kernel<rigid::BatchStepKernel<S>>(q, qd, act, dt);
    k.q_out = q_out.data();
    k.qd_out = qd_out.data();
    for (int e = 0; e < env_count_; ++e) k(e);
    return rigid::batch_check_ok(ok_, "rigid batch step");
  }

  // adj_act: this step's dL/d act per environment (written, not accumulated); adj_model:
  // dL/d params summed over the environments (accumulated)
  Status step_adjoint(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt,
                      const std::vector<S>& adj_q_out, const std::vector<S>& adj_qd_out, std::vector<S>& adj_q,
                      std::vector<S>& adj_qd, std::vector<S>& adj_act, RigidModelGradT<S>& adj_model) {
    Status st = check(q, qd, act);
    if (!st) return st;
    if (adj_q_out.size() != q.size() || adj_qd_out.size() != qd.size())
      return Status::error("rigid batch step_adjoint: the adjoint of the output does not match the states");
    adj_q.resize(q.size());
    adj_qd.resize(qd.size());
    adj_act.resize(act.size());
    param_.resize(std::size_t(env_count_) * model_.param_count());
    auto k = kernel<rigid::BatchAdjointKernel<S>>(q, qd, act, dt);
    k.adj_q_out = adj_q_out.data();
    k.adj_qd_out = adj_qd_out.data();
    k.adj_q = adj_q.data();
    k.adj_qd = adj_qd.data();
    k.adj_act = adj_act.data();
    k.adj_param = param_.data();
    for (int e = 0; e < env_count_; ++e) k(e);
    st = rigid::batch_check_ok(ok_, "rigid batch step_adjoint");
    if (!st) return st;
    rigid::batch_sum_param_grads(model_, env_count_, param_.data(), adj_model);
    return Status::ok();
  }

 private:
  // a step or adjoint kernel with the inputs both read: the model, the step, the packed q, qd
  // and act, the flags and the scratch
  template <class K>
  K kernel(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt) {
    K k;
    k.m = view_;
    k.substeps = substeps_;
    k.dt = dt;
    k.q = q.data();
    k.qd = qd.data();
    k.act = act.data();
    k.ok = ok_.data();
    k.arena = reinterpret_cast<char*>(arena_.data());
    k.stride = stride_;
    return k;
  }
  Status check(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act) const {
    const std::size_t n = std::size_t(env_count_);
    if (q.size() != n * model_.q_count() || qd.size() != n * model_.dof_count() ||
        act.size() != n * model_.actuator_count())
      return Status::error("rigid batch: packed q/qd/act sizes do not match env_count x the model's counts");
    return Status::ok();
  }
  RigidModelT<S> model_;
  rigid::RigidViewT<S> view_;
  int env_count_ = 0, substeps_ = 1;
  std::size_t stride_ = 0;
  std::vector<double> arena_;  // doubles: 8-byte aligned slices (stride is a multiple of 16)
  std::vector<int> ok_;
  std::vector<S> param_;
};

}  // namespace adj
