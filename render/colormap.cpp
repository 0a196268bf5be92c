#include "render/colormap.h"

#include <algorithm>
#include <cmath>

namespace adj::render {

namespace {

// matplotlib's viridis at t = 0, 0.1, ..., 1
constexpr uint32_t k_viridis[] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                  0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
// Moreland's cool-warm diverging map at t = 0, 1/8, ..., 1
constexpr uint32_t k_diverging[] = {0x3b4cc0, 0x6282ea, 0x8db0fe, 0xb8d0f9, 0xdddddd,
                                    0xf5c4ad, 0xf49a7b, 0xde604d, 0xb40426};

glm::vec3 hex(uint32_t c) {
  return glm::vec3(float((c >> 16) & 255), float((c >> 8) & 255), float(c & 255)) / 255.0f;
}

template <size_t N>
glm::vec3 sample(const uint32_t (&table)[N], float t) {
  float x = std::clamp(t, 0.0f, 1.0f) * float(N - 1);
  size_t i = std::min(size_t(x), N - 2);
  return glm::mix(hex(table[i]), hex(table[i + 1]), x - float(i));
}

}  // namespace

const char* colormap_name(Colormap map) {
  switch (map) {
    case Colormap::viridis:
      return "viridis";
    case Colormap::diverging:
      return "diverging";
  }
  return "?";
}

glm::vec3 colormap_srgb(Colormap map, float t) {
  if (std::isnan(t)) t = 0.0f;
  return map == Colormap::diverging ? sample(k_diverging, t) : sample(k_viridis, t);
}

float ColorScale::normalize(float v) const {
  float d = max - min;
  if (!(std::abs(d) > 0.0f)) return 0.5f;
  float t = (v - min) / d;
  return std::isnan(t) ? 0.0f : std::clamp(t, 0.0f, 1.0f);
}

uint32_t pack_rgba8(const glm::vec4& rgba) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    float c = std::clamp(rgba[i], 0.0f, 1.0f);
    out |= uint32_t(std::lround(c * 255.0f)) << (8 * i);
  }
  return out;
}

glm::vec4 unpack_rgba8(uint32_t p) {
  return glm::vec4(float(p & 255), float((p >> 8) & 255), float((p >> 16) & 255),
                   float((p >> 24) & 255)) /
         255.0f;
}

}  // namespace adj::render
