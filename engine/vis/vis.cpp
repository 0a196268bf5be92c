#include "engine/vis/vis.h"

#include "engine/core/parallel.h"
#include "engine/vis/vis_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace adj::vis {

namespace {

template <class S>
void put3(float* out, const vec3<S>& v) {
  out[0] = float(v.x);
  out[1] = float(v.y);
  out[2] = float(v.z);
}

// vertex -> triangles (CSR), vertices in increasing particle order, triangles in order
void build_incidence(Surface& s) {
  std::map<uint32_t, std::vector<uint32_t>> tris_of;
  for (size_t t = 0; t < s.indices.size() / 3; ++t)
    for (int c = 0; c < 3; ++c) {
      auto& list = tris_of[s.indices[3 * t + c]];
      if (list.empty() || list.back() != t) list.push_back(uint32_t(t));
    }
  s.vertices.clear();
  s.vertex_start.assign(1, 0);
  s.vertex_tris.clear();
  for (const auto& [v, list] : tris_of) {
    s.vertices.push_back(v);
    s.vertex_tris.insert(s.vertex_tris.end(), list.begin(), list.end());
    s.vertex_start.push_back(uint32_t(s.vertex_tris.size()));
  }
}

}  // namespace

Surface merge_surfaces(const std::vector<const Surface*>& parts) {
  Surface s;
  for (const Surface* p : parts)
    if (p) s.indices.insert(s.indices.end(), p->indices.begin(), p->indices.end());
  build_incidence(s);
  return s;
}

template <class S>
Surface extract_surface(const ModelT<S>& model, int tri_begin, int tri_end, int tet_begin, int tet_end) {
  Surface s;
  for (int t = tri_begin; t < tri_end; ++t) {
    const auto& f = model.tri_indices[t];
    s.indices.insert(s.indices.end(), {uint32_t(f.i), uint32_t(f.j), uint32_t(f.k)});
  }
  if (tet_end <= tet_begin) {
    build_incidence(s);
    return s;
  }

  // faces by sorted key -> (count, face oriented away from the tet's fourth vertex)
  struct Face {
    int count = 0;
    std::array<int, 3> v{};
  };
  std::map<std::array<int, 3>, Face> faces;
  const auto& q = model.particle_q;
  for (int t = tet_begin; t < tet_end; ++t) {
    const auto& k = model.tet_indices[t];
    const int tet[4] = {k.i, k.j, k.k, k.l};
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f;
      int n = 0;
      for (int j = 0; j < 4; ++j)
        if (j != skip) f[n++] = tet[j];
      // outward: the normal must point away from the skipped vertex (rest positions)
      vec3<S> nrm = cross(q[f[1]] - q[f[0]], q[f[2]] - q[f[0]]);
      if (dot(nrm, q[tet[skip]] - q[f[0]]) > S(0)) std::swap(f[1], f[2]);
      std::array<int, 3> key = f;
      std::sort(key.begin(), key.end());
      Face& face = faces[key];
      ++face.count;
      face.v = f;
    }
  }
  for (const auto& [key, face] : faces)
    if (face.count == 1)
      s.indices.insert(s.indices.end(), {uint32_t(face.v[0]), uint32_t(face.v[1]), uint32_t(face.v[2])});
  build_incidence(s);
  return s;
}

template <class S>
void write_positions(const StateT<S>& state, int begin, int end, float* out) {
  parallel_for(end - begin, 0, PositionsKernel<S>{state.particle_q.data(), begin, out});
}

template <class S>
void write_normals(const StateT<S>& state, const Surface& surface, float* out) {
  NormalsKernel<S> k{state.particle_q.data(), surface.indices.data(), surface.vertices.data(),
                     surface.vertex_start.data(), surface.vertex_tris.data(), out};
  parallel_for(surface.vertex_count(), 0, k);
}

template <class S>
void write_spheres(const ModelT<S>& model, const StateT<S>& state, int begin, int end, float* out) {
  parallel_for(end - begin, 0, SpheresKernel<S>{state.particle_q.data(), model.particle_radius.data(), begin, out});
}

template <class S>
void write_springs(const ModelT<S>& model, const StateT<S>& state, int begin, int end, float* out) {
  for (int s = begin; s < end; ++s) {
    const auto& e = model.spring_indices[s];
    put3(out + 6 * (s - begin), state.particle_q[e.i]);
    put3(out + 6 * (s - begin) + 3, state.particle_q[e.j]);
  }
}

template <class S>
float write_vectors(const StateT<S>& state, const Array<vec3<S>>& field, int begin, int end, float* origins,
                    float* vectors, float* magnitudes) {
  parallel_for(end - begin, 0,
               VectorsKernel<S>{state.particle_q.data(), field.data(), begin, origins, vectors, magnitudes});
  float largest = 0.0f;
  for (int k = 0; k < end - begin; ++k) largest = std::max(largest, magnitudes[k]);
  return largest;
}

template <class S>
void write_contacts(const ContactsT<S>& c, float* points, float* normals, float* forces) {
  for (int k = 0; k < c.contact_count(); ++k) {
    put3(points + 3 * k, c.point[k]);
    put3(normals + 3 * k, c.normal[k]);
    put3(forces + 3 * k, c.force[k]);
  }
}

template <class S>
bool bounds(const StateT<S>& state, int begin, int end, float lo[3], float hi[3]) {
  if (end <= begin) return false;
  for (int c = 0; c < 3; ++c) {
    lo[c] = 1e30f;
    hi[c] = -1e30f;
  }
  for (int i = begin; i < end; ++i) {
    const auto& p = state.particle_q[i];
    const float v[3] = {float(p.x), float(p.y), float(p.z)};
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], v[c]);
      hi[c] = std::max(hi[c], v[c]);
    }
  }
  return true;
}

#define ADJ_VIS_INSTANTIATE(S)                                                                       \
  template Surface extract_surface(const ModelT<S>&, int, int, int, int);                           \
  template void write_positions(const StateT<S>&, int, int, float*);                                \
  template void write_normals(const StateT<S>&, const Surface&, float*);                            \
  template void write_spheres(const ModelT<S>&, const StateT<S>&, int, int, float*);                \
  template void write_springs(const ModelT<S>&, const StateT<S>&, int, int, float*);                \
  template float write_vectors(const StateT<S>&, const Array<vec3<S>>&, int, int, float*, float*,   \
                               float*);                                                             \
  template void write_contacts(const ContactsT<S>&, float*, float*, float*);                        \
  template bool bounds(const StateT<S>&, int, int, float*, float*);

ADJ_VIS_INSTANTIATE(float)
ADJ_VIS_INSTANTIATE(double)

}  // namespace adj::vis
