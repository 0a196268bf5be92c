// CUDA backend: device copies of the model, and the substep functors of
// engine/solver/kernels.h launched as kernels (one source for CPU and GPU physics). a model
// with bodies steps through the coupled path of cuda_coupled.cuh.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_solver_impl.cuh"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"

namespace adj {

bool cuda_available(std::string* reason) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason)
      *reason =
          std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err) + " (" + std::to_string(int(err)) + ")";
    cudaGetLastError();  // clear the sticky error
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no CUDA device";
    return false;
  }
  if (reason) *reason = std::to_string(count) + " CUDA device(s)";
  return true;
}

using namespace cuda_detail;

template <class S>
CudaSolverT<S>::CudaSolverT(SolverOptions options) : options_(options), impl_(std::make_unique<Impl>()) {
  if (options_.substeps < 1) options_.substeps = 1;
}
template <class S>
CudaSolverT<S>::~CudaSolverT() = default;

template <class S>
Status CudaSolverT<S>::upload(const ModelT<S>& m) {
  return impl_->load(options_, m);
}

template <class S>
Status CudaSolverT<S>::step(const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt) {
  return impl_->step(options_, in, out, control, dt);
}

template <class S>
Status CudaSolverT<S>::step_adjoint(const StateT<S>& in, const ControlT<S>& control, S dt, const StateT<S>& adj_out,
                                    StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model) {
  return impl_->step_adjoint(options_, in, control, dt, adj_out, adj_in, adj_control, adj_model);
}

template <class S>
Status CudaSolverT<S>::Impl::load(const SolverOptions& o, const ModelT<S>& m) {
  std::string reason;
  if (!cuda_available(&reason)) return Status::error("CUDA backend unavailable: " + reason);
  if (m.integrator == INTEGRATOR_IMPLICIT)
    return Status::error("CUDA backend: the implicit integrator (settings.integrator) runs on the CPU only");
  Impl& d = *this;
  d.error = cudaSuccess;
  d.host = &m;
  d.check(d.model.upload(m));
  int n = m.particle_count();
  d.sub.resize(o.substeps + 1);
  for (auto& s : d.sub) d.alloc_state(s, n);
  d.f_total_sub.resize(o.substeps);
  for (auto& f : d.f_total_sub) d.check(f.resize(n));
  d.alloc_state(d.adj_a, n);
  d.alloc_state(d.adj_b, n);
  d.alloc_state(d.adj_top, n);
  for (DeviceArray<vec3<S>>* a : {&d.f_slot, &d.adj_q_slot, &d.adj_qd_slot}) d.check(a->resize(m.slot_count()));
  for (DeviceArray<vec3<S>>* a : {&d.f_total, &d.adj_f, &d.dummy_q, &d.dummy_qd, &d.control_f, &d.adj_control_f})
    d.check(a->resize(n));
  d.grad_slots = adj::grad_slots(m);  // the free function, not the member
  d.check(d.adj_model.resize(std::size_t(d.grad_slots.size)));
  d.check(d.grid_.alloc(n, m.grid_cell));
  if (d.error == cudaSuccess && m.body_count() > 0) return coupled_upload<S>(d, m, o.substeps);
  d.coupled.reset();
  return cuda_status(d.error, "model upload");
}

template <class S>
Status CudaSolverT<S>::Impl::step(const SolverOptions& o, const StateT<S>& in, StateT<S>& out,
                                  const ControlT<S>& control, S dt) {
  Impl& d = *this;
  if (!d.host) return Status::error("CUDA backend: upload() a model first");
  if (d.host->body_count() > 0) return coupled_step<S>(d, o, in, out, control, dt);
  int n = d.host->particle_count();
  if (in.particle_count() != n) return Status::error("CUDA step: state does not match the model");
  d.error = cudaSuccess;
  S h = dt / S(o.substeps);
  CudaExec exec{&d.error};
  KernelArgs<S> a = device_args<S>(d, control, h);
  d.up(d.sub[0].q, in.particle_q);
  d.up(d.sub[0].qd, in.particle_qd);
  for (int k = 0; k < o.substeps; ++k) {
    a.q = d.sub[k].q.get();
    a.qd = d.sub[k].qd.get();
    a.q_out = d.sub[k + 1].q.get();
    a.qd_out = d.sub[k + 1].qd.get();
    a.grid = d.grid(a.q);
    substep_forward(exec, a);
  }
  d.check(d.sub[o.substeps].q.download(out.particle_q));
  d.check(d.sub[o.substeps].qd.download(out.particle_qd));
  if (d.error != cudaSuccess) return cuda_status(d.error, "step");
  return o.check_finite ? check_state_finite(out, "state (CUDA)") : Status::ok();
}

template <class S>
static void add_into(std::vector<S>& dst, const std::vector<S>& src) {
  for (std::size_t i = 0; i < dst.size() && i < src.size(); ++i) dst[i] += src[i];
}

template <class S>
Status CudaSolverT<S>::Impl::step_adjoint(const SolverOptions& o, const StateT<S>& in, const ControlT<S>& control, S dt,
                                          const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                          ModelGradT<S>& adj_model) {
  Impl& d = *this;
  if (!d.host) return Status::error("CUDA backend: upload() a model first");
  if (d.host->body_count() > 0)
    return coupled_step_adjoint<S>(d, o, in, control, dt, adj_out, adj_in, adj_control, adj_model);
  const ModelT<S>& m = *d.host;
  int n = m.particle_count();
  if (in.particle_count() != n || adj_out.particle_count() != n)
    return Status::error("CUDA step_adjoint: state does not match the model");
  d.error = cudaSuccess;
  S h = dt / S(o.substeps);
  CudaExec exec{&d.error};
  KernelArgs<S> a = device_args<S>(d, control, h);
  // recompute the substep states on the device, keeping each substep's total force
  d.up(d.sub[0].q, in.particle_q);
  d.up(d.sub[0].qd, in.particle_qd);
  for (int k = 0; k < o.substeps; ++k) {
    a.q = d.sub[k].q.get();
    a.qd = d.sub[k].qd.get();
    a.q_out = d.sub[k + 1].q.get();
    a.qd_out = d.sub[k + 1].qd.get();
    a.f_total = d.f_total_sub[k].get();
    a.grid = d.grid(a.q);
    substep_forward(exec, a);
  }
  // zeroed device accumulators, added into the host ones at the end
  d.check(d.adj_control_f.resize(n));
  d.check(d.adj_spring_act.resize(m.spring_count()));
  d.check(d.adj_tet_act.resize(m.tet_count()));
  for (DeviceArray<S>* z : {&d.adj_spring_act, &d.adj_tet_act, &d.adj_model}) d.check(z->zero());
  d.check(d.adj_control_f.zero());
  a.q_out = d.dummy_q.get();
  a.qd_out = d.dummy_qd.get();
  a.adj_f = d.adj_f.get();
  a.adj_q_slot = d.adj_q_slot.get();
  a.adj_qd_slot = d.adj_qd_slot.get();
  a.adj_control_f = d.adj_control_f.get();
  a.adj_spring_act = d.adj_spring_act.get();
  a.adj_tet_act = d.adj_tet_act.get();
  a.g = grad_view(d.grad_slots, d.adj_model.get());
  d.up(d.adj_top.q, adj_out.particle_q);
  d.up(d.adj_top.qd, adj_out.particle_qd);
  DeviceState<S>* upstream = &d.adj_top;
  for (int k = o.substeps - 1; k >= 0; --k) {
    DeviceState<S>* target = (upstream == &d.adj_a) ? &d.adj_b : &d.adj_a;
    a.q = d.sub[k].q.get();
    a.qd = d.sub[k].qd.get();
    a.adj_q_out = upstream->q.get();
    a.adj_qd_out = upstream->qd.get();
    a.adj_q_in = target->q.get();
    a.adj_qd_in = target->qd.get();
    a.f_total = d.f_total_sub[k].get();
    a.grid = d.grid(a.q);
    substep_adjoint(exec, a, /*recompute=*/false);
    upstream = target;
  }
  d.check(upstream->q.download(adj_in.particle_q));
  d.check(upstream->qd.download(adj_in.particle_qd));
  // accumulate into the caller's gradients
  std::vector<vec3<S>> f;
  std::vector<S> tmp;
  d.check(d.adj_control_f.download(f));
  adj_control.particle_f.resize(n);
  for (int p = 0; p < n; ++p) adj_control.particle_f[p] += f[p];
  adj_control.spring_act.resize(m.spring_count());
  adj_control.tet_act.resize(m.tet_count());
  auto acc = [&](DeviceArray<S>& src, std::vector<S>& dst) {
    d.check(src.download(tmp));
    add_into(dst, tmp);
  };
  acc(d.adj_spring_act, adj_control.spring_act);
  acc(d.adj_tet_act, adj_control.tet_act);
  // every model gradient: per-element ones added elementwise, scene-wide ones summed in order
  d.check(d.adj_model.download(tmp));
  if (int(tmp.size()) == d.grad_slots.size) add_slots(d.grad_slots, tmp.data(), adj_model, /*per_element=*/true);
  if (d.error != cudaSuccess) return cuda_status(d.error, "step_adjoint");
  return o.check_finite ? check_state_finite(adj_in, "adjoint (CUDA)") : Status::ok();
}

// also instantiates Impl's load, step and step_adjoint (defined above), which the worlds'
// per-world path (cuda_worlds.cu) calls; the worlds' members are instantiated there
template class CudaSolverT<float>;
template class CudaSolverT<double>;

}  // namespace adj
