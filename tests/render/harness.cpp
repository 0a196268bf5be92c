#include "harness.h"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace adj::render::test {

ContextOptions validation_options(bool sync) {
  ContextOptions o;
  o.validation = true;
  o.sync_validation = sync;
  return o;
}

Harness::Harness(VkExtent2D extent, bool sync_validation, uint32_t shadow_map_size)
    : ctx(validation_options(sync_validation)) {
  ctx.create_device(VK_NULL_HANDLE);
  target = std::make_unique<RenderTarget>(ctx, extent, pick_msaa(ctx, 4));
  loop = std::make_unique<FrameLoop>(ctx, *target, nullptr);
  background = std::make_unique<Background>(ctx, *target);
  SceneRendererOptions so;
  so.shadow_map_size = shadow_map_size;
  scene = std::make_unique<SceneRenderer>(ctx, *target, so);
}

Harness::~Harness() { shutdown(); }

void Harness::shutdown() {
  if (!loop) return;
  loop->wait_idle();
  scene.reset();
  background.reset();
  loop.reset();
  target.reset();
}

Capture Harness::render(const DrawList& list, const Camera& camera) {
  const float top[3] = {0.36f, 0.45f, 0.56f}, bottom[3] = {0.80f, 0.83f, 0.86f};
  const float clear[4] = {0.0f, 0.0f, 0.0f, 1.0f};
  VkCommandBuffer cmd = loop->begin_frame();
  scene->prepare(cmd, list, camera, loop->frame_index());
  target->begin(cmd, clear);
  background->draw(cmd, top, bottom);
  scene->draw(cmd);
  target->end(cmd);
  loop->end_frame(true);
  return *loop->take_capture();
}

Harness& shared() {
  static Harness h({320, 240}, false);
  return h;
}

void write_png(const std::string& name, const Capture& cap) {
  namespace fs = std::filesystem;
  const fs::path out_dir = fs::path(ADJ_TEST_OUT_DIR);
  fs::create_directories(out_dir);
  const int w = int(cap.width), h = int(cap.height);
  stbi_write_png((out_dir / (name + ".png")).c_str(), w, h, 4, cap.rgba.data(), w * 4);
}

bool matches_golden(const std::string& name, const Capture& cap, std::string* message) {
  namespace fs = std::filesystem;
  const fs::path golden = fs::path(ADJ_GOLDEN_DIR) / (name + ".png");
  const fs::path out_dir = fs::path(ADJ_TEST_OUT_DIR);
  const int w = int(cap.width), h = int(cap.height);
  write_png(name, cap);

  const char* update = std::getenv("ADJ_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    stbi_write_png(golden.c_str(), w, h, 4, cap.rgba.data(), w * 4);
    *message = "golden rewritten: " + golden.string();
    return true;
  }
  int gw = 0, gh = 0, gn = 0;
  unsigned char* g = stbi_load(golden.c_str(), &gw, &gh, &gn, 4);
  if (!g) {
    *message = "no golden " + golden.string() + "; run with ADJ_UPDATE_GOLDENS=1 to create it";
    return false;
  }
  if (gw != w || gh != h) {
    stbi_image_free(g);
    *message = "golden " + golden.string() + " has another size";
    return false;
  }
  std::vector<unsigned char> diff(size_t(w) * h * 4, 255);
  size_t bad = 0;
  int worst = 0;
  for (size_t i = 0; i < size_t(w) * h; ++i) {
    int d = 0;
    for (int c = 0; c < 3; ++c)
      d = std::max(d, std::abs(int(g[4 * i + c]) - int(cap.rgba[4 * i + c])));
    worst = std::max(worst, d);
    if (d > 5) ++bad;
    for (int c = 0; c < 3; ++c) diff[4 * i + c] = (unsigned char)std::min(255, d * 8);
  }
  stbi_image_free(g);
  const size_t allowed = size_t(w) * h / 1000;  // 0.1 %
  *message = name + ": " + std::to_string(bad) + " pixels differ by > 5/255 (allowed " +
             std::to_string(allowed) + "), max difference " + std::to_string(worst);
  if (bad > allowed) {
    stbi_write_png((out_dir / (name + ".diff.png")).c_str(), w, h, 4, diff.data(), w * 4);
    return false;
  }
  return true;
}

}  // namespace adj::render::test
