// triangle-mesh body shapes (GEOM_MESH): preparing a mesh for a model (welded
// vertices, scale, convex hull) and the mass properties of the solid a closed mesh bounds.
// their contact features are a stage of the articulation (engine/articulation/mesh_pairs.h).
//
// contact of a mesh shape is the contact of its convex hull (at most kRigidMeshHullCap
// vertices; for larger meshes the hull of the mesh's support points in kRigidMeshHullCap
// fixed directions, so a 10k-triangle mesh costs what a 64-vertex hull costs):
//   against the ground and planes   the hull vertices as samples of radius 0 (as box corners)
//   against a sphere                the sphere's centre against the hull's signed distance (1)
//   against a box, capsule or mesh  the mesh's hull vertices against the other's signed
//                                   distance, then the other's samples (box corners, capsule
//                                   axis samples, the other mesh's hull vertices) against the
//                                   hull's signed distance
// the hull's signed distance is exact: inside, the largest face-plane distance; outside, the
// distance to the closest hull triangle (only for points within reach of the faces' planes).
// missed: concave parts (a peg in a mesh's hole touches the hull), and hull edge against box
// or hull edge when no vertex is inside the other (as box-box edge-edge). cost per step: one
// ground test per hull vertex; per touching pair (hull vertices + other samples) x hull faces.
#pragma once

#include <string>
#include <vector>

#include "engine/core/spatial.h"
#include "engine/core/status.h"
#include "engine/model/rigid_model.h"

namespace adj {

inline constexpr int kRigidMeshHullCap = 64;

// a mesh shape's geometry, prepared for a model: shape frame, scale applied [m]
struct RigidMeshGeometry {
  std::vector<vec3<double>> vertices;  // welded (equal positions merged)
  std::vector<Idx3> tris;              // outward (counter-clockwise seen from outside)
  std::vector<vec3<double>> hull_vertices;
  std::vector<Idx3> hull_tris;  // indices into hull_vertices, outward
  std::vector<vec3<double>> hull_normals;
  std::vector<double> hull_offsets;
  double bound = 0;  // radius of a sphere about the shape origin that holds the mesh [m]
};

// scales (per axis, in the shape frame) and welds the mesh and builds its convex hull; errors
// (no triangles, a bad index, non-finite or flat) start with `who`
Result<RigidMeshGeometry> rigid_mesh_geometry(const std::vector<vec3<double>>& vertices, const std::vector<Idx3>& tris,
                                              const vec3<double>& scale, const std::string& who);

// mass [kg], centre of mass [m] and inertia about it [kg m^2] (mesh frame) of the solid of
// density rho [kg/m^3] that a closed mesh bounds (signed tetrahedra from the origin, the
// divergence theorem as in Eberly's "Polyhedral Mass Properties"). a mesh whose faces all
// point inward is taken as turned inside out. errors (not closed: an edge not shared by
// exactly two faces of opposite direction; zero volume) start with `who`
Status rigid_mesh_mass(const std::vector<vec3<double>>& vertices, const std::vector<Idx3>& tris, double rho,
                       double& mass, vec3<double>& com, mat33<double>& inertia, const std::string& who);

// convex hull of points (incremental, in index order; deterministic): outward triangles
// indexing `points`; an error when the points are (nearly) flat
Status rigid_convex_hull(const std::vector<vec3<double>>& points, std::vector<Idx3>& tris);

namespace rigid {

// hull vertices [begin, end) of shape s in the model's hull_vertex (empty for other shapes).
// M: RigidModelT or its view RigidViewT (engine/model/rigid_view.h), host or device
template <class M>
ADJ_HD inline void mesh_hull_vertices(const M& m, int s, int& begin, int& end) {
  const bool has = m.shape_type[s] == GEOM_MESH && s + 1 < int(m.shape_hull_vertex_start.size());
  begin = has ? m.shape_hull_vertex_start[s] : 0;
  end = has ? m.shape_hull_vertex_start[s + 1] : 0;
}

// signed distance from x (world) to the hull of mesh shape s whose frame is at (Rs, ps) in the
// world, and the outward unit normal n (world). points farther than `reach` from every face
// plane return a lower bound of the distance (> reach) and no normal
template <class T, class M, class S>
ADJ_HD T mesh_hull_distance(const M& m, int s, const mat33<T>& Rs, const vec3<T>& ps, const vec3<T>& x, S reach,
                            vec3<T>& n) {
  const int f0 = m.shape_hull_tri_start[s], f1 = m.shape_hull_tri_start[s + 1];
  const vec3<T> local = transpose(Rs) * (x - ps);
  int best = f0;
  T dmax = T(-1e30);
  for (int f = f0; f < f1; ++f) {
    T d = dot(lift<T>(m.hull_normal[f]), local) - T(m.hull_offset[f]);
    if (value(d) > value(dmax)) dmax = d, best = f;
  }
  if (value(dmax) > reach) return dmax;
  if (!(value(dmax) > 0)) {  // inside: the nearest face plane
    n = Rs * lift<T>(m.hull_normal[best]);
    return dmax;
  }
  // outside: the closest point on the hull's triangles
  vec3<T> c;
  T d2 = T(1e30);
  for (int f = f0; f < f1; ++f) {
    const Idx3 t = m.hull_tri[f];
    vec3<T> q = closest_on_triangle(local, lift<T>(m.hull_vertex[t.i]), lift<T>(m.hull_vertex[t.j]),
                                    lift<T>(m.hull_vertex[t.k]));
    T e = length_sq(local - q);
    if (value(e) < value(d2)) d2 = e, c = q;
  }
  T d = sqrt_(d2 + T(1e-30));
  n = Rs * ((local - c) / d);
  return d;
}

}  // namespace rigid
}  // namespace adj
