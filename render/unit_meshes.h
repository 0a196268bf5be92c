#pragma once
// The unit meshes behind instanced shapes and arrows, built once on the host.
// Internal to render/ (scene_renderer.cpp); shape.vert and arrow.vert give them size.
#include <cstdint>
#include <glm/glm.hpp>
#include <vector>

namespace adj::render {

struct UnitVertex {
  glm::vec4 position;  // xyz; w: capsule side (+-1), ring outer (1) / inner (0), arrow part
  glm::vec4 normal;    // xyz (w unused)
};

struct MeshRange {
  uint32_t first_index = 0;
  uint32_t index_count = 0;
};

struct UnitMeshes {
  std::vector<UnitVertex> vertices;
  std::vector<uint32_t> indices;                     // absolute vertex indices
  MeshRange box, capsule, plane, ring, arrow, disc;  // a sphere is a capsule of length 0
};

UnitMeshes make_unit_meshes();

}  // namespace adj::render
