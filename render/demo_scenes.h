#pragma once
// Synthetic scenes for the renderer's golden tests and benchmarks (and app demos): a cloth
// draped over a sphere, an arrow field, ghost trajectories, a particle pile. Each owns the
// arrays its DrawList points into, so it lives behind a unique_ptr and is never moved.
#include <cstdint>
#include <memory>
#include <vector>

#include "render/camera.h"
#include "render/draw_list.h"
#include "render/line_builder.h"

namespace adj::render::demo {

struct Scene {
  DrawList list;
  Camera camera;
  // storage the list points into
  std::vector<glm::vec3> positions, normals, origins, vectors, points;
  std::vector<uint32_t> indices;
  std::vector<float> scalars, arrow_scalars;
  std::vector<glm::vec4> spheres;
  std::vector<ShapeInstance> shapes, shapes2, markers;
  std::vector<std::vector<glm::vec3>> trajectories;
  LineBuilder lines;
};

// an n x n cloth (side 2 m) draped over a sphere (r 0.5 m) onto the ground, coloured by
// height through viridis, with shadows; arrows = true adds a gradient arrow on every vertex
std::unique_ptr<Scene> draped_cloth(uint32_t n, bool arrows = false);

// a 2D field of arrows (viridis by magnitude) and contact discs with log-length forces
// coloured by a signed value through the diverging map
std::unique_ptr<Scene> arrow_field();

// ghost trajectories of 8 optimizer iterations (faded by age, coloured by loss), a spring
// chain, and a target marker
std::unique_ptr<Scene> trajectories();

// a pile of `count` particles (deterministic) coloured by height, a box and a capsule
std::unique_ptr<Scene> particle_pile(uint32_t count, float radius = 0.02f);

}  // namespace adj::render::demo
