// CudaSolverT's coupled path: particles and articulated bodies stepped together on the device,
// engine/solver/coupled_kernels.h's functors launched by the substep loops that SolverT's
// coupled step (engine/solver/coupled.cpp) runs on the host; here: the device buffers, uploads
// and downloads. one thread per particle for the
// body-particle pairs and the particle substep, one per body for the pair forces' gather, one
// thread for the articulation's substep and its adjoint (the tree's recursions are serial).
// no float atomics. on the device the results match the CPU within float round-off (nvcc
// contracts a*b+c into FMAs); the particle-side model gradients are reduced once per step
// (cuda_backend.cu does the same), not per substep. mesh body shapes are refused at upload:
// the view holds their hulls and the functors compile for the device, but their contact has
// not run on one (no GPU was lent to check it against the CPU).
//
// internal to engine/cuda (nvcc only): included by cuda_coupled_float.cu and
// cuda_coupled_double.cu, one scalar each, so the two halves of this heavy translation unit
// (the rigid stages and their adjoints on the device) compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/cuda/cuda_solver_impl.cuh"
#include "engine/solver/coupled_kernels.h"

namespace adj::cuda_detail {

template <class S>
struct CoupledDevice {
  RigidModelT<S> rigid;                            // host copy: the parameter sums, messages
  rigid::RigidViewT<S> view;                       // spans over the device copies below
  std::vector<DeviceArray<unsigned char>> blocks;  // one per array of the view
  DeviceArray<unsigned char> arena;                // CoupledScratch's
  CoupledScratch<S> sc;                            // spans into arena
  DeviceArray<vec3<S>> pf, adj_pf;                 // control + pair force, its adjoint, (particle_count)
  DeviceArray<rigid::CouplingPair<S>> pairs;       // (shape_count x particle_count)
  DeviceArray<rigid::CouplingPairGrad<S>> grads;   // (shape_count x particle_count)
  DeviceArray<S> act, adj_top;                     // joint control; the output's joint adjoint, (q_count + dof_count)
  std::vector<int> ok;                             // the substeps' flags, downloaded
};

template <class S>
void CoupledDeviceDelete<S>::operator()(CoupledDevice<S>* p) const {
  delete p;
}

namespace {

// a device copy of one host span of the rigid model
template <class T, class Impl, class S>
rigid::Span<const T> copy_span(Impl& d, CoupledDevice<S>& c, const rigid::Span<const T>& h) {
  c.blocks.emplace_back();
  DeviceArray<unsigned char>& b = c.blocks.back();
  d.check(b.resize(sizeof(T) * std::size_t(h.size())));
  if (h.size() > 0 && b.get())
    d.check(cudaMemcpy(b.get(), h.data(), sizeof(T) * std::size_t(h.size()), cudaMemcpyHostToDevice));
  return rigid::Span<const T>(reinterpret_cast<const T*>(b.get()), h.size());
}

// the per-thread stack a functor's kernel needs (its dual numbers live in local memory)
template <class F>
void stack_for() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, functor_kernel<F>) != cudaSuccess) return;
  std::size_t cur = 0;
  cudaDeviceGetLimit(&cur, cudaLimitStackSize);
  if (attr.localSizeBytes + 1024 > cur) cudaDeviceSetLimit(cudaLimitStackSize, attr.localSizeBytes + 1024);
}

template <class S, class Impl>
Status check_sizes(const Impl& d, const StateT<S>& in, const ControlT<S>& control) {
  const ModelT<S>& m = *d.host;
  if (in.particle_count() != m.particle_count() || in.q_count() != m.rigid.q_count() ||
      in.dof_count() != m.rigid.dof_count())
    return Status::error("CUDA step: the state does not match the model");
  if (int(control.joint_act.size()) != m.rigid.actuator_count() ||
      (!control.particle_f.empty() && int(control.particle_f.size()) != m.particle_count()))
    return Status::error("CUDA step: the control does not match the model");
  return Status::ok();
}

// what every substep shares; base: the particle substep's arguments, the control uploaded
template <class S, class Impl>
CoupledArgs<S> shared_args(Impl& d, CoupledDevice<S>& c, const KernelArgs<S>& base, bool control_f, S h) {
  CoupledArgs<S> a;
  a.p = base;
  a.m = c.view;
  a.c = rigid::coupling_params(*d.host);
  a.h = h;
  a.act = c.act.get();
  a.control_f = control_f ? d.control_f.get() : nullptr;
  return a;
}

// the particle-side device arrays of a step (the solver's substep states, forces and slots)
template <class S, class Impl>
CoupledBuffers<S> buffers(Impl& d, CoupledDevice<S>& c) {
  CoupledBuffers<S> b;
  for (DeviceState<S>& s : d.sub) {
    b.q.push_back(s.q.get());
    b.qd.push_back(s.qd.get());
  }
  for (DeviceArray<vec3<S>>& f : d.f_total_sub) b.f_total.push_back(f.get());
  b.pf = c.pf.get();
  b.adj_pf = c.adj_pf.get();
  b.pairs = c.pairs.get();
  b.grads = c.grads.get();
  DeviceState<S>* adj[3] = {&d.adj_top, &d.adj_a, &d.adj_b};
  for (int k = 0; k < 3; ++k) {
    b.adj_q[k] = adj[k]->q.get();
    b.adj_qd[k] = adj[k]->qd.get();
  }
  b.adj_joint_out = c.adj_top.get();
  b.dummy_q = d.dummy_q.get();
  b.dummy_qd = d.dummy_qd.get();
  b.adj_f = d.adj_f.get();
  b.adj_q_slot = d.adj_q_slot.get();
  b.adj_qd_slot = d.adj_qd_slot.get();
  return b;
}

// every substep of a step on the device, keeping each one's states, scratch and total force
template <class S, class Impl>
Status coupled_forward(Impl& d, const SolverOptions& o, const StateT<S>& in, const ControlT<S>& control, S dt,
                       KernelArgs<S>& base) {
  CoupledDevice<S>& c = *d.coupled;
  Status st = check_sizes(d, in, control);
  if (!st) return st;
  const int nq = c.view.q_count(), nv = c.view.dof_count();
  const S h = dt / S(o.substeps);
  base = device_args<S>(d, control, h);
  d.up(d.sub[0].q, in.particle_q);
  d.up(d.sub[0].qd, in.particle_qd);
  if (nq > 0) d.check(cudaMemcpy(c.sc.q.data(), in.joint_q.data(), sizeof(S) * nq, cudaMemcpyHostToDevice));
  if (nv > 0) d.check(cudaMemcpy(c.sc.qd.data(), in.joint_qd.data(), sizeof(S) * nv, cudaMemcpyHostToDevice));
  d.up(c.act, control.joint_act);
  coupled_forward_substeps(CudaExec{&d.error}, shared_args<S>(d, c, base, !control.particle_f.empty(), h), c.sc,
                           buffers<S>(d, c), o.substeps,
                           [&](const CudaExec&, KernelArgs<S>& p, int) { p.grid = d.grid(p.q); });
  c.ok.assign(std::size_t(o.substeps), 0);
  d.check(cudaMemcpy(c.ok.data(), c.sc.ok.data(), sizeof(int) * c.ok.size(), cudaMemcpyDeviceToHost));
  if (d.error != cudaSuccess) return cuda_status(d.error, "coupled step");
  for (int k = 0; k < o.substeps; ++k)
    if (!c.ok[std::size_t(k)])
      return Status::error("CUDA coupled step: the mass matrix is not positive definite (substep " + std::to_string(k) +
                           ")");
  return Status::ok();
}

// a device array from a span of the arena, to the host
template <class S>
cudaError_t download_span(const rigid::Span<S>& d, std::vector<S>& h) {
  h.resize(std::size_t(d.size()));
  return d.size() ? cudaMemcpy(h.data(), d.data(), sizeof(S) * h.size(), cudaMemcpyDeviceToHost) : cudaSuccess;
}

}  // namespace

template <class S, class Impl>
Status coupled_upload(Impl& d, const ModelT<S>& m, int substeps) {
  const int mesh = rigid::rigid_first_mesh_shape(m.rigid);
  if (mesh >= 0) {
    d.host = nullptr;
    d.coupled.reset();
    const int b = m.rigid.shape_body[std::size_t(mesh)];
    return Status::error("CUDA backend: body shape " + std::to_string(mesh) + " (of body '" +
                         m.rigid.body_name[std::size_t(b)] +
                         "') is a mesh; mesh body shapes step on the CPU only (their contact has not been checked on "
                         "a device)");
  }
  if (const int c = rigid::rigid_first_mesh_collider(m.rigid); c >= 0) {
    d.host = nullptr;
    d.coupled.reset();
    return Status::error("CUDA backend: collider " + std::to_string(c) +
                         " of the bodies is a mesh; bodies against mesh colliders step on the CPU only (their contact "
                         "has not been checked on a device)");
  }
  d.coupled.reset(new CoupledDevice<S>);
  CoupledDevice<S>& c = *d.coupled;
  c.rigid = m.rigid;
  c.view =
      rigid::map_rigid_view(rigid::make_rigid_view(c.rigid), [&](const auto& span) { return copy_span(d, c, span); });
  c.sc.carve(nullptr, c.view, substeps);
  d.check(c.arena.resize(c.sc.bytes));
  c.sc.carve(reinterpret_cast<char*>(c.arena.get()), c.view, substeps);
  const std::size_t np = std::size_t(m.particle_count()), slots = std::size_t(m.rigid.shape_count()) * np;
  d.check(c.pf.resize(np));
  d.check(c.adj_pf.resize(np));
  d.check(c.pairs.resize(slots));
  d.check(c.grads.resize(slots));
  d.check(c.adj_top.resize(std::size_t(m.rigid.q_count() + m.rigid.dof_count())));
  stack_for<CoupledKinematics<S>>();
  stack_for<CoupledArticulation<S>>();
  stack_for<CoupledArticulationAdjoint<S>>();
  stack_for<CoupledPairAdjoint<S>>();
  stack_for<CoupledBodyAdjoint<S>>();
  return cuda_status(d.error, "model upload (bodies)");
}

template <class S, class Impl>
Status coupled_step(Impl& d, const SolverOptions& o, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                    S dt) {
  d.error = cudaSuccess;
  KernelArgs<S> base{};
  Status st = coupled_forward(d, o, in, control, dt, base);
  if (!st) return st;
  CoupledDevice<S>& c = *d.coupled;
  const int n = o.substeps, nq = c.view.q_count(), nv = c.view.dof_count();
  d.check(d.sub[std::size_t(n)].q.download(out.particle_q));
  d.check(d.sub[std::size_t(n)].qd.download(out.particle_qd));
  d.check(download_span(rigid::Span<S>(c.sc.q.data() + std::size_t(n) * nq, nq), out.joint_q));
  d.check(download_span(rigid::Span<S>(c.sc.qd.data() + std::size_t(n) * nv, nv), out.joint_qd));
  if (d.error != cudaSuccess) return cuda_status(d.error, "coupled step");
  return o.check_finite ? check_state_finite(*d.host, out, "state (CUDA)") : Status::ok();
}

template <class S, class Impl>
Status coupled_step_adjoint(Impl& d, const SolverOptions& o, const StateT<S>& in, const ControlT<S>& control, S dt,
                            const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                            ModelGradT<S>& adj_model) {
  const ModelT<S>& pm = *d.host;
  if (adj_out.particle_count() != pm.particle_count() || adj_out.q_count() != pm.rigid.q_count() ||
      adj_out.dof_count() != pm.rigid.dof_count())
    return Status::error("CUDA step_adjoint: the adjoint of the output state does not match the model");
  d.error = cudaSuccess;
  KernelArgs<S> base{};
  Status st = coupled_forward(d, o, in, control, dt, base);
  if (!st) return Status::error(st.message() + " (adjoint recompute)");
  CoupledDevice<S>& c = *d.coupled;
  const int nq = c.view.q_count(), nv = c.view.dof_count(), na = c.view.actuator_count();
  const bool control_f = !control.particle_f.empty();
  fit_coupled_grads(pm, control, adj_control, adj_model);
  // the accumulators: the caller's control adjoints uploaded, the rest zeroed
  if (na > 0)
    d.check(cudaMemcpy(c.sc.adj_act.data(), adj_control.joint_act.data(), sizeof(S) * na, cudaMemcpyHostToDevice));
  if (control_f) d.up(d.adj_control_f, adj_control.particle_f);
  d.up(d.adj_spring_act, adj_control.spring_act);
  d.up(d.adj_tet_act, adj_control.tet_act);
  d.check(d.adj_model.zero());
  d.check(cudaMemset(c.sc.adj_param.data(), 0, sizeof(S) * std::size_t(c.sc.adj_param.size())));
  d.check(cudaMemset(c.sc.adj_coupling.data(), 0, sizeof(S) * 3));
  std::vector<S> top(adj_out.joint_q.begin(), adj_out.joint_q.end());
  top.insert(top.end(), adj_out.joint_qd.begin(), adj_out.joint_qd.end());
  d.up(c.adj_top, top);
  d.up(d.adj_top.q, adj_out.particle_q);
  d.up(d.adj_top.qd, adj_out.particle_qd);
  CoupledArgs<S> a = shared_args<S>(d, c, base, control_f, dt / S(o.substeps));
  a.adj_control_f = control_f ? d.adj_control_f.get() : nullptr;
  a.p.adj_spring_act = d.adj_spring_act.get();
  a.p.adj_tet_act = d.adj_tet_act.get();
  a.p.g = grad_view(d.grad_slots, d.adj_model.get());  // reduced once per step, below
  const CoupledBuffers<S> b = buffers<S>(d, c);
  const CoupledAdjointOut<S> r = coupled_adjoint_substeps(
      CudaExec{&d.error}, a, c.sc, b, o.substeps, [&](const CudaExec&, KernelArgs<S>& p, int) { p.grid = d.grid(p.q); },
      [](const CudaExec&) {}, [](const CudaExec&) {});
  DeviceState<S>* upstream = r.particles == 1 ? &d.adj_a : (r.particles == 2 ? &d.adj_b : &d.adj_top);
  const S* joint_up = r.joints;
  std::vector<S> tmp;
  d.check(upstream->q.download(adj_in.particle_q));
  d.check(upstream->qd.download(adj_in.particle_qd));
  d.check(download_span(rigid::Span<S>(const_cast<S*>(joint_up), nq + nv), tmp));
  adj_in.joint_q.assign(tmp.begin(), tmp.begin() + nq);
  adj_in.joint_qd.assign(tmp.begin() + nq, tmp.end());
  d.check(download_span(c.sc.adj_act, adj_control.joint_act));
  if (control_f) d.check(d.adj_control_f.download(adj_control.particle_f));
  d.check(d.adj_spring_act.download(adj_control.spring_act));
  d.check(d.adj_tet_act.download(adj_control.tet_act));
  // the model gradients: particle side per element and scene-wide sums, bodies, the pairs' law
  d.check(d.adj_model.download(tmp));
  if (int(tmp.size()) == d.grad_slots.size) add_slots(d.grad_slots, tmp.data(), adj_model, /*per_element=*/true);
  d.check(download_span(c.sc.adj_param, tmp));
  std::vector<S> coupling;
  d.check(download_span(c.sc.adj_coupling, coupling));
  if (d.error != cudaSuccess) return cuda_status(d.error, "coupled step_adjoint");
  rigid::batch_sum_param_grads(c.rigid, 1, tmp.data(), adj_model.rigid);
  adj_model.contact_ke += coupling[0];
  adj_model.contact_kd += coupling[1];
  adj_model.contact_mu += coupling[2];
  return o.check_finite ? check_state_finite(pm, adj_in, "adjoint (CUDA)") : Status::ok();
}

// the explicit instantiations of one scalar (cuda_coupled_float.cu, cuda_coupled_double.cu)
#define ADJ_CUDA_COUPLED(S)                                                                                            \
  template struct CoupledDeviceDelete<S>;                                                                              \
  template Status coupled_upload<S, CudaSolverT<S>::Impl>(CudaSolverT<S>::Impl&, const ModelT<S>&, int);               \
  template Status coupled_step<S, CudaSolverT<S>::Impl>(CudaSolverT<S>::Impl&, const SolverOptions&, const StateT<S>&, \
                                                        StateT<S>&, const ControlT<S>&, S);                            \
  template Status coupled_step_adjoint<S, CudaSolverT<S>::Impl>(                                                       \
      CudaSolverT<S>::Impl&, const SolverOptions&, const StateT<S>&, const ControlT<S>&, S, const StateT<S>&,          \
      StateT<S>&, ControlT<S>&, ModelGradT<S>&);

}  // namespace adj::cuda_detail
