// The per-element work of engine/vis as ADJ_HD functors over raw pointers: vis.cpp runs
// them in CPU loops and vis_cuda.cu launches the same functors as CUDA kernels writing
// into device memory (an imported Vulkan buffer, with interop). One source for both.
#pragma once

#include <cstdint>

#include "engine/core/math.h"

namespace adj::vis {

// particle i -> out[3 * (i - begin)]
template <class S>
struct PositionsKernel {
  const vec3<S>* q;
  int begin;
  float* out;
  ADJ_HD void operator()(int k) const {
    const vec3<S>& p = q[begin + k];
    out[3 * k] = float(value(p.x));
    out[3 * k + 1] = float(value(p.y));
    out[3 * k + 2] = float(value(p.z));
  }
};

// particle i -> out[4 * (i - begin)] = x, y, z, radius
template <class S>
struct SpheresKernel {
  const vec3<S>* q;
  const S* radius;
  int begin;
  float* out;
  ADJ_HD void operator()(int k) const {
    const vec3<S>& p = q[begin + k];
    out[4 * k] = float(value(p.x));
    out[4 * k + 1] = float(value(p.y));
    out[4 * k + 2] = float(value(p.z));
    out[4 * k + 3] = float(value(radius[begin + k]));
  }
};

// surface vertex v (particle vertices[v]): the area-weighted normal gathered over its
// triangles in a fixed order (CSR: vertex_start, vertex_tris); no atomics, deterministic
template <class S>
struct NormalsKernel {
  const vec3<S>* q;
  const uint32_t* indices;       // surface triangles (3 per)
  const uint32_t* vertices;      // particle index of each surface vertex
  const uint32_t* vertex_start;  // CSR offsets, (vertex_count + 1)
  const uint32_t* vertex_tris;   // triangle indices
  float* out;                    // written at out[3 * particle]
  ADJ_HD void operator()(int v) const {
    S nx = S(0), ny = S(0), nz = S(0);
    for (uint32_t k = vertex_start[v]; k < vertex_start[v + 1]; ++k) {
      uint32_t t = vertex_tris[k];
      const vec3<S>& a = q[indices[3 * t]];
      vec3<S> n = cross(q[indices[3 * t + 1]] - a, q[indices[3 * t + 2]] - a);  // |n| = 2 area
      nx += n.x;
      ny += n.y;
      nz += n.z;
    }
    float fx = float(value(nx)), fy = float(value(ny)), fz = float(value(nz));
    float len = sqrt_(fx * fx + fy * fy + fz * fz);
    float* o = out + 3 * vertices[v];
    if (len > 0.0f && len == len) {
      o[0] = fx / len;
      o[1] = fy / len;
      o[2] = fz / len;
    } else {  // a collapsed triangle fan: any unit normal beats a NaN
      o[0] = 0.0f;
      o[1] = 1.0f;
      o[2] = 0.0f;
    }
  }
};

// a per-particle vector field as arrows: origins, vectors, magnitudes (NaN -> 0)
template <class S>
struct VectorsKernel {
  const vec3<S>* q;
  const vec3<S>* field;
  int begin;
  float* origins;
  float* vectors;
  float* magnitudes;
  ADJ_HD void operator()(int k) const {
    const vec3<S>& p = q[begin + k];
    const vec3<S>& f = field[begin + k];
    origins[3 * k] = float(value(p.x));
    origins[3 * k + 1] = float(value(p.y));
    origins[3 * k + 2] = float(value(p.z));
    vectors[3 * k] = float(value(f.x));
    vectors[3 * k + 1] = float(value(f.y));
    vectors[3 * k + 2] = float(value(f.z));
    float m = float(value(length(f)));
    magnitudes[k] = m == m ? m : 0.0f;
  }
};

}  // namespace adj::vis
