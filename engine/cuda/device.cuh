// internal to engine/cuda (nvcc only): device arrays, the model on the device, a launcher
// bound to a stream, and the particle hash grid built on the device. Shared by the
// per-call solver (cuda_backend.cu) and the device-resident rollout (cuda_rollout.cu).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/solver/kernels.h"

namespace adj::cuda_detail {

template <class F>
__global__ void functor_kernel(F f, int n) {
  int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) f(i);
}

// launches each functor over [0, n) on one stream; the first CUDA error is kept
struct CudaExec {
  cudaError_t* error;
  cudaStream_t stream = nullptr;
  template <class F>
  void launch(int n, const F& f) const {
    if (n <= 0 || *error != cudaSuccess) return;
    functor_kernel<<<(n + 127) / 128, 128, 0, stream>>>(f, n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) *error = e;
  }
  // one stream runs launches in order: nothing to relax
  template <class F>
  void launch_nowait(int n, const F& f) const {
    launch(n, f);
  }
};

inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  std::string m = "CUDA backend, ";
  m += what;
  m += ": ";
  m += cudaGetErrorString(e);
  return Status::error(m);
}

// a device array (RAII); uploads and downloads are synchronous unless a stream is given
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : ptr_(o.ptr_), n_(o.n_) {
    o.ptr_ = nullptr;
    o.n_ = 0;
  }
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  cudaError_t resize(std::size_t n) {
    if (n == n_) return cudaSuccess;
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    n_ = n;
    return n ? cudaMalloc(&ptr_, n * sizeof(T)) : cudaSuccess;
  }
  cudaError_t upload(const std::vector<T>& a) {
    cudaError_t e = resize(a.size());
    if (e != cudaSuccess || a.empty()) return e;
    return cudaMemcpy(ptr_, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  // elements [first, first + count) from host memory
  cudaError_t upload_at(std::size_t first, const T* src, std::size_t count) {
    if (!count) return cudaSuccess;
    return cudaMemcpy(ptr_ + first, src, count * sizeof(T), cudaMemcpyHostToDevice);
  }
  cudaError_t download(std::vector<T>& a) const { return download_range(0, n_, a); }
  cudaError_t download_range(std::size_t first, std::size_t count, std::vector<T>& a) const {
    a.resize(count);
    if (!count) return cudaSuccess;
    return cudaMemcpy(a.data(), ptr_ + first, count * sizeof(T), cudaMemcpyDeviceToHost);
  }
  cudaError_t zero(cudaStream_t s = nullptr) { return n_ ? cudaMemsetAsync(ptr_, 0, n_ * sizeof(T), s) : cudaSuccess; }
  T* get() const { return ptr_; }
  T* at(std::size_t i) const { return ptr_ ? ptr_ + i : nullptr; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

template <class S>
struct DeviceState {
  DeviceArray<vec3<S>> q, qd;
  cudaError_t alloc(int n) {
    cudaError_t e = q.resize(n);
    return e != cudaSuccess ? e : qd.resize(n);
  }
};

// the model's arrays on the device and the ModelView over them
template <class S>
struct DeviceModel {
  ModelView<S> view{};
  DeviceArray<vec3<S>> particle_q, shape_pos, shape_size, mesh_vertices;
  DeviceArray<S> particle_mass, particle_radius, spring_ke, spring_kd, spring_rest, tri_area, tri_ke, tri_ka, tri_kd,
      edge_rest, edge_ke, edge_kd, tet_volume, tet_mu, tet_lambda, tet_kd;
  DeviceArray<Idx2> spring_indices;
  DeviceArray<Idx3> tri_indices, mesh_tris;
  DeviceArray<Idx4> edge_indices, tet_indices;
  DeviceArray<mat22<S>> tri_pose;
  DeviceArray<mat33<S>> tet_pose, shape_rot;
  DeviceArray<int> shape_type, shape_mesh_start, shape_mesh_count, incidence_start, incidence_slot, exclude_start,
      exclude_list;

  cudaError_t upload(const ModelT<S>& m);
};

// the hash grid of kernels.h built on the device: cell and bucket of every particle, a
// stable radix sort by bucket (so each bucket lists particles in increasing index order,
// exactly as the host build does) and bucket starts by binary search. No atomics.
template <class S>
struct DeviceGrid {
  int table_size = 0;
  int bits = 0;
  S cell_size = S(1);
  DeviceArray<int> key, key_sorted, index, sorted, cell_start;
  DeviceArray<Idx3> cell;
  DeviceArray<unsigned char> temp;  // CUB scratch, sized once (capture needs no allocation)

  cudaError_t alloc(int n, S cell);
  // enqueue the build for positions q on the stream (capturable)
  void build(const CudaExec& exec, const vec3<S>* q, int n);
  GridView view() const { return {table_size, cell_start.get(), sorted.get(), cell.get()}; }
};

}  // namespace adj::cuda_detail
