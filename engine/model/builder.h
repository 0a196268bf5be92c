// ModelBuilder: adds particles, elements and colliders one by one or as whole objects
// (cloth grids/meshes, soft grids/meshes), then finalize() computes rest shapes and the
// CSR incidence lists and validates everything (errors name the element or the file).
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace adj {

// cloth material, per unit rest area (triangles) and per edge (bending)
template <class S>
struct ClothMaterial {
  S tri_ke = S(1e3);   // stretch/shear modulus [N/m]
  S tri_ka = S(1e3);   // area modulus [N/m]
  S tri_kd = S(1);     // strain-rate damping
  S edge_ke = S(0.1);  // bending stiffness (0 = no bending edges)
  S edge_kd = S(0);    // bending damping
};

// soft-body material
template <class S>
struct SoftMaterial {
  S density = S(1e3);  // [kg/m^3]
  S mu = S(1e4);       // Lame mu [Pa]
  S lambda = S(1e4);   // Lame lambda [Pa]
  S kd = S(0);         // strain-rate damping [Pa s]
};

// a rigid placement for meshes: world = pos + rot * (scale * local)
template <class S>
struct Placement {
  vec3<S> pos;
  mat33<S> rot = mat33<S>::identity();
  S scale = S(1);
};

template <class S>
class ModelBuilderT {
 public:
  using V = vec3<S>;

  // particles and elements; indices refer to particles added before
  int add_particle(V pos, V vel, S mass, S radius = S(0.01));
  int add_spring(int i, int j, S ke, S kd, S rest = S(-1));  // rest < 0: current distance
  int add_triangle(int i, int j, int k, const ClothMaterial<S>& mat);
  int add_edge(int i, int j, int k, int l, S ke, S kd);  // i, j opposite; k, l shared edge
  int add_tet(int i, int j, int k, int l, S mu, S lambda, S kd);

  // cloth: a (nx+1) x (ny+1) particle grid spanning local x and y, placed by rot at origin
  void add_cloth_grid(V origin, const mat33<S>& rot, int nx, int ny, S cell, S particle_mass, V vel,
                      const ClothMaterial<S>& mat, bool pin_left = false, S radius = S(0.01));
  // cloth from any triangle mesh (OBJ)
  Status add_cloth_mesh(const std::string& obj_path, const Placement<S>& place, S particle_mass, V vel,
                        const ClothMaterial<S>& mat, S radius = S(0.01));
  // soft body: nx x ny x nz cells of size cell, 5 tets each
  void add_soft_grid(V origin, int nx, int ny, int nz, S cell, V vel, const SoftMaterial<S>& mat, bool pin_left = false,
                     S radius = S(0.01));
  // soft body from a closed OBJ mesh: voxels of size cell whose centres are inside, 5 tets each
  Status add_soft_mesh(const std::string& obj_path, const Placement<S>& place, S cell, V vel,
                       const SoftMaterial<S>& mat, S radius = S(0.01));

  // colliders
  int add_ground(S height = S(0));
  int add_plane(V point, V normal);
  int add_sphere(V center, S radius);
  int add_box(V center, V half_extents, const mat33<S>& rot = mat33<S>::identity());
  int add_capsule(V center, S radius, S half_height, const mat33<S>& rot = mat33<S>::identity());
  int add_mesh_collider(const Array<V>& vertices, const Array<Idx3>& tris);
  Status add_mesh_collider(const std::string& obj_path, const Placement<S>& place);

  // scene-wide settings (copied into the model)
  ModelT<S>& settings() { return m_; }
  int particle_count() const { return m_.particle_count(); }
  // make particle i kinematic (mass 0)
  void pin_particle(int i) { m_.particle_mass[std::size_t(i)] = S(0); }

  // rest shapes, incidence lists, validation; the builder may be reused afterwards
  Result<ModelT<S>> finalize() const;

 private:
  ModelT<S> m_;
  Array<ClothMaterial<S>> tri_mat_;
};

using ModelBuilder = ModelBuilderT<float>;

// triangle mesh read from an OBJ file (faces triangulated)
template <class S>
struct TriMesh {
  Array<vec3<S>> vertices;
  Array<Idx3> tris;
};
template <class S>
Result<TriMesh<S>> load_obj(const std::string& path);
// STL, binary or ASCII (engine/model/mesh_io.cpp); every triangle has its own 3 vertices
template <class S>
Result<TriMesh<S>> load_stl(const std::string& path);
// Collada .dae, PLY, glTF, 3DS, FBX through assimp: node transforms and <unit> applied, the
// file's up axis ignored (as ROS tools read meshes), identical vertices joined
template <class S>
Result<TriMesh<S>> load_assimp(const std::string& path);
// by the extension (case-insensitive): OBJ (tinyobjloader), STL (load_stl), the rest load_assimp
template <class S>
Result<TriMesh<S>> load_mesh(const std::string& path);

}  // namespace adj
