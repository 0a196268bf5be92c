// engine/vis on the GPU (built with CUDA only): the functors of vis_kernels.h launched as
// kernels that read device states and write into device memory, such as a Vulkan buffer
// imported through render/cuda_interop.h, so positions and normals never cross the bus.
#pragma once

#include <cstdint>

#include "engine/core/math.h"
#include "engine/core/status.h"
#include "engine/vis/vis.h"

namespace adj::vis::cuda {

// a Surface's index arrays on the device (upload once per topology)
struct DeviceSurface {
  uint32_t* indices = nullptr;
  uint32_t* vertices = nullptr;
  uint32_t* vertex_start = nullptr;
  uint32_t* vertex_tris = nullptr;
  int vertex_count = 0;
};
Status upload(const Surface& s, DeviceSurface& out);
void release(DeviceSurface& s);

// the same outputs as vis.h, on device pointers; stream = cudaStream_t (null: default)
Status write_positions(const vec3<float>* q, int begin, int end, float* out, void* stream = nullptr);
Status write_normals(const vec3<float>* q, const DeviceSurface& s, float* out, void* stream = nullptr);
Status write_spheres(const vec3<float>* q, const float* radius, int begin, int end, float* out,
                     void* stream = nullptr);
Status write_vectors(const vec3<float>* q, const vec3<float>* field, int begin, int end, float* origins,
                     float* vectors, float* magnitudes, void* stream = nullptr);

}  // namespace adj::vis::cuda
