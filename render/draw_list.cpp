#include "render/draw_list.h"

#include <cstring>

namespace adj::render {

namespace {

// FNV-1a, 64 bit: fast enough for a frame's host arrays (tens of kB), and plain
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  bool device = false;  // an array lives in a device buffer: its bytes are unknown here

  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof(T));
  }
  void flag(bool b) { value(uint8_t(b ? 1 : 0)); }
  template <class T>
  void array(const ArrayRef<T>& a) {
    value(uint64_t(a.count));
    if (a.count == 0) return;
    if (a.host) bytes(a.host, a.bytes());
    else device = true;
  }
  void scale(const ColorScale& s) {
    value(s.map);
    value(s.min);
    value(s.max);
  }
};

}  // namespace

std::optional<uint64_t> content_hash(const DrawList& l) {
  Hasher x;
  x.value(uint64_t(l.meshes.size()));
  for (const MeshDraw& d : l.meshes) {
    x.array(d.positions), x.array(d.normals), x.array(d.indices), x.array(d.scalars);
    x.scale(d.scale), x.value(d.transform), x.value(d.color), x.value(d.back_color);
    x.flag(d.wireframe), x.value(d.wire_color), x.flag(d.cast_shadow), x.value(d.id);
  }
  x.value(uint64_t(l.spheres.size()));
  for (const SphereDraw& d : l.spheres) {
    x.array(d.spheres), x.array(d.scalars), x.array(d.colors), x.scale(d.scale);
    x.value(d.color), x.flag(d.cast_shadow), x.value(d.id);
  }
  x.value(uint64_t(l.shapes.size()));
  for (const ShapeDraw& d : l.shapes) {
    x.value(d.kind), x.flag(d.cast_shadow), x.value(d.id);
    x.value(uint64_t(d.instances.count));
    if (d.instances.count && !d.instances.host) x.device = true;
    for (size_t i = 0; d.instances.host && i < d.instances.count; ++i) {
      const ShapeInstance& s = d.instances.host[i];
      x.value(s.position), x.value(s.rotation), x.value(s.size), x.value(s.color);
    }
  }
  x.value(uint64_t(l.arrows.size()));
  for (const ArrowDraw& d : l.arrows) {
    x.array(d.origins), x.array(d.vectors), x.array(d.scalars), x.scale(d.scale);
    x.value(d.length), x.value(d.length_scale), x.value(d.reference), x.value(d.max_length);
    x.value(d.radius), x.flag(d.cast_shadow), x.value(d.id);
  }
  x.value(uint64_t(l.discs.size()));
  for (const DiscDraw& d : l.discs) {
    x.array(d.positions), x.array(d.normals), x.value(d.radius), x.value(d.color), x.value(d.id);
  }
  x.value(uint64_t(l.lines.size()));
  for (const LineDraw& d : l.lines) {
    x.array(d.positions), x.array(d.colors), x.array(d.indices), x.value(d.color);
    x.value(d.width), x.flag(d.depth_test), x.value(d.id);
  }
  const Ground& g = l.ground;
  x.flag(g.visible), x.value(g.height), x.value(g.cell), x.value(g.extent), x.value(g.color);
  const Lighting& L = l.lighting;
  x.value(L.direction), x.value(L.color), x.value(L.intensity), x.value(L.sky), x.value(L.ground);
  x.value(L.ambient), x.flag(L.shadows);
  x.value(l.bounds_lo), x.value(l.bounds_hi);
  if (x.device) return std::nullopt;
  return x.h;
}

}  // namespace adj::render
