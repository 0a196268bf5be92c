#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/vis/vis_cuda.h"
#include "engine/vis/vis_kernels.h"

namespace adj::vis::cuda {

namespace {

template <class F>
__global__ void run(F f, int n) {
  int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) f(i);
}

template <class F>
Status launch(const char* what, int n, const F& f, void* stream) {
  if (n <= 0) return Status::ok();
  run<<<(n + 127) / 128, 128, 0, static_cast<cudaStream_t>(stream)>>>(f, n);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return Status::error(std::string("vis ") + what + ": " + cudaGetErrorString(e));
  return Status::ok();
}

Status copy(const std::vector<uint32_t>& src, uint32_t** dst) {
  if (src.empty()) return Status::ok();
  if (cudaMalloc(dst, src.size() * sizeof(uint32_t)) != cudaSuccess ||
      cudaMemcpy(*dst, src.data(), src.size() * sizeof(uint32_t), cudaMemcpyHostToDevice) != cudaSuccess)
    return Status::error("vis: cannot upload a surface to the GPU");
  return Status::ok();
}

}  // namespace

Status upload(const Surface& s, DeviceSurface& out) {
  release(out);
  for (auto [src, dst] : {std::pair{&s.indices, &out.indices}, std::pair{&s.vertices, &out.vertices},
                          std::pair{&s.vertex_start, &out.vertex_start}, std::pair{&s.vertex_tris, &out.vertex_tris}})
    if (Status st = copy(*src, dst); !st) {
      release(out);
      return st;
    }
  out.vertex_count = s.vertex_count();
  return Status::ok();
}

void release(DeviceSurface& s) {
  for (uint32_t* p : {s.indices, s.vertices, s.vertex_start, s.vertex_tris})
    if (p) cudaFree(p);
  s = DeviceSurface{};
}

Status write_positions(const vec3<float>* q, int begin, int end, float* out, void* stream) {
  return launch("positions", end - begin, PositionsKernel<float>{q, begin, out}, stream);
}

Status write_normals(const vec3<float>* q, const DeviceSurface& s, float* out, void* stream) {
  NormalsKernel<float> k{q, s.indices, s.vertices, s.vertex_start, s.vertex_tris, out};
  return launch("normals", s.vertex_count, k, stream);
}

Status write_spheres(const vec3<float>* q, const float* radius, int begin, int end, float* out, void* stream) {
  return launch("spheres", end - begin, SpheresKernel<float>{q, radius, begin, out}, stream);
}

Status write_vectors(const vec3<float>* q, const vec3<float>* field, int begin, int end, float* origins,
                     float* vectors, float* magnitudes, void* stream) {
  return launch("vectors", end - begin, VectorsKernel<float>{q, field, begin, origins, vectors, magnitudes}, stream);
}

}  // namespace adj::vis::cuda
