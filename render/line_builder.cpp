#include "render/line_builder.h"

#include <algorithm>
#include <cmath>

namespace adj::render {

void LineBuilder::clear() {
  positions.clear();
  colors.clear();
  indices.clear();
}

void LineBuilder::add_strip(std::span<const glm::vec3> points,
                            std::span<const uint32_t> point_colors) {
  if (points.size() < 2) return;
  uint32_t base = uint32_t(positions.size());
  for (size_t i = 0; i < points.size(); ++i) {
    positions.push_back(points[i]);
    colors.push_back(point_colors.size() == points.size() ? point_colors[i] : point_colors[0]);
  }
  for (uint32_t i = 0; i + 1 < points.size(); ++i) {
    indices.push_back(base + i);
    indices.push_back(base + i + 1);
  }
}

void LineBuilder::add_strip(std::span<const glm::vec3> points, uint32_t color) {
  add_strip(points, std::span<const uint32_t>(&color, 1));
}

void LineBuilder::add_segment(const glm::vec3& a, const glm::vec3& b, uint32_t color) {
  glm::vec3 p[2] = {a, b};
  add_strip(p, color);
}

LineDraw LineBuilder::draw(float width_px, ObjectId id) const {
  LineDraw d;
  d.positions = positions;
  d.colors = colors;
  d.indices = indices;
  d.width = width_px;
  d.id = id;
  return d;
}

void add_ghost_trajectories(LineBuilder& out, std::span<const GhostTrajectory> iterations,
                            const ColorScale& loss_scale, float fade, float min_alpha) {
  const size_t n = iterations.size();
  for (size_t i = 0; i < n; ++i) {
    size_t age = n - 1 - i;  // 0 = newest
    float alpha = std::max(std::pow(fade, float(age)), min_alpha);
    glm::vec3 c = loss_scale.srgb(iterations[i].loss);
    out.add_strip(iterations[i].points, pack_rgba8(glm::vec4(c, alpha)));
  }
}

std::vector<glm::vec3> vertex_normals(std::span<const glm::vec3> positions,
                                      std::span<const uint32_t> indices) {
  std::vector<glm::vec3> n(positions.size(), glm::vec3(0.0f));
  for (size_t t = 0; t + 2 < indices.size(); t += 3) {
    uint32_t a = indices[t], b = indices[t + 1], c = indices[t + 2];
    glm::vec3 w = glm::cross(positions[b] - positions[a], positions[c] - positions[a]);
    n[a] += w;  // |w| = 2 * area: area weighting for free
    n[b] += w;
    n[c] += w;
  }
  for (glm::vec3& v : n) {
    float l = glm::length(v);
    v = l > 0.0f ? v / l : glm::vec3(0.0f);
  }
  return n;
}

std::vector<uint32_t> grid_indices(uint32_t nx, uint32_t ny) {
  std::vector<uint32_t> idx;
  if (nx < 2 || ny < 2) return idx;
  idx.reserve(size_t(nx - 1) * (ny - 1) * 6);
  for (uint32_t y = 0; y + 1 < ny; ++y)
    for (uint32_t x = 0; x + 1 < nx; ++x) {
      uint32_t a = y * nx + x, b = a + 1, c = a + nx, d = c + 1;
      // counter-clockwise seen from +y when the grid lies in xz with rows along +z
      idx.insert(idx.end(), {a, c, b, b, c, d});
    }
  return idx;
}

}  // namespace adj::render
