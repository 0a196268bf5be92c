#pragma once
// Offscreen rendering for the render tests: lavapipe, validation on, one frame of a
// DrawList into a Capture; golden-image comparison (tests/golden/README.md).
#include <memory>
#include <string>

#include "render/background.h"
#include "render/camera.h"
#include "render/context.h"
#include "render/draw_list.h"
#include "render/frame_loop.h"
#include "render/scene_renderer.h"
#include "render/target.h"

namespace adj::render::test {

struct Harness {
  Context ctx;
  std::unique_ptr<RenderTarget> target;
  std::unique_ptr<FrameLoop> loop;
  std::unique_ptr<Background> background;
  std::unique_ptr<SceneRenderer> scene;

  Harness(VkExtent2D extent, bool sync_validation, uint32_t shadow_map_size = 1024);
  ~Harness();
  // destroy everything but the context (so that its validation count covers teardown)
  void shutdown();
  // record, submit and read back one frame
  Capture render(const DrawList& list, const Camera& camera);
};

// the suite's shared 320x240 harness (pipelines compile once per process)
Harness& shared();

ContextOptions validation_options(bool sync);

// compare with tests/golden/<name>.png: at most 0.1 % of pixels may differ by more than
// 5/255 in any channel. ADJ_UPDATE_GOLDENS=1 rewrites the golden instead. The capture is
// always written to <build>/tests/render/out/<name>.png (and a diff image on failure).
bool matches_golden(const std::string& name, const Capture& cap, std::string* message);
// write a capture to <build>/tests/render/out/<name>.png, to look at
void write_png(const std::string& name, const Capture& cap);

}  // namespace adj::render::test
