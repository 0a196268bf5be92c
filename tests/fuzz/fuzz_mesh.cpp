// Fuzz target: a mesh file read by load_mesh (engine/model/mesh_io.cpp: OBJ through
// tinyobjloader, STL by hand, Collada through Assimp), then made a robot's mesh shape: its
// convex hull and its mass (engine/model/rigid_mesh.h). ADJ_FUZZ_MESH_EXT picks the reader, so
// one source makes the three targets.
#include "engine/model/builder.h"
#include "engine/model/rigid_mesh.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj;
  const std::string path = fuzz::write_input(data, size, std::string("mesh") + ADJ_FUZZ_MESH_EXT);
  auto mesh = load_mesh<double>(path);
  if (!mesh) {
    fuzz::require_names(mesh.status().message(), path);
    return 0;
  }
  // as a robot's mesh shape: welded, hull built (rigid_mesh_geometry), mass of the solid
  auto g = rigid_mesh_geometry(mesh->vertices, mesh->tris, vec3<double>{1, 1, 1}, path);
  if (!g) {
    fuzz::require_names(g.status().message(), path);
    return 0;
  }
  double mass = 0;
  vec3<double> com{};
  mat33<double> inertia{};
  Status s = rigid_mesh_mass(g->vertices, g->tris, 1000.0, mass, com, inertia, path);
  if (!s) fuzz::require_names(s.message(), path);
  return 0;
}
