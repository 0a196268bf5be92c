#pragma once
// GPU-side layouts of the scene renderer: the frame's uniform block and the per-draw push
// constants. Mirrors shaders/common.glsl (std140, vec4-aligned); keep them in step.
// Internal to render/ (scene_*.cpp).
#include <cstdint>
#include <glm/glm.hpp>

#include "render/colormap.h"

namespace adj::render::gpu {

struct View {
  glm::mat4 view_proj{1.0f};
  glm::vec4 eye{0.0f};  // w: 1 orthographic
  glm::vec4 forward{0.0f};
  // w, h of the image [px]; z: the pass's pixels per image pixel (< 1: a reduced scene pass)
  glm::vec4 viewport{0.0f};
};

struct Frame {
  View views[2];                // 0 camera, 1 light
  glm::vec4 light_dir{0.0f};    // w intensity
  glm::vec4 light_color{0.0f};  // w shadows on
  glm::vec4 sky_ambient{0.0f};
  glm::vec4 ground_ambient{0.0f};
  glm::vec4 shadow{0.0f};  // texel world size, 1/resolution, depth bias, w 1: one PCF lookup (else 4)
  glm::vec4 ground{0.0f};  // height, cell, fade radius, 1 = the world is z-up (0: y-up)
  glm::vec4 ground_color{0.0f};
  glm::vec4 ground_center{0.0f};
  glm::vec4 colormaps[k_colormap_count * k_colormap_lut_size];
};

struct Draw {
  glm::vec4 data[4]{};
  glm::vec4 color{1.0f};
  glm::vec4 params{0.0f};
  glm::uvec4 flags{0u};  // view, object id, bits, per kind
};
static_assert(sizeof(Draw) == 112, "push constants must stay <= 128 bytes");

constexpr uint32_t k_normals = 1u;
constexpr uint32_t k_scalars = 2u;
constexpr uint32_t k_colors = 4u;
constexpr uint32_t k_cmap_shift = 8u;

}  // namespace adj::render::gpu
