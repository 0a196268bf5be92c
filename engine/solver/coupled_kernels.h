// the coupled substep of particles and articulated bodies as ADJ_HD functors over views, one
// source for the host (SolverT's coupled step, engine/solver/coupled.cpp: one thread or the
// particle solver's team, engine/solver/team.h) and the device (CudaSolverT,
// engine/cuda/cuda_coupled.cuh), which launch them through the same substep loops below. one
// coupled substep, forward:
//   body kinematics (one thread) -> body-particle pairs (one thread per particle: every body
//   shape in shape order, into (shape, particle) slots, and the particle's control + contact
//   force) -> the pair forces on each body (one thread per body: its slots in (shape, particle)
//   order) -> the particle substep (engine/solver/kernels.h) -> the articulation substep (one
//   thread; the pair forces in fext_extra)
// and backwards: the particle substep adjoint (dL/d the particles' external force) -> the
// articulation substep adjoint (one thread; leaves dL/d fext) -> the pairs' adjoint (one
// thread per particle, dual numbers per touching pair, engine/articulation/body_particle.h) ->
// the pairs' body and parameter adjoints gathered in (shape, particle) order and the
// kinematics adjoint (one thread). no atomics: each thread writes its own slots.
//
// the articulation scratch of every substep (rigid::WorkView, kept for the adjoint) and the
// joint-side buffers are carved from one arena (CoupledScratch), host or device memory alike;
// the substep loops of a step and of its adjoint (coupled_forward_substeps,
// coupled_adjoint_substeps: which buffer each substep reads and writes) are shared, so the
// host's tests cover the device path's wiring; only the uploads, downloads, the particle grid
// and packed states, and the reduction of the model-gradient slots differ (the hooks).
// mesh body shapes touch through their hulls, which RigidViewT holds (engine/model/rigid_view.h).
#pragma once

#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/articulation/rigid_adjoint.h"
#include "engine/articulation/rigid_batch.h"
#include "engine/solver/kernels.h"

namespace adj {

// everything one coupled substep reads and writes (pointers into host or device memory)
template <class S>
struct CoupledArgs {
  KernelArgs<S> p;  // the particle substep; p.control_f == pf, p.adj_control_f == adj_pf
  rigid::RigidViewT<S> m;
  rigid::CouplingParams<S> c;  // the particle model's contact law
  S h = S(0);                  // substep length [s]
  // joint state and control of this substep
  const S* q = nullptr;    // (q_count)
  const S* qd = nullptr;   // (dof_count)
  const S* act = nullptr;  // (actuator_count)
  S* q_out = nullptr;
  S* qd_out = nullptr;
  rigid::WorkView<S> w;  // this substep's articulation scratch; w.fext_extra: the pair forces on the bodies
  rigid::CouplingPair<S>* pairs = nullptr;  // (shape_count x particle_count)
  const vec3<S>* control_f = nullptr;       // the control's external forces, or null
  vec3<S>* pf = nullptr;                    // control + pair force on each particle, (particle_count)
  int* ok = nullptr;                        // 0: the mass matrix is not positive definite
  // adjoint
  const S* adj_q_out = nullptr;
  const S* adj_qd_out = nullptr;
  S* adj_q = nullptr;  // written
  S* adj_qd = nullptr;
  S* adj_act = nullptr;                         // accumulated, (actuator_count)
  S* adj_param = nullptr;                       // accumulated, (param_count, rigid_batch.h's order)
  S* adj_coupling = nullptr;                    // dL/d the pairs' ke, kd, mu, accumulated, (3)
  vec3<S>* adj_pf = nullptr;                    // dL/d pf of this substep, (particle_count), zeroed before
  vec3<S>* adj_control_f = nullptr;             // accumulated, or null when the control has no forces
  rigid::AdjWorkView<S> g;                      // the articulation adjoint's scratch (leaves dL/d fext)
  rigid::AdjWorkView<S> kin;                    // the adjoints of the poses and velocities the pairs read
  rigid::CouplingPairGrad<S>* grads = nullptr;  // (shape_count x particle_count)

  ADJ_HD rigid::CouplingInputs<S> inputs() const {
    return {c, w.R.data(), w.p.data(), w.v.data(), p.q, p.qd, p.m.particle_radius, p.m.particle_count};
  }
};

// body poses and velocities of the substep's input (one thread)
template <class S>
struct CoupledKinematics {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int) const {
    rigid::WorkView<S> w = a.w;
    rigid::kinematics(a.m, rigid::view_params(a.m), a.q, a.qd, w);
  }
};

// particle i against every body shape: its pair slots and pf = control force + pair force
template <class S>
struct CoupledPairForces {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int i) const {
    const vec3<S> f = rigid::coupling_particle(a.m, a.inputs(), i, a.pairs);
    a.pf[i] = (a.control_f ? a.control_f[i] : vec3<S>()) + f;
  }
};

// the pair forces on body b
template <class S>
struct CoupledBodyForces {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int b) const {
    a.w.fext_extra[b] = rigid::coupling_body(a.m, a.p.m.particle_count, b, a.pairs);
  }
};

// the articulation substep with the pair forces (one thread)
template <class S>
struct CoupledArticulation {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int) const {
    rigid::WorkView<S> w = a.w;
    const bool ok = rigid::substep(a.m, rigid::view_params(a.m), a.q, a.qd, a.act, a.h, a.q_out, a.qd_out, w,
                                   static_cast<rigid::NoRecord*>(nullptr));
    *a.ok = ok ? 1 : 0;
  }
};

// the articulation substep's adjoint (one thread): dL/d the input joint state, the actuators,
// the parameters, and dL/d fext in g.fext
template <class S>
struct CoupledArticulationAdjoint {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int) const {
    rigid::ParamsT<S, rigid::Span<S>> adj_par = rigid::param_spans(a.m, a.adj_param);
    rigid::AdjWorkView<S> g = a.g;
    rigid::substep_adjoint(a.m, rigid::view_params(a.m), a.q, a.qd, a.act, a.h, a.w, a.adj_q_out, a.adj_qd_out, a.adj_q,
                           a.adj_qd, a.adj_act, adj_par, g);
    rigid::store_scalar_params(a.m, adj_par, a.adj_param);
  }
};

// particle i's pairs backwards: adds to dL/d its position and velocity (the particle
// adjoint's output) and to the control's force adjoint; writes the pairs' gradient slots
template <class S>
struct CoupledPairAdjoint {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int i) const {
    if (a.adj_control_f) a.adj_control_f[i] += a.adj_pf[i];
    rigid::coupling_particle_adjoint(a.m, a.inputs(), i, a.adj_pf[i], a.g.fext.data(), a.grads, a.p.adj_q_in[i],
                                     a.p.adj_qd_in[i]);
  }
};

// the pairs' body and parameter adjoints in (shape, particle) order, then the kinematics
// adjoint of the poses they read (one thread)
template <class S>
struct CoupledBodyAdjoint {
  CoupledArgs<S> a;
  ADJ_HD void operator()(int) const {
    const int nb = a.m.body_count(), np = a.p.m.particle_count;
    rigid::AdjWorkView<S> kin = a.kin;
    kin.reset(nb, a.m.dof_count());
    for (int b = 0; b < nb; ++b) rigid::coupling_body_adjoint(a.m, np, b, a.grads, kin.R[b], kin.p[b], kin.v[b]);
    rigid::CouplingParams<S> adj_c{a.adj_coupling[0], a.adj_coupling[1], S(0), a.adj_coupling[2], S(0)};
    rigid::coupling_params_adjoint(a.m, np, a.grads, adj_c);
    a.adj_coupling[0] = adj_c.ke;
    a.adj_coupling[1] = adj_c.kd;
    a.adj_coupling[2] = adj_c.mu;
    rigid::ParamsT<S, rigid::Span<S>> adj_par = rigid::param_spans(a.m, a.adj_param);
    rigid::kinematics_adjoint(a.m, rigid::view_params(a.m), a.q, a.qd, a.w, a.adj_q, a.adj_qd, adj_par, kin);
    rigid::store_scalar_params(a.m, adj_par, a.adj_param);
  }
};

// one coupled substep on an executor with launch(n, functor) (engine/solver/kernels.h's)
template <class S, class Exec>
inline void coupled_substep_forward(const Exec& exec, const CoupledArgs<S>& a) {
  exec.launch(1, CoupledKinematics<S>{a});
  exec.launch(a.p.m.particle_count, CoupledPairForces<S>{a});
  exec.launch(a.m.body_count(), CoupledBodyForces<S>{a});
  substep_forward(exec, a.p);
  exec.launch(1, CoupledArticulation<S>{a});
}

// its adjoint: a.p holds this substep's input and recorded f_total, a.w its forward scratch
// (coupled_substep_forward ran on the same input), a.adj_pf zeroed
template <class S, class Exec>
inline void coupled_substep_adjoint(const Exec& exec, const CoupledArgs<S>& a) {
  substep_adjoint(exec, a.p, /*recompute=*/false);
  exec.launch(1, CoupledArticulationAdjoint<S>{a});
  exec.launch(a.p.m.particle_count, CoupledPairAdjoint<S>{a});
  exec.launch(1, CoupledBodyAdjoint<S>{a});
}

// the articulation side of a coupled step, carved from one arena (host or device memory; a
// null base only measures): each substep's scratch and joint state, the adjoint's buffers
template <class S>
struct CoupledScratch {
  std::vector<rigid::WorkView<S>> w;  // each substep's scratch (its fext_extra included), (substeps)
  rigid::Span<S> q, qd;               // each substep's input and the step's output, ((substeps + 1) x q/dof_count)
  rigid::AdjWorkView<S> g, kin;
  rigid::Span<S> adj_a, adj_b;                      // joint adjoints, ping-pong, (q_count + dof_count) each
  rigid::Span<S> adj_act, adj_param, adj_coupling;  // (actuator_count), (param_count), (3)
  rigid::Span<int> ok;                              // one flag per substep
  std::size_t bytes = 0;

  void carve(char* base, const rigid::RigidViewT<S>& m, int substeps) {
    rigid::ArenaCursor a{base, 0};
    const int nb = m.body_count(), nq = m.q_count(), nv = m.dof_count();
    w.resize(std::size_t(substeps));
    for (rigid::WorkView<S>& x : w) {
      x.carve(a, nb, nq, nv);
      x.fext_extra = a.take<rigid::svec<S>>(nb);
    }
    q = a.take<S>((substeps + 1) * nq);
    qd = a.take<S>((substeps + 1) * nv);
    g.carve(a, nb, nv);
    kin.carve(a, nb, nv);
    adj_a = a.take<S>(nq + nv);
    adj_b = a.take<S>(nq + nv);
    adj_act = a.take<S>(m.actuator_count());
    adj_param = a.take<S>(m.param_count());
    adj_coupling = a.take<S>(3);
    ok = a.take<int>(substeps);
    bytes = (a.offset + 15) / 16 * 16;
  }

  // substep k's joint-side arguments (forward)
  void bind(CoupledArgs<S>& a, const rigid::RigidViewT<S>& m, int k) const {
    const int nq = m.q_count(), nv = m.dof_count();
    a.q = q.data() + std::size_t(k) * nq;
    a.qd = qd.data() + std::size_t(k) * nv;
    a.q_out = q.data() + std::size_t(k + 1) * nq;
    a.qd_out = qd.data() + std::size_t(k + 1) * nv;
    a.w = w[std::size_t(k)];
    a.ok = ok.data() + k;
  }
};

// the particle side of a coupled step (host or device pointers): each substep's state and
// total force, the pair slots, and the adjoint's buffers
template <class S>
struct CoupledBuffers {
  std::vector<vec3<S>*> q, qd;    // each substep's input and the step's output, (substeps + 1) x (particle_count)
  std::vector<vec3<S>*> f_total;  // each substep's total particle force, (substeps) x (particle_count)
  vec3<S>* pf = nullptr;          // (particle_count)
  vec3<S>* adj_pf = nullptr;      // (particle_count)
  rigid::CouplingPair<S>* pairs = nullptr;
  rigid::CouplingPairGrad<S>* grads = nullptr;
  vec3<S>* adj_q[3] = {};      // [0] dL/d the output's positions; [1], [2] the substeps' (ping-pong)
  vec3<S>* adj_qd[3] = {};     // ... and velocities
  S* adj_joint_out = nullptr;  // dL/d the output's joint state, (q_count + dof_count)
  vec3<S>*dummy_q = nullptr, *dummy_qd = nullptr, *adj_f = nullptr, *adj_q_slot = nullptr, *adj_qd_slot = nullptr;
};

// zeroes a vec3 array (one thread per entry)
template <class S>
struct ZeroVec3 {
  vec3<S>* x;
  ADJ_HD void operator()(int i) const { x[i] = vec3<S>(); }
};

// every substep of a step: `a` holds what the substeps share (the particle model, control and
// force slots; the rigid view, contact law, substep length, joint control); prepare(exec, p, k)
// readies substep k's particle arguments p (its input set: the particle grid of p.q, packed
// states) on every thread of the executor
template <class S, class Exec, class Prepare>
void coupled_forward_substeps(const Exec& exec, CoupledArgs<S> a, const CoupledScratch<S>& sc,
                              const CoupledBuffers<S>& b, int substeps, Prepare&& prepare) {
  a.pairs = b.pairs;
  a.pf = b.pf;
  a.p.control_f = b.pf;
  for (int k = 0; k < substeps; ++k) {
    a.p.q = b.q[std::size_t(k)];
    a.p.qd = b.qd[std::size_t(k)];
    a.p.q_out = b.q[std::size_t(k + 1)];
    a.p.qd_out = b.qd[std::size_t(k + 1)];
    a.p.f_total = b.f_total[std::size_t(k)];
    prepare(exec, a.p, k);
    sc.bind(a, a.m, k);
    coupled_substep_forward(exec, a);
  }
}

// where coupled_adjoint_substeps left dL/d the step's input
template <class S>
struct CoupledAdjointOut {
  int particles = 0;          // CoupledBuffers::adj_q / adj_qd index
  const S* joints = nullptr;  // (q_count + dof_count)
};

// the substeps backwards, after coupled_forward_substeps on the same input: `a` as there,
// plus the accumulators it shares (the control's force, spring and tet adjoints, the
// particle-side model gradient slots); prepare as there; before(exec) and after(exec) run
// around each substep (the host reduces the model gradients per substep there, as the
// particle-only step does)
template <class S, class Exec, class Prepare, class Before, class After>
CoupledAdjointOut<S> coupled_adjoint_substeps(const Exec& exec, CoupledArgs<S> a, const CoupledScratch<S>& sc,
                                              const CoupledBuffers<S>& b, int substeps, Prepare&& prepare,
                                              Before&& before, After&& after) {
  const int nq = a.m.q_count();
  a.pairs = b.pairs;
  a.pf = b.pf;
  a.p.control_f = b.pf;
  a.adj_act = sc.adj_act.data();
  a.adj_param = sc.adj_param.data();
  a.adj_coupling = sc.adj_coupling.data();
  a.adj_pf = b.adj_pf;
  a.g = sc.g;
  a.kin = sc.kin;
  a.grads = b.grads;
  a.p.q_out = b.dummy_q;
  a.p.qd_out = b.dummy_qd;
  a.p.adj_f = b.adj_f;
  a.p.adj_q_slot = b.adj_q_slot;
  a.p.adj_qd_slot = b.adj_qd_slot;
  a.p.adj_control_f = b.adj_pf;
  CoupledAdjointOut<S> up{0, b.adj_joint_out};
  for (int k = substeps - 1; k >= 0; --k) {
    const int target = up.particles == 1 ? 2 : 1;
    S* joints = ((k % 2) ? sc.adj_a : sc.adj_b).data();
    a.p.q = b.q[std::size_t(k)];
    a.p.qd = b.qd[std::size_t(k)];
    a.p.f_total = b.f_total[std::size_t(k)];
    prepare(exec, a.p, k);
    sc.bind(a, a.m, k);
    a.adj_q_out = up.joints;
    a.adj_qd_out = up.joints + nq;
    a.adj_q = joints;
    a.adj_qd = joints + nq;
    a.p.adj_q_out = b.adj_q[up.particles];
    a.p.adj_qd_out = b.adj_qd[up.particles];
    a.p.adj_q_in = b.adj_q[target];
    a.p.adj_qd_in = b.adj_qd[target];
    exec.launch(a.p.m.particle_count, ZeroVec3<S>{b.adj_pf});
    before(exec);
    coupled_substep_adjoint(exec, a);
    after(exec);
    up = {target, joints};
  }
  return up;
}

// the gradients a step adjoint with bodies accumulates into, sized to the model (SolverT and
// CUDA alike): the articulation's and the particles' parts are made anew only
// when their shapes do not match (what they hold is kept otherwise), the joint actuators' and
// the particle controls' adjoints grown to the model
template <class S>
void fit_coupled_grads(const ModelT<S>& pm, const ControlT<S>& control, ControlT<S>& adj_control,
                       ModelGradT<S>& adj_model) {
  const RigidModelT<S>& rm = pm.rigid;
  if (int(adj_model.rigid.body_mass.size()) != rm.body_count() ||
      int(adj_model.rigid.actuator_kp.size()) != rm.actuator_count() ||
      int(adj_model.rigid.dof_damping.size()) != rm.dof_count())
    adj_model.rigid = rm.make_grad();
  if (int(adj_model.particle_mass.size()) != pm.particle_count()) {
    RigidModelGradT<S> keep = std::move(adj_model.rigid);
    adj_model = pm.make_grad();
    adj_model.rigid = std::move(keep);
  }
  adj_control.joint_act.resize(std::size_t(rm.actuator_count()), S(0));
  if (!control.particle_f.empty() && adj_control.particle_f.size() < std::size_t(pm.particle_count()))
    adj_control.particle_f.resize(std::size_t(pm.particle_count()), vec3<S>());
  if (adj_control.spring_act.size() < std::size_t(pm.spring_count()))
    adj_control.spring_act.resize(std::size_t(pm.spring_count()), S(0));
  if (adj_control.tet_act.size() < std::size_t(pm.tet_count()))
    adj_control.tet_act.resize(std::size_t(pm.tet_count()), S(0));
}

}  // namespace adj
