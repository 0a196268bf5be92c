// the rigid batch on the GPU: one thread per environment runs rigid_batch.h's functors
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/articulation/rigid_batch.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/rigid_cuda.h"

namespace adj {

namespace {

template <class F>
__global__ void rigid_env_kernel(F f, int n) {
  int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) f(i);
}

constexpr int kBlock = 64;  // threads per block (each thread holds a few KB of dual numbers)

Status rigid_cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  std::string m = "rigid CUDA batch, ";
  m += what;
  m += ": ";
  m += cudaGetErrorString(e);
  return Status::error(m);
}

}  // namespace

template <class S>
struct RigidBatchCudaT<S>::Impl {
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

  ~Impl() { release(); }
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
    return rigid_cuda_status(cudaMemcpy(d, h.data(), sizeof(S) * h.size(), cudaMemcpyHostToDevice), what);
  }
  Status get(std::vector<S>& h, const S* d, std::size_t n, const char* what) {
    h.resize(n);
    return rigid_cuda_status(cudaMemcpy(h.data(), d, sizeof(S) * n, cudaMemcpyDeviceToHost), what);
  }
  Status check_ok(const char* what) {
    std::vector<int> host(static_cast<std::size_t>(env_count), 0);
    Status st = rigid_cuda_status(cudaMemcpy(host.data(), ok, sizeof(int) * host.size(), cudaMemcpyDeviceToHost), what);
    if (!st) return st;
    return rigid::batch_check_ok(host, what);
  }
  Status sizes(const std::vector<S>& q_, const std::vector<S>& qd_, const std::vector<S>& act_) const {
    const std::size_t n = std::size_t(env_count);
    if (q_.size() != n * model.q_count() || qd_.size() != n * model.dof_count() ||
        act_.size() != n * model.actuator_count())
      return Status::error("rigid CUDA batch: packed q/qd/act sizes do not match env_count x the model's counts");
    return Status::ok();
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
};

template <class S>
RigidBatchCudaT<S>::RigidBatchCudaT() : impl_(std::make_unique<Impl>()) {}
template <class S>
RigidBatchCudaT<S>::~RigidBatchCudaT() = default;

template <class S>
Status RigidBatchCudaT<S>::upload(const RigidModelT<S>& model, int env_count, int substeps) {
  std::string reason;
  if (!cuda_available(&reason)) return Status::error("rigid CUDA batch unavailable: " + reason);
  if (env_count < 1) return Status::error("rigid CUDA batch: env_count must be at least 1");
  if (rigid::rigid_first_mesh_shape(model) >= 0) {
    std::string msg = "rigid CUDA batch: shape ";
    msg += std::to_string(rigid::rigid_first_mesh_shape(model));
    msg += " is a mesh; mesh contact has not been checked on a device (step it on the CPU)";
    return Status::error(msg);
  }
  Impl& d = *impl_;
  d.release();
  d.error = cudaSuccess;
  d.model = model;
  d.env_count = env_count;
  d.substeps = substeps < 1 ? 1 : substeps;
  const rigid::RigidViewT<S> host = rigid::make_rigid_view(d.model);
  d.view = rigid::map_rigid_view(host, [&](const auto& span) { return d.copy(span); });
  d.stride = rigid::batch_slice_bytes(host, d.substeps, true);
  const std::size_t n = std::size_t(env_count);
  d.arena = d.template alloc<char>(d.stride * n);
  d.q = d.template alloc<S>(n * model.q_count());
  d.qd = d.template alloc<S>(n * model.dof_count());
  d.act = d.template alloc<S>(n * model.actuator_count());
  d.q_out = d.template alloc<S>(n * model.q_count());
  d.qd_out = d.template alloc<S>(n * model.dof_count());
  d.adj_q_out = d.template alloc<S>(n * model.q_count());
  d.adj_qd_out = d.template alloc<S>(n * model.dof_count());
  d.adj_q = d.template alloc<S>(n * model.q_count());
  d.adj_qd = d.template alloc<S>(n * model.dof_count());
  d.adj_act = d.template alloc<S>(n * model.actuator_count());
  d.adj_param = d.template alloc<S>(n * model.param_count());
  d.ok = d.template alloc<int>(n);
  if (d.error == cudaSuccess) d.error = cudaMemset(d.arena, 0, d.stride * n);
  if (d.error == cudaSuccess) d.stack_for(rigid::BatchAdjointKernel<S>{});
  return rigid_cuda_status(d.error, "upload");
}

template <class S>
Status RigidBatchCudaT<S>::step(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt,
                                std::vector<S>& q_out, std::vector<S>& qd_out) {
  Impl& d = *impl_;
  if (!d.arena) return Status::error("rigid CUDA batch: step before upload");
  Status st = d.sizes(q, qd, act);
  if (!st) return st;
  if (!(st = d.put(d.q, q, "upload q")) || !(st = d.put(d.qd, qd, "upload qd")) ||
      !(st = d.put(d.act, act, "upload act")))
    return st;
  auto k = d.template kernel<rigid::BatchStepKernel<S>>(dt);
  k.q_out = d.q_out;
  k.qd_out = d.qd_out;
  rigid_env_kernel<<<(d.env_count + kBlock - 1) / kBlock, kBlock>>>(k, d.env_count);
  st = rigid_cuda_status(cudaGetLastError(), "step launch");
  if (!st) return st;
  st = rigid_cuda_status(cudaDeviceSynchronize(), "step");
  if (!st) return st;
  if (!(st = d.get(q_out, d.q_out, q.size(), "download q")) ||
      !(st = d.get(qd_out, d.qd_out, qd.size(), "download qd")))
    return st;
  return d.check_ok("rigid CUDA batch step");
}

template <class S>
Status RigidBatchCudaT<S>::step_adjoint(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act,
                                        S dt, const std::vector<S>& adj_q_out, const std::vector<S>& adj_qd_out,
                                        std::vector<S>& adj_q, std::vector<S>& adj_qd, std::vector<S>& adj_act,
                                        RigidModelGradT<S>& adj_model) {
  Impl& d = *impl_;
  if (!d.arena) return Status::error("rigid CUDA batch: step_adjoint before upload");
  Status st = d.sizes(q, qd, act);
  if (!st) return st;
  if (adj_q_out.size() != q.size() || adj_qd_out.size() != qd.size())
    return Status::error("rigid CUDA batch step_adjoint: the adjoint of the output does not match the states");
  if (!(st = d.put(d.q, q, "upload q")) || !(st = d.put(d.qd, qd, "upload qd")) ||
      !(st = d.put(d.act, act, "upload act")) || !(st = d.put(d.adj_q_out, adj_q_out, "upload adj q")) ||
      !(st = d.put(d.adj_qd_out, adj_qd_out, "upload adj qd")))
    return st;
  auto k = d.template kernel<rigid::BatchAdjointKernel<S>>(dt);
  k.adj_q_out = d.adj_q_out;
  k.adj_qd_out = d.adj_qd_out;
  k.adj_q = d.adj_q;
  k.adj_qd = d.adj_qd;
  k.adj_act = d.adj_act;
  k.adj_param = d.adj_param;
  rigid_env_kernel<<<(d.env_count + kBlock - 1) / kBlock, kBlock>>>(k, d.env_count);
  st = rigid_cuda_status(cudaGetLastError(), "step_adjoint launch");
  if (!st) return st;
  st = rigid_cuda_status(cudaDeviceSynchronize(), "step_adjoint");
  if (!st) return st;
  st = d.check_ok("rigid CUDA batch step_adjoint");
  if (!st) return st;
  std::vector<S> param;
  if (!(st = d.get(adj_q, d.adj_q, q.size(), "download adj q")) ||
      !(st = d.get(adj_qd, d.adj_qd, qd.size(), "download adj qd")) ||
      !(st = d.get(adj_act, d.adj_act, act.size(), "download adj act")) ||
      !(st = d.get(param, d.adj_param, std::size_t(d.env_count) * d.model.param_count(), "download param grads")))
    return st;
  rigid::batch_sum_param_grads(d.model, d.env_count, param.data(), adj_model);
  return Status::ok();
}

template <class S>
std::size_t RigidBatchCudaT<S>::device_bytes() const {
  return impl_->bytes;
}

template class RigidBatchCudaT<float>;
template class RigidBatchCudaT<double>;

}  // namespace adj
