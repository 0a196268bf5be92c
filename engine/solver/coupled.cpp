// SolverT's dispatch over the stages the Model holds, and the coupled substep of particles
// and articulated bodies (two-way body-particle contact, engine/articulation/body_particle.h).
//
// each coupled substep reads one state and writes the next:
//   body poses and velocities (rigid kinematics) -> body-particle contact forces ->
//   particles: one semi-implicit substep with the contact forces added to the control's
//   external forces -> bodies: one articulation substep with the equal and opposite forces
//   added to their external forces (rigid::Work::fext_extra)
// step_adjoint() records the substeps and runs them backwards: the particle substep adjoint,
// the articulation substep adjoint (rigid::substep_adjoint, which leaves dL/d fext), the
// coupling forces' adjoint (dual numbers per touching pair) and the kinematics'
// vector-Jacobian product for the body poses the forces read. exact and deterministic,
// tested against central differences in tests/engine/articulation/coupling_test.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/articulation/rigid_solver.h"
#include "engine/core/float_env.h"
#include "engine/solver/coupled_kernels.h"
#include "engine/solver/solver.h"

namespace adj {

namespace {

template <class S>
void zero_fill(Array<vec3<S>>& a, int n) {
  a.assign(std::size_t(n), vec3<S>());
}

template <class S>
void add_into(Array<S>& dst, const Array<S>& src) {
  if (dst.size() < src.size()) dst.resize(src.size(), S(0));
  for (std::size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
}

template <class S>
void add_into(Array<vec3<S>>& dst, const Array<vec3<S>>& src) {
  if (dst.size() < src.size()) dst.resize(src.size(), vec3<S>());
  for (std::size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
}

}  // namespace

template <class S>
struct SolverT<S>::Bodies {
  RigidSolverT<S> rigid;              // the articulation alone (models without particles)
  std::vector<StateT<S>> sub;         // coupled substep states, (substeps + 1)
  std::vector<rigid::Work<S>> tape;   // articulation scratch of each substep (poses, fext, Cholesky)
  std::vector<ControlT<S>> pcontrol;  // particle control of each substep (with the contact forces)
  std::vector<vec3<S>> f_particle;
  std::vector<rigid::svec<S>> fext_body;
  std::vector<rigid::CouplingPair<S>> pairs;           // (shape, particle) slots of the pair forces
  std::vector<rigid::CouplingPairGrad<S>> pair_grads;  // ... and of their adjoints
  rigid::AdjWork<S> adj_work;
};

template <class S>
void SolverT<S>::BodiesDelete::operator()(Bodies* p) const {
  delete p;
}

template <class S>
typename SolverT<S>::Bodies& SolverT<S>::bodies() {
  if (!bodies_) {
    bodies_.reset(new Bodies);
    RigidSolverOptions ro;
    ro.substeps = options_.substeps;
    ro.check_finite = options_.check_finite;
    ro.param_grads = options_.body_param_grads;
    bodies_->rigid = RigidSolverT<S>(ro);
  }
  return *bodies_;
}

template <class S>
Status SolverT<S>::step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
                        ContactsT<S>* contacts, StepRecordT<S>* record) {
  if (record) {
    record->substeps = 0;
    if (model.body_count() == 0 || model.particle_count() > 0) record->bodies.clear();
  }
  if (model.body_count() == 0) {
    out.joint_q.clear();
    out.joint_qd.clear();
    if (contacts) contacts->clear();
    return particle_step(model, in, out, control, dt, options_.substeps, contacts, record);
  }
  // bodies, and particles coupled to them: no team of threads (the particle solver's loops take
  // the flush on each of its threads, engine/solver/team.h)
  const FlushSubnormals flush;  // engine/core/float_env.h
  if (&in == &out) return Status::error("step: states are never updated in place (in and out are the same)");
  if (model.particle_count() > 0) return coupled_step(model, in, out, control, dt, contacts);
  out.particle_q.clear();
  out.particle_qd.clear();
  if (contacts) contacts->clear();
  if (record) record->bodies.resize(1);
  return bodies().rigid.step(model.rigid, in, out, control, dt, contacts ? &contacts->bodies : nullptr,
                             record ? &record->bodies[0] : nullptr);
}

template <class S>
Status SolverT<S>::step_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                                const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                ModelGradT<S>& adj_model, const StepRecordT<S>* record) {
  if (model.body_count() == 0)
    return particle_adjoint(model, in, control, dt, options_.substeps, adj_out, adj_in, adj_control, adj_model, record);
  const FlushSubnormals flush;
  fit_coupled_grads(model, control, adj_control, adj_model);
  if (model.particle_count() > 0)
    return coupled_adjoint(model, in, control, dt, adj_out, adj_in, adj_control, adj_model);
  adj_in.particle_q.clear();
  adj_in.particle_qd.clear();
  return bodies().rigid.step_adjoint(model.rigid, in, control, dt, adj_out, adj_in, adj_control, adj_model.rigid,
                                     record && !record->bodies.empty() ? &record->bodies[0] : nullptr);
}

template <class S>
Status SolverT<S>::coupled_substep(const ModelT<S>& pm, const ControlT<S>& control, S h, int k,
                                   ContactsT<S>* contacts) {
  const RigidModelT<S>& rm = pm.rigid;
  Bodies& b = bodies();
  const StateT<S>& in = b.sub[std::size_t(k)];
  StateT<S>& out = b.sub[std::size_t(k + 1)];
  rigid::Work<S>& w = b.tape[std::size_t(k)];
  const rigid::Params<S> par = rigid::lift_params<S>(rm);
  w.resize(rm.body_count(), rm.q_count(), rm.dof_count());
  // particles first (their contacts overwrite the record), on the pair forces of this
  // substep's input: body poses, then the forces
  rigid::kinematics(rm, par, in.joint_q.data(), in.joint_qd.data(), w);
  rigid::CouplingContactsT<S> pair_record;
  rigid::coupling_forces(rm, rigid::coupling_params(pm), w.R, w.p, w.v, pm, in, b.f_particle, b.fext_body,
                         contacts ? &pair_record : nullptr, &b.pairs);
  ControlT<S>& pc = b.pcontrol[std::size_t(k)];
  pc.particle_f = control.particle_f;
  pc.spring_act = control.spring_act;
  pc.tet_act = control.tet_act;
  if (int(pc.particle_f.size()) != pm.particle_count()) zero_fill(pc.particle_f, pm.particle_count());
  for (int i = 0; i < pm.particle_count(); ++i) pc.particle_f[i] += b.f_particle[std::size_t(i)];
  Status st = particle_step(pm, in, out, pc, h, 1, contacts);
  if (!st) return st;
  if (contacts) {
    contacts->body_particle = std::move(pair_record);
    st = rigid_contacts(rm, in, control, contacts->bodies);
    if (!st) return st;
  }
  // bodies: the opposite forces join their external forces
  w.fext_extra = b.fext_body;
  out.joint_q.resize(in.joint_q.size());
  out.joint_qd.resize(in.joint_qd.size());
  if (!rigid::substep(rm, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), h, out.joint_q.data(),
                      out.joint_qd.data(), w, static_cast<RigidContactsT<S>*>(nullptr)))
    return Status::error(
        "coupled step: " +
        rigid_substep_failure(rm, in.joint_q.data(), in.joint_qd.data(), k, options_.substeps).message());
  if (options_.check_finite) return rigid_check_finite(rm, out, "coupled step");
  return Status::ok();
}

template <class S>
Status SolverT<S>::coupled_step(const ModelT<S>& pm, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                                S dt, ContactsT<S>* contacts) {
  const RigidModelT<S>& rm = pm.rigid;
  if (in.particle_count() != pm.particle_count())
    return Status::error("step: the particle state does not match the model");
  if (in.q_count() != rm.q_count() || in.dof_count() != rm.dof_count())
    return Status::error("step: the joint state does not match the model");
  if (int(control.joint_act.size()) != rm.actuator_count())
    return Status::error("step: the control does not match the actuators");
  Bodies& b = bodies();
  const int n = options_.substeps;
  const S h = dt / S(n);
  b.sub.resize(std::size_t(n + 1));
  b.tape.resize(std::size_t(n));
  b.pcontrol.resize(std::size_t(n));
  b.sub[0] = in;
  if (contacts) contacts->clear();
  for (int k = 0; k < n; ++k) {
    Status st = coupled_substep(pm, control, h, k, contacts && k + 1 == n ? contacts : nullptr);
    if (!st) return Status::error(st.message() + " (substep " + std::to_string(k) + ")");
  }
  out = b.sub[std::size_t(n)];
  return Status::ok();
}

template <class S>
Status SolverT<S>::coupled_adjoint(const ModelT<S>& pm, const StateT<S>& in, const ControlT<S>& control, S dt,
                                   const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                   ModelGradT<S>& adj_model) {
  const RigidModelT<S>& rm = pm.rigid;
  const int nb = rm.body_count(), np = pm.particle_count();
  if (adj_out.particle_count() != np || adj_out.q_count() != rm.q_count() || adj_out.dof_count() != rm.dof_count())
    return Status::error("step adjoint: the adjoint of the output state does not match the model");
  // forward, keeping every substep
  StateT<S> scratch_out;
  Status st = coupled_step(pm, in, scratch_out, control, dt, nullptr);
  if (!st) return Status::error(st.message() + " (adjoint recompute)");
  Bodies& b = bodies();
  const int n = options_.substeps;
  const S h = dt / S(n);
  const rigid::Params<S> par = rigid::lift_params<S>(rm);
  const rigid::CouplingParams<S> cp = rigid::coupling_params(pm);
  rigid::Params<S> adj_par = rigid::zero_params(rm);
  rigid::CouplingParams<S> adj_cp{S(0), S(0), S(0), S(0), S(0)};
  StateT<S> adj = adj_out, prev = zero_like(adj_out);
  ControlT<S> pc_adj;
  rigid::AdjWork<S> kin;  // the adjoints of the body poses and velocities the pair forces read
  for (int k = n - 1; k >= 0; --k) {
    const StateT<S>& s = b.sub[std::size_t(k)];
    const rigid::Work<S>& w = b.tape[std::size_t(k)];
    // particles (dL/d contact force = dL/d external force)
    pc_adj = pm.make_control();
    st = particle_adjoint(pm, s, b.pcontrol[std::size_t(k)], h, 1, adj, prev, pc_adj, adj_model);
    if (!st) return Status::error("step adjoint, substep " + std::to_string(k) + ": " + st.message());
    if (!control.particle_f.empty()) add_into(adj_control.particle_f, pc_adj.particle_f);
    add_into(adj_control.spring_act, pc_adj.spring_act);
    add_into(adj_control.tet_act, pc_adj.tet_act);
    // bodies: leaves dL/d fext in adj_work.fext
    prev.joint_q.assign(std::size_t(rm.q_count()), S(0));
    prev.joint_qd.assign(std::size_t(rm.dof_count()), S(0));
    rigid::substep_adjoint(rm, par, s.joint_q.data(), s.joint_qd.data(), control.joint_act.data(), h, w,
                           adj.joint_q.data(), adj.joint_qd.data(), prev.joint_q.data(), prev.joint_qd.data(),
                           adj_control.joint_act.data(), adj_par, b.adj_work);
    // the pair forces, then the body poses and velocities they read
    kin.reset(nb, rm.dof_count());
    rigid::coupling_forces_adjoint(rm, cp, w.R, w.p, w.v, pm, s, pc_adj.particle_f, b.adj_work.fext, kin.R, kin.p,
                                   kin.v, prev.particle_q.data(), prev.particle_qd.data(), adj_cp, &b.pair_grads);
    rigid::kinematics_adjoint(rm, par, s.joint_q.data(), s.joint_qd.data(), w, prev.joint_q.data(),
                              prev.joint_qd.data(), adj_par, kin);
    std::swap(adj, prev);
    if (options_.check_finite) {
      st = check_state_finite(pm, adj, "adjoint");
      if (!st) return Status::error(st.message() + " (substep " + std::to_string(k) + ")");
    }
  }
  adj_in = std::move(adj);
  rigid::add_param_grads(adj_par, adj_model.rigid);
  adj_model.contact_ke += adj_cp.ke;
  adj_model.contact_kd += adj_cp.kd;
  adj_model.contact_mu += adj_cp.mu;
  return Status::ok();
}

#define ADJ_SOLVER_BODIES(S)                                                                              \
  template void SolverT<S>::BodiesDelete::operator()(Bodies*) const;                                      \
  template SolverT<S>::Bodies& SolverT<S>::bodies();                                                      \
  template Status SolverT<S>::step(const ModelT<S>&, const StateT<S>&, StateT<S>&, const ControlT<S>&, S, \
                                   ContactsT<S>*, StepRecordT<S>*);                                       \
  template Status SolverT<S>::step_adjoint(const ModelT<S>&, const StateT<S>&, const ControlT<S>&, S,     \
                                           const StateT<S>&, StateT<S>&, ControlT<S>&, ModelGradT<S>&,    \
                                           const StepRecordT<S>*);
ADJ_SOLVER_BODIES(float)
ADJ_SOLVER_BODIES(double)
#undef ADJ_SOLVER_BODIES

}  // namespace adj
