// the coupled substep of particles and articulated bodies (engine/solver/coupled.cpp's stages)
// as ADJ_HD functors over views, so the same source runs in plain host loops (CoupledHostT,
// engine/solver/coupled_host.h: bit-equal to SolverT) and as CUDA launches (CudaSolverT,
// engine/cuda/cuda_coupled.cuh). one coupled substep, forward:
//   body kinematics (one thread) -> body-particle pairs (one thread per particle: every body
//   shape in shape order, into (shape, particle) slots, and the particle's control + contact
//   force) -> the pair forces on each body (one thread per body: its slots in (shape, particle)
//   order) -> the particle substep (engine/solver/kernels.h) -> the articulation substep (one
//   thread; the pair forces in fext_extra)
// and backwards: the particle substep adjoint (dL/d the particles' external force) -> the
// articulation substep adjoint (one thread; leaves dL/d fext) -> the pairs' adjoint (one
// thread per particle, dual numbers per touching pair, engine/collision/body_particle.h) ->
// the pairs' body and parameter adjoints gathered in (shape, particle) order and the
// kinematics adjoint (one thread). no atomics: each thread writes its own slots.
//
// the articulation scratch of every substep (rigid::WorkView, kept for the adjoint) and the
// joint-side buffers are carved from one arena (CoupledScratch), host or device memory alike.
// mesh body shapes are not in a RigidViewT (engine/rigid/rigid_view.h): callers refuse them.
#pragma once

#include <vector>

#include "engine/collision/body_particle.h"
#include "engine/rigid/rigid_adjoint.h"
#include "engine/rigid/rigid_batch.h"
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
    rigid::store_contact_params(a.m, adj_par, a.adj_param);
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
    rigid::store_contact_params(a.m, adj_par, a.adj_param);
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

}  // namespace adj
