// frames in flight with synchronization validation: shadow map reuse across frames,
// upload slots, the resolve/readback, and picking in between, without a hazard reported; as
// the editor draws: scene passes at full and reduced size (stretched), saved and restored,
// then the overlay pass
#include <catch2/catch.hpp>

#include "harness.h"
#include "render/demo_scenes.h"

using namespace adj::render;

TEST_CASE("sync validation: several frames in flight, picking between them", "[render][sync]") {
  test::Harness h({160, 120}, true, 512);
  auto cloth = demo::draped_cloth(16, true);
  auto pile = demo::particle_pile(500, 0.05f);
  for (int frame = 0; frame < 6; ++frame) {
    const demo::Scene& s = frame % 2 ? *pile : *cloth;
    VkCommandBuffer cmd = h.loop->begin_frame();
    if (frame == 4) {  // nothing changed: the saved (reduced, stretched) scene comes back
      h.target->restore_scene(cmd);
    } else {
      h.target->set_scene_scale(frame % 2 ? 0.6f : 1.0f);
      h.target->set_scene_columns(20, 140);  // a reduced pass keeps the columns outside
      h.scene->prepare(cmd, s.list, s.camera, h.loop->frame_index());
      const float clear[4] = {0, 0, 0, 1}, top[3] = {0.4f, 0.5f, 0.6f}, bottom[3] = {0.8f, 0.8f, 0.8f};
      h.target->begin(cmd, clear);
      h.background->draw(cmd, top, bottom);
      h.scene->draw(cmd);
      h.target->end(cmd);
      h.target->save_scene(cmd);
    }
    h.target->begin_overlay(cmd);
    h.target->end(cmd);
    h.loop->end_frame(frame >= 3);
    if (frame == 1) {
      auto r = h.scene->pick(cloth->list, cloth->camera, {160, 120}, 80, 60);
      REQUIRE(r);
      CHECK(r->object == 1);
    }
  }
  auto cap = h.loop->take_capture();
  REQUIRE(cap);
  CHECK(cap->width == 160);
  CHECK(cap->height == 120);
  h.shutdown();
  CHECK(h.ctx.validation_errors() == 0);
}
