#pragma once
// Host-side helpers that build line and mesh arrays: strips and segments with per-vertex
// colours, ghost trajectories of earlier optimizer iterations, smooth vertex normals.
#include <cstdint>
#include <glm/glm.hpp>
#include <span>
#include <vector>

#include "render/colormap.h"
#include "render/draw_list.h"

namespace adj::render {

struct LineBuilder {
  std::vector<glm::vec3> positions;  // [m]
  std::vector<uint32_t> colors;      // RGBA8 sRGB, one per position
  std::vector<uint32_t> indices;     // segment pairs

  void clear();
  // a polyline through points, one colour each (colors.size() == points.size()) or one
  void add_strip(std::span<const glm::vec3> points, std::span<const uint32_t> point_colors);
  void add_strip(std::span<const glm::vec3> points, uint32_t color);
  void add_segment(const glm::vec3& a, const glm::vec3& b, uint32_t color);

  // a LineDraw over these arrays (they must outlive the frame's record call)
  LineDraw draw(float width_px, ObjectId id = 0) const;
};

// one earlier optimizer iteration: its trajectory and its loss
struct GhostTrajectory {
  std::span<const glm::vec3> points;
  float loss = 0.0f;
};

// iterations oldest first: each is coloured by its loss through loss_scale; the newest is
// opaque, and each older one keeps `fade` of the alpha of the next (never below min_alpha)
void add_ghost_trajectories(LineBuilder& out, std::span<const GhostTrajectory> iterations,
                            const ColorScale& loss_scale, float fade = 0.75f,
                            float min_alpha = 0.12f);

// area-weighted smooth normals of an indexed triangle mesh (unit, or zero when unused)
std::vector<glm::vec3> vertex_normals(std::span<const glm::vec3> positions,
                                      std::span<const uint32_t> indices);

// triangle indices of an nx x ny vertex grid, row-major (vertex = y * nx + x)
std::vector<uint32_t> grid_indices(uint32_t nx, uint32_t ny);

}  // namespace adj::render
