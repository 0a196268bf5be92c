// render/scene_renderer.h on lavapipe with validation: golden images of the demo scenes
// (tests/golden, see its README) and object picking.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "harness.h"
#include "render/demo_scenes.h"
#include "render/memory.h"

using namespace adj::render;

namespace {

void check_golden(const std::string& name, const demo::Scene& scene) {
  test::Harness& h = test::shared();
  Capture cap = h.render(scene.list, scene.camera);
  std::string message;
  bool ok = test::matches_golden(name, cap, &message);
  INFO(message);
  CHECK(ok);
  CHECK(h.ctx.validation_errors() == 0);
}

}  // namespace

TEST_CASE("scene: cloth draped over a sphere, with shadows", "[render][golden]") {
  check_golden("cloth_sphere", *demo::draped_cloth(48));
}

TEST_CASE("scene: arrow field through a colormap, contact discs", "[render][golden]") {
  check_golden("arrow_field", *demo::arrow_field());
}

TEST_CASE("scene: lines, springs and fading ghost trajectories", "[render][golden]") {
  check_golden("trajectories", *demo::trajectories());
}

TEST_CASE("scene: instanced particles and colliders", "[render][golden]") {
  check_golden("particles", *demo::particle_pile(4000, 0.03f));
}

TEST_CASE("scene: flat-shaded wireframe mesh in an orthographic view", "[render][golden]") {
  auto s = demo::draped_cloth(16);
  MeshDraw& m = s->list.meshes[0];
  m.normals = {};  // flat shading
  m.scalars = {};  // base colour
  m.color = {0.85f, 0.55f, 0.35f, 1.0f};
  m.wireframe = true;
  s->camera.orthographic = true;
  s->list.lighting.shadows = false;
  check_golden("cloth_flat_wire_ortho", *s);
}

TEST_CASE("scene: a reduced scene pass is stretched over the whole image", "[render]") {
  // the editor's moving view on a CPU rasterizer: drawn at a fraction of the size, then
  // stretched (linear) over the full-size image that the overlay, saves and captures use
  test::Harness& h = test::shared();
  auto s = demo::draped_cloth(48);
  const Capture full = h.render(s->list, s->camera);
  h.target->set_scene_scale(0.5f);
  CHECK(h.target->scene_extent().width == 160);
  CHECK(h.target->scene_extent().height == 120);
  const Capture half = h.render(s->list, s->camera);
  h.target->set_scene_scale(1.0f);
  REQUIRE(half.width == full.width);
  REQUIRE(half.height == full.height);
  test::write_png("reduced_cloth_sphere", half);
  // the same picture, blurred: compared in 8x8-pixel blocks (their mean colours), it is closer
  // to the full-size image than that image is to itself moved by 2 pixels (a half-size image
  // left in a corner, or a stretch off by a pixel or two, is not), and not the same bits
  const int w = int(full.width), hgt = int(full.height), b = 8;
  auto block_difference = [&](const Capture& other, int dx) {
    double total = 0;
    int blocks = 0;
    for (int by = 0; by < hgt / b; ++by)
      for (int bx = 1; bx < w / b - 1; ++bx, ++blocks)
        for (int c = 0; c < 3; ++c) {
          double d = 0;
          for (int y = by * b; y < (by + 1) * b; ++y)
            for (int x = bx * b; x < (bx + 1) * b; ++x) {
              const size_t i = (size_t(y) * size_t(w) + size_t(x)) * 4 + size_t(c);
              d += double(full.rgba[i]) - double(other.rgba[i + size_t(dx) * 4]);
            }
          total += std::abs(d) / (b * b) / 3;
        }
    return total / blocks;
  };
  const double reduced = block_difference(half, 0), shifted = block_difference(full, 2);
  size_t differ = 0;
  for (size_t i = 0; i < full.rgba.size(); ++i) differ += full.rgba[i] != half.rgba[i];
  INFO("8x8 blocks, mean |difference|: reduced " << reduced << ", moved 2 px " << shifted);
  CHECK(reduced < 0.5 * shifted);
  CHECK(differ > 1000);

  // stretched over columns 100..220 only: the columns outside keep the last frame's pixels
  h.render(s->list, s->camera);  // a full-size frame first
  h.target->set_scene_scale(0.5f);
  h.target->set_scene_columns(100, 220);
  auto moved = demo::draped_cloth(48);
  moved->camera.yaw += 0.3f;
  const Capture part = h.render(moved->list, moved->camera);
  h.target->set_scene_scale(1.0f);
  h.target->set_scene_columns(0, ~0u);
  size_t outside_changed = 0, inside_changed = 0;
  for (size_t i = 0; i < part.rgba.size(); ++i) {
    const size_t x = (i / 4) % part.width;
    (x < 100 || x >= 220 ? outside_changed : inside_changed) += part.rgba[i] != full.rgba[i];
  }
  CHECK(outside_changed == 0);
  CHECK(inside_changed > 1000);
  CHECK(h.ctx.validation_errors() == 0);
}

TEST_CASE("scene: a malformed draw list is reported, not drawn", "[render]") {
  test::Harness& h = test::shared();
  auto s = demo::draped_cloth(8);
  std::vector<glm::vec3> short_normals(3);
  s->list.meshes[0].normals = short_normals;
  CHECK_THROWS_WITH(h.render(s->list, s->camera),
                    Catch::Contains("meshes[0].normals has 3 elements, expected 64"));
  h.loop->end_frame(false);  // close the frame the throw left open
  CHECK(h.ctx.validation_errors() == 0);
}

TEST_CASE("picking: object and element under a pixel", "[render][pick]") {
  test::Harness& h = test::shared();
  const VkExtent2D ext{320, 240};
  const glm::vec2 view{320.0f, 240.0f};

  // spheres (id 1), a box (id 2), a two-triangle quad (id 3), a line (id 4)
  std::vector<glm::vec4> spheres = {
      {-0.6f, 0.3f, 0.0f, 0.15f}, {0.0f, 0.3f, 0.0f, 0.15f}, {0.6f, 0.3f, 0.0f, 0.15f}};
  std::vector<ShapeInstance> boxes(2);
  boxes[0].position = {-0.5f, 0.2f, -1.0f};
  boxes[1].position = {0.5f, 0.2f, -1.0f};
  for (auto& b : boxes) b.size = glm::vec3(0.2f);
  std::vector<glm::vec3> quad = {
      {-1.0f, 0.0f, 0.6f}, {1.0f, 0.0f, 0.6f}, {1.0f, 0.0f, 1.0f}, {-1.0f, 0.0f, 1.0f}};
  std::vector<uint32_t> tris = {0, 2, 1, 0, 3, 2};
  std::vector<glm::vec3> line = {{-1.0f, 0.9f, 0.0f}, {0.0f, 0.9f, 0.0f}, {1.0f, 0.9f, 0.0f}};

  DrawList list;
  SphereDraw sd;
  sd.spheres = spheres;
  sd.id = 1;
  list.spheres.push_back(sd);
  list.shapes.push_back({ShapeKind::box, boxes, true, 2});
  MeshDraw md;
  md.positions = quad;
  md.indices = tris;
  md.id = 3;
  list.meshes.push_back(md);
  LineDraw ld;
  ld.positions = line;
  ld.width = 5.0f;
  ld.id = 4;
  list.lines.push_back(ld);

  for (bool ortho : {false, true}) {
    Camera cam;
    cam.target = {0.0f, 0.3f, 0.0f};
    cam.distance = 3.5f;
    cam.yaw = 0.0f;
    cam.pitch = 0.35f;
    cam.orthographic = ortho;
    INFO("orthographic " << ortho);
    auto at = [&](glm::vec3 world) {
      glm::vec3 s = cam.project(world, view);
      return h.scene->pick(list, cam, ext, uint32_t(s.x), uint32_t(s.y));
    };
    for (uint32_t i = 0; i < 3; ++i) {
      auto r = at(glm::vec3(spheres[i]));
      REQUIRE(r);
      CHECK(r->object == 1);
      CHECK(r->element == i);
    }
    auto b = at(boxes[1].position + glm::vec3(0.0f, 0.0f, 0.2f));
    REQUIRE(b);
    CHECK(b->object == 2);
    CHECK(b->element == 1);
    // triangle 0 covers the corner (1, 0.6), triangle 1 the corner (-1, 1)
    auto t0 = at({0.8f, 0.0f, 0.7f});
    auto t1 = at({-0.8f, 0.0f, 0.9f});
    REQUIRE(t0);
    REQUIRE(t1);
    CHECK(t0->object == 3);
    CHECK(t1->object == 3);
    if (h.ctx.info().geometry_shader) {
      CHECK(t0->element == 0);
      CHECK(t1->element == 1);
    }
    auto seg = at({0.5f, 0.9f, 0.0f});
    REQUIRE(seg);
    CHECK(seg->object == 4);
    if (h.ctx.info().geometry_shader) CHECK(seg->element == 1);
    CHECK_FALSE(h.scene->pick(list, cam, ext, 2, 2));    // sky
    CHECK_FALSE(h.scene->pick(list, cam, ext, 400, 2));  // outside the view
  }
  CHECK(h.ctx.validation_errors() == 0);
}

TEST_CASE("device arrays: a buffer filled elsewhere is drawn in place", "[render][pick]") {
  test::Harness& h = test::shared();
  // written straight into a renderer buffer, as engine/vis will (host-mapped here)
  const std::vector<glm::vec4> spheres = {{-0.5f, 0.3f, 0.0f, 0.2f}, {0.5f, 0.3f, 0.0f, 0.2f}};
  Buffer b = create_buffer(h.ctx, sizeof(glm::vec4) * 4, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                           BufferMemory::host_mapped);
  std::memcpy(static_cast<glm::vec4*>(b.mapped) + 2, spheres.data(), sizeof(glm::vec4) * 2);
  DrawList list;
  SphereDraw sd;
  sd.spheres = ArrayRef<glm::vec4>::device(b.buffer, 2, 2 * sizeof(glm::vec4));
  sd.id = 9;
  list.spheres.push_back(sd);
  Camera cam;
  cam.target = {0.0f, 0.3f, 0.0f};
  cam.distance = 3.0f;
  cam.yaw = 0.0f;
  cam.pitch = 0.2f;
  glm::vec3 p = cam.project(glm::vec3(spheres[1]), {320.0f, 240.0f});
  auto r = h.scene->pick(list, cam, {320, 240}, uint32_t(p.x), uint32_t(p.y));
  REQUIRE(r);
  CHECK(r->object == 9);
  CHECK(r->element == 1);
  h.ctx.run_once([](VkCommandBuffer) {});  // (pick already waited; keeps the order explicit)
  destroy(h.ctx, b);
  CHECK(h.ctx.validation_errors() == 0);
}

TEST_CASE("device arrays: exportable buffers give an OPAQUE_FD", "[render][interop]") {
  test::Harness& h = test::shared();
  if (!h.ctx.info().external_memory_fd) {
    WARN("device without VK_KHR_external_memory_fd: skipped");
    return;
  }
  Buffer b = create_buffer(h.ctx, 1 << 20, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                           BufferMemory::device_exportable);
  CHECK(b.mapped == nullptr);
  CHECK(allocation_size(h.ctx, b) >= (1u << 20));
  int fd = export_memory_fd(h.ctx, b);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  destroy(h.ctx, b);
  CHECK(h.ctx.validation_errors() == 0);
}
