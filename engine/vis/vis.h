// State, gradients and contacts -> render-ready arrays (DESIGN.md: engine/vis). Plain
// floats written into memory the caller provides (a mapped Vulkan buffer, a vector, later
// a CUDA pointer into an exported buffer); the engine never sees the renderer's types.
// Every output is tightly packed float triples (xyz) or quads (xyzw) unless stated.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model.h"

namespace adj::vis {

// the drawable surface of a range of cloth triangles and soft-body tetrahedra: triangles
// over particle indices, counter-clockwise seen from outside (tets: the faces that belong
// to one tet only, turned away from its fourth vertex)
struct Surface {
  std::vector<uint32_t> indices;  // particle indices, (3 * triangle_count)
  // vertex -> triangle incidence, for gathering normals without atomics
  std::vector<uint32_t> vertices;      // particle index of each surface vertex, (vertex_count)
  std::vector<uint32_t> vertex_start;  // CSR offsets into vertex_tris, (vertex_count + 1)
  std::vector<uint32_t> vertex_tris;   // incident triangles, in triangle order

  int triangle_count() const { return int(indices.size() / 3); }
  int vertex_count() const { return int(vertices.size()); }
};

template <class S>
Surface extract_surface(const ModelT<S>& model, int tri_begin, int tri_end, int tet_begin, int tet_end);

// surfaces over disjoint particle sets as one (their triangles in the given order), so that
// one position and one normal array serve them all (app/gpu_view.h)
Surface merge_surfaces(const std::vector<const Surface*>& parts);

// positions of particles [begin, end) -> out[3 * (i - begin) + c]
template <class S>
void write_positions(const StateT<S>& state, int begin, int end, float* out);

// area-weighted vertex normals of the surface for every particle the surface touches,
// written at out[3 * i] for particle i (out holds 3 * particle_count floats; particles the
// surface does not touch are left alone). Deterministic: triangles are summed in order.
template <class S>
void write_normals(const StateT<S>& state, const Surface& surface, float* out);

// particles [begin, end) as spheres: out[4 * k] = x, y, z, radius
template <class S>
void write_spheres(const ModelT<S>& model, const StateT<S>& state, int begin, int end, float* out);

// spring segments between current positions: out[6 * k] = xa, ya, za, xb, yb, zb for
// springs [begin, end)
template <class S>
void write_springs(const ModelT<S>& model, const StateT<S>& state, int begin, int end, float* out);

// a per-particle vector field (a velocity, a gradient dL/dx0, a force) for particles
// [begin, end) as arrows: origins at the positions, vectors as given, magnitudes; returns
// the largest magnitude (for a colour scale)
template <class S>
float write_vectors(const StateT<S>& state, const Array<vec3<S>>& field, int begin, int end, float* origins,
                    float* vectors, float* magnitudes);

// contacts: points, normals and forces, (contact_count) each
template <class S>
void write_contacts(const ContactsT<S>& contacts, float* points, float* normals, float* forces);

// the axis-aligned bounds of particles [begin, end): lo and hi (3 floats each); false if empty
template <class S>
bool bounds(const StateT<S>& state, int begin, int end, float lo[3], float hi[3]);

}  // namespace adj::vis
