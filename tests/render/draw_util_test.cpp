// render/colormap.h and render/line_builder.h: host-side helpers of the draw list
#include <catch2/catch.hpp>

#include "render/colormap.h"
#include "render/line_builder.h"

using namespace adj::render;

TEST_CASE("colormap: ends and middle of viridis and the diverging map", "[render][colormap]") {
  glm::vec3 v0 = colormap_srgb(Colormap::viridis, 0.0f),
            v1 = colormap_srgb(Colormap::viridis, 1.0f);
  CHECK(v0.r == Approx(0x44 / 255.0f));
  CHECK(v0.b == Approx(0x54 / 255.0f));
  CHECK(v1.g == Approx(0xe7 / 255.0f));
  CHECK(colormap_srgb(Colormap::viridis, -3.0f) == v0);  // clamped
  CHECK(colormap_srgb(Colormap::viridis, 7.0f) == v1);
  glm::vec3 mid = colormap_srgb(Colormap::diverging, 0.5f);
  CHECK(mid.r == Approx(mid.b));  // neutral grey in the middle
  CHECK(colormap_srgb(Colormap::diverging, 0.0f).b > colormap_srgb(Colormap::diverging, 0.0f).r);
  CHECK(colormap_srgb(Colormap::diverging, 1.0f).r > colormap_srgb(Colormap::diverging, 1.0f).b);
  ColorScale s{Colormap::diverging, -2.0f, 2.0f};
  CHECK(s.normalize(0.0f) == Approx(0.5f));
  CHECK(s.normalize(5.0f) == 1.0f);
  CHECK(ColorScale{Colormap::viridis, 1.0f, 1.0f}.normalize(1.0f) == 0.5f);  // empty range
}

TEST_CASE("colormap: RGBA8 packing puts red in the low byte", "[render][colormap]") {
  uint32_t p = pack_rgba8({1.0f, 0.0f, 0.5f, 1.0f});
  CHECK((p & 0xff) == 255);
  CHECK(((p >> 16) & 0xff) == 128);
  CHECK((p >> 24) == 255);
  glm::vec4 u = unpack_rgba8(p);
  CHECK(u.b == Approx(128 / 255.0f));
}

TEST_CASE("lines: strips become segment pairs, ghosts fade by age", "[render][lines]") {
  LineBuilder b;
  glm::vec3 pts[3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}};
  b.add_strip(pts, 0xff0000ffu);
  REQUIRE(b.indices == std::vector<uint32_t>{0, 1, 1, 2});
  b.add_segment({0, 0, 0}, {0, 0, 1}, 0xffffffffu);
  CHECK(b.indices.size() == 6);
  CHECK(b.indices[4] == 3);
  LineDraw d = b.draw(2.0f, 7);
  CHECK(d.positions.count == 5);
  CHECK(d.id == 7);

  LineBuilder g;
  GhostTrajectory it[3] = {{pts, 3.0f}, {pts, 2.0f}, {pts, 1.0f}};  // oldest first
  add_ghost_trajectories(g, it, ColorScale{Colormap::viridis, 0.0f, 3.0f}, 0.5f, 0.1f);
  REQUIRE(g.colors.size() == 9);
  CHECK(unpack_rgba8(g.colors[8]).a == Approx(1.0f));  // newest: opaque
  CHECK(unpack_rgba8(g.colors[3]).a == Approx(0.5f).margin(0.01));
  CHECK(unpack_rgba8(g.colors[0]).a == Approx(0.25f).margin(0.01));
  // coloured by loss: the oldest (loss 3) is the top of viridis (yellow)
  CHECK(unpack_rgba8(g.colors[0]).g > unpack_rgba8(g.colors[8]).g);
}

TEST_CASE("mesh helpers: grid indices and smooth normals", "[render][mesh]") {
  std::vector<uint32_t> idx = grid_indices(3, 2);
  CHECK(idx.size() == 2 * 2 * 3);
  std::vector<glm::vec3> pos;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) pos.push_back({float(i), 0.0f, float(j)});
  std::vector<glm::vec3> n = vertex_normals(pos, idx);
  for (const glm::vec3& v : n) CHECK(v.y == Approx(1.0f));  // counter-clockwise seen from +y
}
