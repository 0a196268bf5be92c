#include "engine/vis/vis.h"

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

}  // namespace

template <class S>
Surface extract_surface(const ModelT<S>& model, int tri_begin, int tri_end, int tet_begin, int tet_end) {
  Surface s;
  for (int t = tri_begin; t < tri_end; ++t) {
    const auto& f = model.tri_indices[t];
    s.indices.insert(s.indices.end(), {uint32_t(f.i), uint32_t(f.j), uint32_t(f.k)});
  }
  if (tet_end <= tet_begin) return s;

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
  return s;
}

template <class S>
void write_positions(const StateT<S>& state, int begin, int end, float* out) {
  for (int i = begin; i < end; ++i) put3(out + 3 * (i - begin), state.particle_q[i]);
}

template <class S>
void write_normals(const StateT<S>& state, const Surface& surface, float* out) {
  // zero the touched particles, then sum area-weighted face normals in triangle order
  for (uint32_t i : surface.indices) out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 0.0f;
  const auto& q = state.particle_q;
  for (size_t t = 0; t + 2 < surface.indices.size(); t += 3) {
    uint32_t a = surface.indices[t], b = surface.indices[t + 1], c = surface.indices[t + 2];
    vec3<S> n = cross(q[b] - q[a], q[c] - q[a]);  // |n| = 2 * area
    for (uint32_t v : {a, b, c}) {
      out[3 * v] += float(n.x);
      out[3 * v + 1] += float(n.y);
      out[3 * v + 2] += float(n.z);
    }
  }
  for (uint32_t i : surface.indices) {
    float* n = out + 3 * i;
    float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len > 0.0f && n[0] == n[0]) {
      // normalised at most once per particle: a repeated index sees len == 1 afterwards
      n[0] /= len;
      n[1] /= len;
      n[2] /= len;
    } else {
      n[0] = 0.0f;
      n[1] = 1.0f;
      n[2] = 0.0f;
    }
  }
}

template <class S>
void write_spheres(const ModelT<S>& model, const StateT<S>& state, int begin, int end, float* out) {
  for (int i = begin; i < end; ++i) {
    float* o = out + 4 * (i - begin);
    put3(o, state.particle_q[i]);
    o[3] = float(model.particle_radius[i]);
  }
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
  float largest = 0.0f;
  for (int i = begin; i < end; ++i) {
    int k = i - begin;
    put3(origins + 3 * k, state.particle_q[i]);
    put3(vectors + 3 * k, field[i]);
    float m = float(length(field[i]));
    if (!(m == m)) m = 0.0f;  // a NaN would poison the colour scale
    magnitudes[k] = m;
    largest = std::max(largest, m);
  }
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
