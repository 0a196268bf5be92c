// SolverT's dispatch over the stages the Model holds, and the coupled step of particles and
// articulated bodies (two-way body-particle contact, engine/articulation/body_particle.h): the
// functors of engine/solver/coupled_kernels.h launched by its substep loops, on one thread or
// the particle solver's team (engine/solver/team.h, chosen by measured time as the particle
// step chooses), with the particle stages' SIMD lanes (kernels_simd.h). The CUDA backend
// launches the same functors through the same loops (engine/cuda/cuda_coupled.cuh).
//
// each coupled substep reads one state and writes the next:
//   body poses and velocities (rigid kinematics) -> body-particle contact forces ->
//   particles: one semi-implicit substep with the contact forces added to the control's
//   external forces -> bodies: one articulation substep with the equal and opposite forces
//   added to their external forces (rigid::WorkView::fext_extra)
// implicit particles (the model's integrator, engine/solver/implicit.h) replace the semi-implicit
// particle substep by the backward Euler solve with the body-particle pairs inside it, the bodies
// then feeling the converged pairs (implicit_coupled_forward / implicit_coupled_adjoint below).
// step_adjoint() recomputes the substeps (keeping each one's states, articulation scratch and
// total particle force) and runs them backwards: the particle substep adjoint, the
// articulation substep adjoint (which leaves dL/d fext), the coupling forces' adjoint (dual
// numbers per touching pair) and the kinematics' vector-Jacobian product for the body poses
// the forces read. exact and deterministic, tested against central differences in
// tests/engine/articulation/coupling_test.cpp and against reference bits in
// tests/engine/solver/coupled_kernels_test.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/articulation/rigid_queries.h"
#include "engine/core/float_env.h"
#include "engine/solver/bodies_scratch.h"
#include "engine/solver/coupled_kernels.h"
#include "engine/solver/particle_scratch.h"
#include "engine/solver/solver.h"
#include "engine/solver/stability.h"

namespace adj {

template <class S>
void SolverT<S>::BodiesDelete::operator()(Bodies* p) const {
  delete p;
}

template <class S>
typename SolverT<S>::Bodies& SolverT<S>::bodies() {
  if (!bodies_) {
    bodies_.reset(new Bodies);
    bodies_->rigid = ArticulationStageT<S>({.substeps = options_.substeps,
                                            .check_finite = options_.check_finite,
                                            .param_grads = options_.body_param_grads});
  }
  return *bodies_;
}

// the coupled substeps of implicit particles (one thread, engine/solver/implicit.h): per substep
// the body kinematics, the particles' backward Euler solve with the body-particle pairs inside it
// (the bodies held at the substep input's poses and velocities), the converged pairs' forces on
// the bodies, the articulation substep. The same functors as the explicit substep's, on the
// particle stage's state buffers
template <class S>
static Status implicit_coupled_forward(ImplicitSolverT<S>& solver, const ModelT<S>& pm, const ControlT<S>& control,
                                       CoupledArgs<S> a, const CoupledScratch<S>& sc, const CoupledBuffers<S>& buf,
                                       int substeps, const ImplicitOptions& options) {
  a.pairs = buf.pairs;
  a.pf = buf.pf;
  for (int k = 0; k < substeps; ++k) {
    const std::size_t kk = std::size_t(k);
    sc.bind(a, a.m, k);
    a.p.q = buf.q[kk];
    a.p.qd = buf.qd[kk];
    CoupledKinematics<S>{a}(0);
    const ImplicitBodies<S> bodies{&a.m, a.w.R.data(), a.w.p.data(), a.w.v.data(), buf.pairs};
    if (Status st = solver.coupled_substep(pm, buf.q[kk], buf.qd[kk], buf.q[kk + 1], buf.qd[kk + 1], control, a.h,
                                           bodies, options, k);
        !st)
      return Status::error("coupled step: " + st.message());
    for (int b = 0; b < a.m.body_count(); ++b) CoupledBodyForces<S>{a}(b);
    CoupledArticulation<S>{a}(0);
  }
  return Status::ok();
}

// their adjoint, after implicit_coupled_forward on the same input: per substep backwards the
// articulation's adjoint (dL/d the pair forces on the bodies), the particles' transposed solve
// (which adds the pairs' body and parameter adjoints to their slots), the pairs' and the
// kinematics' adjoint. grads: the particle-side gradient slots over partials, reduced per substep
template <class S>
static Status implicit_coupled_adjoint(ImplicitSolverT<S>& solver, const ModelT<S>& pm, const ControlT<S>& control,
                                       CoupledArgs<S> a, const CoupledScratch<S>& sc, const CoupledBuffers<S>& buf,
                                       int substeps, ControlT<S>& adj_control, ModelGradT<S>& adj_model,
                                       const GradSlots& slots, std::vector<S>& partials, const ImplicitOptions& options,
                                       CoupledAdjointOut<S>& out) {
  const int nq = a.m.q_count();
  a.pairs = buf.pairs;
  a.pf = buf.pf;
  a.adj_act = sc.adj_act.data();
  a.adj_param = sc.adj_param.data();
  a.adj_coupling = sc.adj_coupling.data();
  a.g = sc.g;
  a.kin = sc.kin;
  a.grads = buf.grads;
  const ModelGradView<S> grads = grad_view(adj_model, slots, partials.data());
  CoupledAdjointOut<S> up{0, buf.adj_joint_out};
  for (int k = substeps - 1; k >= 0; --k) {
    const std::size_t kk = std::size_t(k);
    const int target = up.particles == 1 ? 2 : 1;
    S* joints = ((k % 2) ? sc.adj_a : sc.adj_b).data();
    sc.bind(a, a.m, k);
    a.p.q = buf.q[kk];
    a.p.qd = buf.qd[kk];
    a.adj_q_out = up.joints;
    a.adj_qd_out = up.joints + nq;
    a.adj_q = joints;
    a.adj_qd = joints + nq;
    CoupledArticulationAdjoint<S>{a}(0);
    const ImplicitBodies<S> bodies{&a.m,      a.w.R.data(), a.w.p.data(),   a.w.v.data(),
                                   buf.pairs, buf.grads,    a.g.fext.data()};
    std::fill(partials.begin(), partials.end(), S(0));
    if (Status st = solver.coupled_substep_adjoint(pm, buf.q[kk], buf.qd[kk], buf.qd[kk + 1], control, a.h, bodies,
                                                   buf.adj_q[up.particles], buf.adj_qd[up.particles], buf.adj_q[target],
                                                   buf.adj_qd[target], adj_control, adj_model, grads, options, k);
        !st)
      return Status::error("coupled step adjoint: " + st.message());
    add_slots(slots, partials.data(), adj_model, /*per_element=*/false);
    CoupledBodyAdjoint<S>{a}(0);
    up = {target, joints};
  }
  out = up;
  return Status::ok();
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
  // bodies (and particles coupled to them): the articulation's stages run with subnormals
  // flushed, as the particle stages' threads do (engine/solver/team.h)
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
Status SolverT<S>::coupled_forward(const ModelT<S>& pm, const StateT<S>& in, const ControlT<S>& control, S dt,
                                   StateT<S>* out) {
  const RigidModelT<S>& rm = pm.rigid;
  const int n = options_.substeps, np = pm.particle_count(), nq = rm.q_count(), nv = rm.dof_count();
  if (in.particle_count() != np) return Status::error("step: the particle state does not match the model");
  if (in.q_count() != nq || in.dof_count() != nv)
    return Status::error("step: the joint state does not match the model");
  if (int(control.joint_act.size()) != rm.actuator_count())
    return Status::error("step: the control does not match the actuators");
  if (!control_ok(pm, control)) return Status::error("step: control does not match the model");
  Scratch& ps = *scratch_;
  Bodies& b = bodies();
  ps.resize(pm, n);
  const rigid::RigidViewT<S> rv = rigid::make_rigid_view(rm);
  b.fit(pm, rv, n);
  const S h = dt / S(n);
  CoupledArgs<S> a = coupled_args(pm, rv, control, h);
  const CoupledBuffers<S> buf = coupled_buffers(in, out);
  std::copy(in.joint_q.begin(), in.joint_q.end(), b.sc.q.data());
  std::copy(in.joint_qd.begin(), in.joint_qd.end(), b.sc.qd.data());
  const int lanes = ps.lane_bytes;
  if (pm.integrator == INTEGRATOR_IMPLICIT) {
    if (Status st = implicit_coupled_forward(ps.implicit, pm, control, a, b.sc, buf, n, options_.implicit); !st)
      return st;
  } else {
    run_chosen(team_size(options_.thread_count), lanes, substep_work(a.p.m), b.forward_team, [&](const auto& exec) {
      if (lanes > 0) {
        const PackStates<S> first{in.particle_q.data(), in.particle_qd.data(), np, ps.pack(0)};
        exec.launch(first.blocks(), first);
      }
      coupled_forward_substeps(exec, a, b.sc, buf, n, [&](const auto& x, KernelArgs<S>& p, int k) {
        if (lanes > 0) {
          p.state_pack = ps.pack(k % 2);
          p.state_pack_out = ps.pack((k + 1) % 2);
        }
        if (pm.particle_contact) x.single([&] { ps.build_grid(pm, p.q); });
      });
    });
  }
  for (int k = 0; k < n; ++k)
    if (!b.sc.ok[k])
      return Status::error(
          "coupled step: " +
          rigid_substep_failure(rm, b.sc.q.data() + std::size_t(k) * nq, b.sc.qd.data() + std::size_t(k) * nv, k, n)
              .message() +
          " (substep " + std::to_string(k) + ")");
  if (!options_.check_finite || !out) return Status::ok();
  // a non-finite value stays so in every later substep: one check of the output, then the
  // substeps in turn for the first whose output is not finite, named with its particle or joint
  StateT<S> s;
  s.joint_q.assign(b.sc.q.data() + std::size_t(n) * nq, b.sc.q.data() + std::size_t(n + 1) * nq);
  s.joint_qd.assign(b.sc.qd.data() + std::size_t(n) * nv, b.sc.qd.data() + std::size_t(n + 1) * nv);
  if (particles_finite(*out) && rigid_check_finite(rm, s, "coupled step")) return Status::ok();
  for (int k = 0; k < n; ++k) {
    s.particle_q.assign(buf.q[std::size_t(k + 1)], buf.q[std::size_t(k + 1)] + np);
    s.particle_qd.assign(buf.qd[std::size_t(k + 1)], buf.qd[std::size_t(k + 1)] + np);
    s.joint_q.assign(b.sc.q.data() + std::size_t(k + 1) * nq, b.sc.q.data() + std::size_t(k + 2) * nq);
    s.joint_qd.assign(b.sc.qd.data() + std::size_t(k + 1) * nv, b.sc.qd.data() + std::size_t(k + 2) * nv);
    const Status st = check_state_finite(pm, s, "coupled step");
    if (!st)
      return Status::error(st.message() + " (substep " + std::to_string(k) + ")" +
                           (particles_finite(s) ? std::string() : stability_note(pm, double(h), double(dt))));
  }
  return Status::ok();
}

template <class S>
CoupledArgs<S> SolverT<S>::coupled_args(const ModelT<S>& pm, const rigid::RigidViewT<S>& rv, const ControlT<S>& control,
                                        S h) {
  Scratch& ps = *scratch_;
  CoupledArgs<S> a;
  a.p = base_args(pm, control, h);
  a.p.f_slot = ps.f_slot.data();
  a.p.grid = ps.grid_view();
  a.m = rv;
  a.c = rigid::coupling_params(pm);
  a.h = h;
  a.act = data_or_null(control.joint_act);
  a.control_f = data_or_null(control.particle_f);
  return a;
}

template <class S>
CoupledBuffers<S> SolverT<S>::coupled_buffers(const StateT<S>& in, StateT<S>* out) {
  Scratch& ps = *scratch_;
  Bodies& b = *bodies_;
  const int n = options_.substeps, np = in.particle_count();
  CoupledBuffers<S> buf;
  // the kernels read substep inputs through the same pointers they write outputs through
  buf.q.push_back(const_cast<vec3<S>*>(in.particle_q.data()));
  buf.qd.push_back(const_cast<vec3<S>*>(in.particle_qd.data()));
  for (int k = 0; k < n; ++k) {
    StateT<S>& s = (out && k + 1 == n) ? *out : ps.sub[std::size_t(k)];
    s.particle_q.resize(std::size_t(np));
    s.particle_qd.resize(std::size_t(np));
    buf.q.push_back(s.particle_q.data());
    buf.qd.push_back(s.particle_qd.data());
    buf.f_total.push_back(ps.f_total_sub[std::size_t(k)].data());
  }
  buf.pf = b.pf.data();
  buf.adj_pf = b.adj_pf.data();
  buf.pairs = b.pairs.data();
  buf.grads = b.grads.data();
  buf.adj_q[1] = ps.adj_a.particle_q.data();
  buf.adj_qd[1] = ps.adj_a.particle_qd.data();
  buf.adj_q[2] = ps.adj_b.particle_q.data();
  buf.adj_qd[2] = ps.adj_b.particle_qd.data();
  buf.dummy_q = ps.dummy_q.data();
  buf.dummy_qd = ps.dummy_qd.data();
  buf.adj_f = ps.adj_f.data();
  buf.adj_q_slot = ps.adj_q_slot.data();
  buf.adj_qd_slot = ps.adj_qd_slot.data();
  return buf;
}

template <class S>
Status SolverT<S>::coupled_step(const ModelT<S>& pm, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                                S dt, ContactsT<S>* contacts) {
  if (contacts) contacts->clear();
  Status st = coupled_forward(pm, in, control, dt, &out);
  if (!st) return st;
  const RigidModelT<S>& rm = pm.rigid;
  const int n = options_.substeps, nq = rm.q_count(), nv = rm.dof_count();
  const Bodies& b = *bodies_;
  out.joint_q.assign(b.sc.q.data() + std::size_t(n) * nq, b.sc.q.data() + std::size_t(n + 1) * nq);
  out.joint_qd.assign(b.sc.qd.data() + std::size_t(n) * nv, b.sc.qd.data() + std::size_t(n + 1) * nv);
  if (!contacts) return Status::ok();
  // the contacts of the last substep's input: the particles', the pairs it left in their slots,
  // the bodies'
  StateT<S> last;
  last.particle_q = n == 1 ? in.particle_q : scratch_->sub[std::size_t(n - 2)].particle_q;
  last.particle_qd = n == 1 ? in.particle_qd : scratch_->sub[std::size_t(n - 2)].particle_qd;
  last.joint_q.assign(b.sc.q.data() + std::size_t(n - 1) * nq, b.sc.q.data() + std::size_t(n) * nq);
  last.joint_qd.assign(b.sc.qd.data() + std::size_t(n - 1) * nv, b.sc.qd.data() + std::size_t(n) * nv);
  compute_contacts(pm, last, *contacts);
  rigid::coupling_record(rm, pm.particle_count(), b.pairs.data(), &contacts->body_particle);
  return rigid_contacts(rm, last, control, contacts->bodies);
}

template <class S>
Status SolverT<S>::coupled_adjoint(const ModelT<S>& pm, const StateT<S>& in, const ControlT<S>& control, S dt,
                                   const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                   ModelGradT<S>& adj_model) {
  const RigidModelT<S>& rm = pm.rigid;
  const int n = options_.substeps, np = pm.particle_count(), nq = rm.q_count(), nv = rm.dof_count();
  if (adj_out.particle_count() != np || adj_out.q_count() != nq || adj_out.dof_count() != nv)
    return Status::error("step adjoint: the adjoint of the output state does not match the model");
  // forward, keeping every substep
  Status st = coupled_forward(pm, in, control, dt, nullptr);
  if (!st) return Status::error(st.message() + " (adjoint recompute)");
  Scratch& ps = *scratch_;
  Bodies& b = *bodies_;
  const rigid::RigidViewT<S> rv = rigid::make_rigid_view(rm);
  // the accumulators: the joint actuators' adjoint from the caller, the parameters' zeroed
  std::fill(b.sc.adj_act.begin(), b.sc.adj_act.end(), S(0));
  std::copy(adj_control.joint_act.begin(), adj_control.joint_act.begin() + rm.actuator_count(), b.sc.adj_act.data());
  std::fill(b.sc.adj_param.begin(), b.sc.adj_param.end(), S(0));
  std::fill(b.sc.adj_coupling.begin(), b.sc.adj_coupling.end(), S(0));
  b.adj_joint_out.assign(adj_out.joint_q.begin(), adj_out.joint_q.end());
  b.adj_joint_out.insert(b.adj_joint_out.end(), adj_out.joint_qd.begin(), adj_out.joint_qd.end());
  CoupledBuffers<S> buf = coupled_buffers(in, nullptr);
  buf.adj_q[0] = const_cast<vec3<S>*>(adj_out.particle_q.data());  // read only
  buf.adj_qd[0] = const_cast<vec3<S>*>(adj_out.particle_qd.data());
  buf.adj_joint_out = b.adj_joint_out.data();
  CoupledArgs<S> a = coupled_args(pm, rv, control, dt / S(n));
  a.adj_control_f = control.particle_f.empty() ? nullptr : adj_control.particle_f.data();
  a.p.adj_spring_act = data_or_null(adj_control.spring_act);
  a.p.adj_tet_act = data_or_null(adj_control.tet_act);
  // the particle-side model gradients: per element into adj_model, the scene-wide fields'
  // partials summed per substep (as the particle-only step does)
  const GradSlots slots = grad_slots(pm);
  ps.grad_partials.assign(std::size_t(slots.size), S(0));
  a.p.g = grad_view(adj_model, slots, ps.grad_partials.data());
  const int lanes = ps.lane_bytes;
  CoupledAdjointOut<S> r;
  if (pm.integrator == INTEGRATOR_IMPLICIT) {
    if (Status st = implicit_coupled_adjoint(ps.implicit, pm, control, a, b.sc, buf, n, adj_control, adj_model, slots,
                                             ps.grad_partials, options_.implicit, r);
        !st)
      return st;
  } else {
    run_chosen(team_size(options_.thread_count), lanes, substep_work(a.p.m), b.adjoint_team, [&](const auto& exec) {
      auto prepare = [&](const auto& x, KernelArgs<S>& p, int k) {
        if (lanes > 0) {
          const PackStates<S> input{p.q, p.qd, np, ps.pack(k % 2)};
          x.launch(input.blocks(), input);
          p.state_pack = ps.pack(k % 2);
        }
        if (pm.particle_contact) x.single([&] { ps.build_grid(pm, p.q); });
      };
      auto before = [&](const auto& x) {
        x.single([&] { std::fill(ps.grad_partials.begin(), ps.grad_partials.end(), S(0)); });
      };
      auto after = [&](const auto& x) {
        x.single([&] { add_slots(slots, ps.grad_partials.data(), adj_model, /*per_element=*/false); });
      };
      const CoupledAdjointOut<S> o = coupled_adjoint_substeps(exec, a, b.sc, buf, n, prepare, before, after);
      exec.single([&] { r = o; });  // the same on every thread
    });
  }
  adj_in = zero_like(adj_out);
  adj_in.particle_q.assign(buf.adj_q[r.particles], buf.adj_q[r.particles] + np);
  adj_in.particle_qd.assign(buf.adj_qd[r.particles], buf.adj_qd[r.particles] + np);
  adj_in.joint_q.assign(r.joints, r.joints + nq);
  adj_in.joint_qd.assign(r.joints + nq, r.joints + nq + nv);
  std::copy(b.sc.adj_act.data(), b.sc.adj_act.data() + rm.actuator_count(), adj_control.joint_act.begin());
  rigid::batch_sum_param_grads(rm, 1, b.sc.adj_param.data(), adj_model.rigid);
  adj_model.contact_ke += b.sc.adj_coupling[0];
  adj_model.contact_kd += b.sc.adj_coupling[1];
  adj_model.contact_mu += b.sc.adj_coupling[2];
  return options_.check_finite ? check_state_finite(pm, adj_in, "adjoint") : Status::ok();
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
