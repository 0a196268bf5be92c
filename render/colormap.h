#pragma once
// Colormaps for scalar colouring (meshes, particles, arrows, ghost trajectories). The
// tables here are the single source: the renderer uploads them to its shaders and the UI
// draws legends from the same function.
#include <cstdint>
#include <glm/glm.hpp>

namespace adj::render {

enum class Colormap : uint32_t {
  viridis = 0,    // sequential, perceptually uniform (magnitudes, losses)
  diverging = 1,  // blue - light grey - red, centred on the middle (signed values)
};
constexpr int k_colormap_count = 2;
constexpr int k_colormap_lut_size = 64;  // entries per map in the shaders' table

const char* colormap_name(Colormap map);

// display-ready (sRGB) colour at t in [0, 1] (clamped), linear between table entries
glm::vec3 colormap_srgb(Colormap map, float t);

// a value range mapped onto a colormap; for a diverging map use a range symmetric about 0
struct ColorScale {
  Colormap map = Colormap::viridis;
  float min = 0.0f;
  float max = 1.0f;

  float normalize(float v) const;  // (v - min) / (max - min), clamped to [0, 1]
  glm::vec3 srgb(float v) const { return colormap_srgb(map, normalize(v)); }
};

// RGBA8 packed as the shaders read it (R in the lowest byte); input in 0..1, clamped
uint32_t pack_rgba8(const glm::vec4& rgba);
glm::vec4 unpack_rgba8(uint32_t packed);

}  // namespace adj::render
