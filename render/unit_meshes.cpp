#include "render/unit_meshes.h"

#include <cmath>

namespace adj::render {

namespace {

constexpr float k_pi = 3.14159265358979f;

struct Builder {
  UnitMeshes& m;
  uint32_t start_index = 0;

  uint32_t vertex(glm::vec3 p, float w, glm::vec3 n) {
    m.vertices.push_back({glm::vec4(p, w), glm::vec4(n, 0.0f)});
    return uint32_t(m.vertices.size() - 1);
  }
  void tri(uint32_t a, uint32_t b, uint32_t c) { m.indices.insert(m.indices.end(), {a, b, c}); }
  void quad(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    tri(a, b, c);
    tri(a, c, d);
  }
  void begin() { start_index = uint32_t(m.indices.size()); }
  MeshRange end() const { return {start_index, uint32_t(m.indices.size()) - start_index}; }
  // a ring of `segments` + 1 vertices (the seam duplicated)
  uint32_t ring(float radius, float y, float w, int segments, bool radial_normal, glm::vec3 n) {
    uint32_t first = uint32_t(m.vertices.size());
    for (int i = 0; i <= segments; ++i) {
      float a = 2.0f * k_pi * float(i) / float(segments);
      glm::vec3 dir(std::cos(a), 0.0f, std::sin(a));
      vertex(dir * radius + glm::vec3(0.0f, y, 0.0f), w, radial_normal ? dir : n);
    }
    return first;
  }
  void band(uint32_t r0, uint32_t r1, int segments) {
    for (int i = 0; i < segments; ++i) quad(r0 + i, r1 + i, r1 + i + 1, r0 + i + 1);
  }
  // a cap facing n (+y or -y): counter-clockwise seen from that side, so that closed meshes can
  // cull their back faces
  void fan(glm::vec3 center, float w, glm::vec3 n, uint32_t ring_first, int segments) {
    uint32_t c = vertex(center, w, n);
    for (int i = 0; i < segments; ++i)
      if (n.y >= 0.0f)
        tri(c, ring_first + i + 1, ring_first + i);
      else
        tri(c, ring_first + i, ring_first + i + 1);
  }
};

}  // namespace

UnitMeshes make_unit_meshes() {
  UnitMeshes m;
  Builder b{m};

  // box: 6 faces of 4 vertices, half extent 1
  b.begin();
  for (int axis = 0; axis < 3; ++axis)
    for (int sign = -1; sign <= 1; sign += 2) {
      glm::vec3 n(0.0f);
      n[axis] = float(sign);
      glm::vec3 u(0.0f), v(0.0f);
      u[(axis + 1) % 3] = 1.0f;
      v[(axis + 2) % 3] = 1.0f;
      uint32_t a = b.vertex(n - u - v, 0, n), c = b.vertex(n + u - v, 0, n);
      uint32_t d = b.vertex(n + u + v, 0, n), e = b.vertex(n - u + v, 0, n);
      b.quad(a, c, d, e);
    }
  m.box = b.end();

  // capsule / sphere: two hemispheres (w = +1 upper, -1 lower) joined at the equator
  b.begin();
  const int slices = 24, half_stacks = 8;
  uint32_t prev = 0;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i <= half_stacks; ++i) {
      float phi = 0.5f * k_pi * (float(h) + float(i) / float(half_stacks));
      uint32_t first = uint32_t(m.vertices.size());
      for (int j = 0; j <= slices; ++j) {
        float th = 2.0f * k_pi * float(j) / float(slices);
        glm::vec3 p(std::sin(phi) * std::cos(th), std::cos(phi), std::sin(phi) * std::sin(th));
        b.vertex(p, h == 0 ? 1.0f : -1.0f, p);
      }
      if (h + i > 0) b.band(prev, first, slices);
      prev = first;
    }
  m.capsule = b.end();

  // plane: the unit square in xz, normal +y
  b.begin();
  glm::vec3 up(0.0f, 1.0f, 0.0f);
  b.quad(b.vertex({-1, 0, -1}, 0, up), b.vertex({-1, 0, 1}, 0, up), b.vertex({1, 0, 1}, 0, up),
         b.vertex({1, 0, -1}, 0, up));
  m.plane = b.end();

  // ring: inner (w = 0) and outer (w = 1) circles of unit radius, normal +y
  b.begin();
  const int ring_segments = 64;
  uint32_t inner = b.ring(1.0f, 0.0f, 0.0f, ring_segments, false, up);
  uint32_t outer = b.ring(1.0f, 0.0f, 1.0f, ring_segments, false, up);
  b.band(inner, outer, ring_segments);
  m.ring = b.end();

  // arrow along +y: shaft (w = 0) radius 1, y 0..1, closed below; head (w = 1) cone on a
  // disc. 8 sides: arrows come by the hundred thousand, most of them a few pixels long
  b.begin();
  const int seg = 8;
  glm::vec3 down(0.0f, -1.0f, 0.0f);
  uint32_t s0 = b.ring(1.0f, 0.0f, 0.0f, seg, true, {});
  uint32_t s1 = b.ring(1.0f, 1.0f, 0.0f, seg, true, {});
  b.band(s0, s1, seg);
  b.fan({0, 0, 0}, 0.0f, down, b.ring(1.0f, 0.0f, 0.0f, seg, false, down), seg);
  b.fan({0, 0, 0}, 1.0f, down, b.ring(1.0f, 0.0f, 1.0f, seg, false, down), seg);
  uint32_t base = b.ring(1.0f, 0.0f, 1.0f, seg, true, {});  // normals get their slope in arrow.vert
  for (int i = 0; i < seg; ++i) {
    float a = 2.0f * k_pi * (float(i) + 0.5f) / float(seg);
    uint32_t apex = b.vertex({0, 1, 0}, 1.0f, {std::cos(a), 0.0f, std::sin(a)});
    b.tri(base + i, apex, base + i + 1);
  }
  m.arrow = b.end();

  // disc (contact markers, drawn by arrow.vert without a head): a closed flat cylinder. 12
  // sides: a few pixels across, by the hundred (a CPU rasterizer pays per triangle)
  b.begin();
  const int dseg = 12;
  uint32_t d0 = b.ring(1.0f, 0.0f, 0.0f, dseg, true, {});
  uint32_t d1 = b.ring(1.0f, 1.0f, 0.0f, dseg, true, {});
  b.band(d0, d1, dseg);
  b.fan({0, 0, 0}, 0.0f, down, b.ring(1.0f, 0.0f, 0.0f, dseg, false, down), dseg);
  b.fan({0, 1, 0}, 0.0f, up, b.ring(1.0f, 1.0f, 0.0f, dseg, false, up), dseg);
  m.disc = b.end();
  return m;
}

}  // namespace adj::render
