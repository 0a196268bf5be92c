// CudaSolverT's worlds (cuda.h): bodies-only worlds of one model as one launch of the rigid batch
// kernel, one CUDA thread per world running engine/articulation/rigid_batch.h's functors; any
// other worlds through the one-world launcher (cuda_backend.cu), one world after another
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/articulation/rigid_batch.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_solver_impl.cuh"

namespace adj {

namespace {

template <class F>
__global__ void rigid_env_kernel(F f, int n) {
  int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) f(i);
}

constexpr int kBlock = 64;  // threads per block (each thread holds a few KB of dual numbers)

Status world_error(std::size_t w, const Status& st) {
  return Status::error("world " + std::to_string(w) + ": " + st.message());
}

}  // namespace

// the rigid batch: the model's view and every world's packed q, qd, act, their adjoints, the
// per-world parameter-gradient rows and arena slices on the device; host staging of the packs
template <class S>
struct CudaSolverT<S>::Batch {
  const ModelT<S>* host = nullptr;  // the worlds' model (finite checks name its joints)
  RigidModelT<S> model;
  rigid::RigidViewT<S> view;  // spans over device copies of the model's arrays
  std::vector<void*> blocks;  // every device allocation
  std::size_t bytes = 0;
  int env_count = 0, substeps = 1;
  std::size_t stride = 0;
  char* arena = nullptr;
  S *q = nullptr, *qd = nullptr, *act = nullptr, *q_out = nullptr, *qd_out = nullptr;
  S *adj_q_out = nullptr, *adj_qd_out = nullptr, *adj_q = nullptr, *adj_qd = nullptr, *adj_act = nullptr;
  S* adj_param = nullptr;
  int* ok = nullptr;
  cudaError_t error = cudaSuccess;
  // host packs, environment-major (rigid_batch.h): q (env_count x q_count), qd (env_count x
  // dof_count), act (env_count x actuator_count), the downloads likewise
  std::vector<S> hq, hqd, hact, hq2, hqd2, hact2;

  ~Batch() { release(); }
  void release() {
    for (void* p : blocks) cudaFree(p);
    blocks.clear();
    bytes = 0;
  }
  template <class T>
  T* alloc(std::size_t n) {
    void* p = nullptr;
    if (error != cudaSuccess) return nullptr;
    std::size_t b = n * sizeof(T) > 0 ? n * sizeof(T) : 16;
    error = cudaMalloc(&p, b);
    if (error != cudaSuccess) return nullptr;
    blocks.push_back(p);
    bytes += b;
    return static_cast<T*>(p);
  }
  // a device copy of one host span
  template <class T>
  rigid::Span<const T> copy(const rigid::Span<const T>& h) {
    T* d = alloc<T>(std::size_t(h.size()));
    if (d && h.size() > 0) error = cudaMemcpy(d, h.data(), sizeof(T) * std::size_t(h.size()), cudaMemcpyHostToDevice);
    return rigid::Span<const T>(d, h.size());
  }
  Status put(S* d, const std::vector<S>& h, const char* what) {
    return cuda_status(cudaMemcpy(d, h.data(), sizeof(S) * h.size(), cudaMemcpyHostToDevice), what);
  }
  Status get(std::vector<S>& h, const S* d, std::size_t n, const char* what) {
    h.resize(n);
    return cuda_status(cudaMemcpy(h.data(), d, sizeof(S) * n, cudaMemcpyDeviceToHost), what);
  }
  Status check_ok(const char* what) {
    std::vector<int> host_ok(static_cast<std::size_t>(env_count), 0);
    Status st =
        cuda_status(cudaMemcpy(host_ok.data(), ok, sizeof(int) * host_ok.size(), cudaMemcpyDeviceToHost), what);
    if (!st) return st;
    return rigid::batch_check_ok(host_ok, what);
  }
  // a step or adjoint kernel with the inputs both read: the model, the step, the uploaded q,
  // qd and act, the flags and the scratch
  template <class K>
  K kernel(S dt) const {
    K k;
    k.m = view;
    k.substeps = substeps;
    k.dt = dt;
    k.q = q;
    k.qd = qd;
    k.act = act;
    k.ok = ok;
    k.arena = arena;
    k.stride = stride;
    return k;
  }
  // the per-thread stack the adjoint kernel needs (its dual numbers live in local memory)
  template <class K>
  void stack_for(const K&) {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, rigid_env_kernel<K>) != cudaSuccess) return;
    std::size_t cur = 0;
    cudaDeviceGetLimit(&cur, cudaLimitStackSize);
    if (attr.localSizeBytes + 1024 > cur) cudaDeviceSetLimit(cudaLimitStackSize, attr.localSizeBytes + 1024);
  }

  Status upload(const ModelT<S>& scene, int count, int substeps_) {
    const RigidModelT<S>& m = scene.rigid;
    if (rigid::rigid_first_mesh_shape(m) >= 0) {
      std::string msg = "CUDA worlds: shape ";
      msg += std::to_string(rigid::rigid_first_mesh_shape(m));
      msg += " is a mesh; mesh contact has not been checked on a device (step it on the CPU)";
      return Status::error(msg);
    }
    if (const int c = rigid::rigid_first_mesh_collider(m); c >= 0)
      return Status::error("CUDA worlds: collider " + std::to_string(c) +
                           " is a mesh; bodies against mesh colliders have not been checked on a device (step it on "
                           "the CPU)");
    release();
    error = cudaSuccess;
    host = &scene;
    model = m;
    env_count = count;
    substeps = substeps_ < 1 ? 1 : substeps_;
    const rigid::RigidViewT<S> host_view = rigid::make_rigid_view(model);
    view = rigid::map_rigid_view(host_view, [&](const auto& span) { return this->copy(span); });
    stride = rigid::batch_slice_bytes(host_view, substeps, true);
    const std::size_t n = std::size_t(env_count);
    arena = alloc<char>(stride * n);
    q = alloc<S>(n * model.q_count());
    qd = alloc<S>(n * model.dof_count());
    act = alloc<S>(n * model.actuator_count());
    q_out = alloc<S>(n * model.q_count());
    qd_out = alloc<S>(n * model.dof_count());
    adj_q_out = alloc<S>(n * model.q_count());
    adj_qd_out = alloc<S>(n * model.dof_count());
    adj_q = alloc<S>(n * model.q_count());
    adj_qd = alloc<S>(n * model.dof_count());
    adj_act = alloc<S>(n * model.actuator_count());
    adj_param = alloc<S>(n * model.param_count());
    ok = alloc<int>(n);
    if (error == cudaSuccess) error = cudaMemset(arena, 0, stride * n);
    if (error == cudaSuccess) stack_for(rigid::BatchAdjointKernel<S>{});
    return cuda_status(error, "worlds upload");
  }

  // every world's state and control into hq, hqd, hact (sizes checked against the model)
  Status pack(const std::vector<StateT<S>>& in, const std::vector<ControlT<S>>& control) {
    const std::size_t nq = std::size_t(model.q_count()), nv = std::size_t(model.dof_count()),
                      na = std::size_t(model.actuator_count()), n = std::size_t(env_count);
    for (std::size_t w = 0; w < n; ++w)
      if (in[w].joint_q.size() != nq || in[w].joint_qd.size() != nv || control[w].joint_act.size() != na ||
          in[w].particle_count() != 0)
        return world_error(w, Status::error("CUDA worlds: the state or control sizes do not match the model"));
    hq.resize(n * nq);
    hqd.resize(n * nv);
    hact.resize(n * na);
    for (std::size_t w = 0; w < n; ++w) {
      std::copy(in[w].joint_q.begin(), in[w].joint_q.end(), hq.begin() + std::ptrdiff_t(w * nq));
      std::copy(in[w].joint_qd.begin(), in[w].joint_qd.end(), hqd.begin() + std::ptrdiff_t(w * nv));
      std::copy(control[w].joint_act.begin(), control[w].joint_act.end(), hact.begin() + std::ptrdiff_t(w * na));
    }
    return Status::ok();
  }

  Status step(const SolverOptions& o, const std::vector<StateT<S>>& in, std::vector<StateT<S>>& out,
              const std::vector<ControlT<S>>& control, S dt) {
    Batch& d = *this;
    Status st = d.pack(in, control);
    if (!st) return st;
    if (!(st = d.put(d.q, d.hq, "upload q")) || !(st = d.put(d.qd, d.hqd, "upload qd")) ||
        !(st = d.put(d.act, d.hact, "upload act")))
      return st;
    auto k = d.template kernel<rigid::BatchStepKernel<S>>(dt);
    k.q_out = d.q_out;
    k.qd_out = d.qd_out;
    rigid_env_kernel<<<(d.env_count + kBlock - 1) / kBlock, kBlock>>>(k, d.env_count);
    st = cuda_status(cudaGetLastError(), "worlds step launch");
    if (!st) return st;
    st = cuda_status(cudaDeviceSynchronize(), "worlds step");
    if (!st) return st;
    if (!(st = d.get(d.hq2, d.q_out, d.hq.size(), "download q")) ||
        !(st = d.get(d.hqd2, d.qd_out, d.hqd.size(), "download qd")))
      return st;
    if (!(st = d.check_ok("CUDA worlds step"))) return st;
    const std::size_t nq = std::size_t(model.q_count()), nv = std::size_t(model.dof_count());
    for (std::size_t w = 0; w < std::size_t(env_count); ++w) {
      out[w].particle_q.clear();
      out[w].particle_qd.clear();
      out[w].joint_q.assign(hq2.begin() + std::ptrdiff_t(w * nq), hq2.begin() + std::ptrdiff_t((w + 1) * nq));
      out[w].joint_qd.assign(hqd2.begin() + std::ptrdiff_t(w * nv), hqd2.begin() + std::ptrdiff_t((w + 1) * nv));
      if (o.check_finite)
        if (Status f = check_state_finite(*host, out[w], "state (CUDA)"); !f) return world_error(w, f);
    }
    return Status::ok();
  }

  Status step_adjoint(const SolverOptions& o, const std::vector<StateT<S>>& in, const std::vector<ControlT<S>>& control,
                      S dt, const std::vector<StateT<S>>& adj_out, std::vector<StateT<S>>& adj_in,
                      std::vector<ControlT<S>>& adj_control, std::vector<ModelGradT<S>>& adj_model) {
    Batch& d = *this;
    Status st = d.pack(in, control);
    if (!st) return st;
    const std::size_t nq = std::size_t(model.q_count()), nv = std::size_t(model.dof_count()),
                      na = std::size_t(model.actuator_count()), np = std::size_t(model.param_count());
    const std::size_t n = std::size_t(env_count);
    d.hq2.resize(n * nq);
    d.hqd2.resize(n * nv);
    for (std::size_t w = 0; w < n; ++w) {
      if (adj_out[w].joint_q.size() != nq || adj_out[w].joint_qd.size() != nv)
        return world_error(w, Status::error("CUDA worlds step_adjoint: the adjoint of the output does not match "
                                            "the state"));
      std::copy(adj_out[w].joint_q.begin(), adj_out[w].joint_q.end(), hq2.begin() + std::ptrdiff_t(w * nq));
      std::copy(adj_out[w].joint_qd.begin(), adj_out[w].joint_qd.end(), hqd2.begin() + std::ptrdiff_t(w * nv));
    }
    if (!(st = d.put(d.q, d.hq, "upload q")) || !(st = d.put(d.qd, d.hqd, "upload qd")) ||
        !(st = d.put(d.act, d.hact, "upload act")) || !(st = d.put(d.adj_q_out, d.hq2, "upload adj q")) ||
        !(st = d.put(d.adj_qd_out, d.hqd2, "upload adj qd")))
      return st;
    auto k = d.template kernel<rigid::BatchAdjointKernel<S>>(dt);
    k.adj_q_out = d.adj_q_out;
    k.adj_qd_out = d.adj_qd_out;
    k.adj_q = d.adj_q;
    k.adj_qd = d.adj_qd;
    k.adj_act = d.adj_act;
    k.adj_param = d.adj_param;
    rigid_env_kernel<<<(d.env_count + kBlock - 1) / kBlock, kBlock>>>(k, d.env_count);
    st = cuda_status(cudaGetLastError(), "worlds step_adjoint launch");
    if (!st) return st;
    st = cuda_status(cudaDeviceSynchronize(), "worlds step_adjoint");
    if (!st) return st;
    st = d.check_ok("CUDA worlds step_adjoint");
    if (!st) return st;
    std::vector<S> param;
    if (!(st = d.get(d.hq2, d.adj_q, n * nq, "download adj q")) ||
        !(st = d.get(d.hqd2, d.adj_qd, n * nv, "download adj qd")) ||
        !(st = d.get(d.hact2, d.adj_act, n * na, "download adj act")) ||
        !(st = d.get(param, d.adj_param, n * np, "download param grads")))
      return st;
    // per world, as SolverT's articulation stage gives them: adj_in written, the control's and
    // (body_param_grads) the parameters' adjoints accumulated
    for (std::size_t w = 0; w < n; ++w) {
      adj_in[w].particle_q.clear();
      adj_in[w].particle_qd.clear();
      adj_in[w].joint_q.assign(hq2.begin() + std::ptrdiff_t(w * nq), hq2.begin() + std::ptrdiff_t((w + 1) * nq));
      adj_in[w].joint_qd.assign(hqd2.begin() + std::ptrdiff_t(w * nv), hqd2.begin() + std::ptrdiff_t((w + 1) * nv));
      adj_control[w].joint_act.resize(na, S(0));
      for (std::size_t i = 0; i < na; ++i) adj_control[w].joint_act[i] += hact2[w * na + i];
      if (o.body_param_grads) rigid::batch_sum_param_grads(d.model, 1, param.data() + w * np, adj_model[w].rigid);
      if (o.check_finite)
        if (Status f = check_state_finite(*host, adj_in[w], "adjoint (CUDA)"); !f) return world_error(w, f);
    }
    return Status::ok();
  }
};

template <class S>
void CudaSolverT<S>::BatchDelete::operator()(Batch* p) const {
  delete p;
}

template <class S>
Status CudaSolverT<S>::upload_worlds(const ModelT<S>& model, int world_count) {
  if (world_count < 1) return Status::error("CUDA worlds: world_count must be at least 1");
  return upload_worlds(std::vector<const ModelT<S>*>(std::size_t(world_count), &model));
}

template <class S>
Status CudaSolverT<S>::upload_worlds(const std::vector<const ModelT<S>*>& models) {
  worlds_.clear();
  batch_.reset();
  if (models.empty()) return Status::error("CUDA worlds: world_count must be at least 1");
  std::string reason;
  if (!cuda_available(&reason)) return Status::error("CUDA backend unavailable: " + reason);
  const ModelT<S>* m0 = models[0];
  const bool same = std::all_of(models.begin(), models.end(), [&](const ModelT<S>* m) { return m == m0; });
  if (same && m0->particle_count() == 0 && m0->body_count() > 0) {
    batch_.reset(new Batch);
    Status st = batch_->upload(*m0, int(models.size()), options_.substeps);
    if (!st) batch_.reset();
    return st;
  }
  for (std::size_t w = 0; w < models.size(); ++w) {
    worlds_.push_back(std::make_unique<Impl>());
    if (Status st = worlds_.back()->load(options_, *models[w]); !st) {
      worlds_.clear();
      return world_error(w, st);
    }
  }
  return Status::ok();
}

template <class S>
int CudaSolverT<S>::world_count() const {
  return batch_ ? batch_->env_count : int(worlds_.size());
}

template <class S>
bool CudaSolverT<S>::worlds_batched() const {
  return bool(batch_);
}

template <class S>
Status CudaSolverT<S>::check_worlds(std::size_t in, std::size_t control) const {
  const std::size_t n = std::size_t(world_count());
  if (n == 0) return Status::error("CUDA worlds: upload_worlds() first");
  if (in != n || control != n)
    return Status::error("CUDA worlds: " + std::to_string(in) + " states and " + std::to_string(control) +
                         " controls for " + std::to_string(n) + " worlds (one of each per world)");
  return Status::ok();
}

template <class S>
Status CudaSolverT<S>::step_worlds(const std::vector<StateT<S>>& in, std::vector<StateT<S>>& out,
                                   const std::vector<ControlT<S>>& control, S dt) {
  if (Status st = check_worlds(in.size(), control.size()); !st) return st;
  out.resize(in.size());
  if (batch_) return batch_->step(options_, in, out, control, dt);
  for (std::size_t w = 0; w < worlds_.size(); ++w)
    if (Status st = worlds_[w]->step(options_, in[w], out[w], control[w], dt); !st) return world_error(w, st);
  return Status::ok();
}

template <class S>
Status CudaSolverT<S>::step_adjoint_worlds(const std::vector<StateT<S>>& in, const std::vector<ControlT<S>>& control,
                                           S dt, const std::vector<StateT<S>>& adj_out, std::vector<StateT<S>>& adj_in,
                                           std::vector<ControlT<S>>& adj_control,
                                           std::vector<ModelGradT<S>>& adj_model) {
  if (Status st = check_worlds(in.size(), control.size()); !st) return st;
  if (adj_out.size() != in.size())
    return Status::error("CUDA worlds step_adjoint: " + std::to_string(adj_out.size()) + " output adjoints for " +
                         std::to_string(in.size()) + " worlds");
  adj_in.resize(in.size());
  adj_control.resize(in.size());
  adj_model.resize(in.size());
  if (batch_) return batch_->step_adjoint(options_, in, control, dt, adj_out, adj_in, adj_control, adj_model);
  for (std::size_t w = 0; w < worlds_.size(); ++w)
    if (Status st = worlds_[w]->step_adjoint(options_, in[w], control[w], dt, adj_out[w], adj_in[w], adj_control[w],
                                             adj_model[w]);
        !st)
      return world_error(w, st);
  return Status::ok();
}

template <class S>
std::size_t CudaSolverT<S>::device_bytes() const {
  return batch_ ? batch_->bytes : 0;
}

// the worlds' members (the rest of the class is instantiated in cuda_backend.cu)
#define ADJ_CUDA_WORLDS(S)                                                                                            \
  template void CudaSolverT<S>::BatchDelete::operator()(CudaSolverT<S>::Batch*) const;                                \
  template Status CudaSolverT<S>::upload_worlds(const ModelT<S>&, int);                                               \
  template Status CudaSolverT<S>::upload_worlds(const std::vector<const ModelT<S>*>&);                                \
  template int CudaSolverT<S>::world_count() const;                                                                   \
  template bool CudaSolverT<S>::worlds_batched() const;                                                               \
  template Status CudaSolverT<S>::check_worlds(std::size_t, std::size_t) const;                                       \
  template Status CudaSolverT<S>::step_worlds(const std::vector<StateT<S>>&, std::vector<StateT<S>>&,                 \
                                              const std::vector<ControlT<S>>&, S);                                    \
  template Status CudaSolverT<S>::step_adjoint_worlds(const std::vector<StateT<S>>&, const std::vector<ControlT<S>>&, \
                                                      S, const std::vector<StateT<S>>&, std::vector<StateT<S>>&,      \
                                                      std::vector<ControlT<S>>&, std::vector<ModelGradT<S>>&);        \
  template std::size_t CudaSolverT<S>::device_bytes() const;

ADJ_CUDA_WORLDS(float)
ADJ_CUDA_WORLDS(double)

}  // namespace adj
