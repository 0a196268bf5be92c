#include "render/bench_render.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "render/background.h"
#include "render/context.h"
#include "render/demo_scenes.h"
#include "render/frame_loop.h"
#include "render/scene_renderer.h"
#include "render/target.h"

namespace adj::render {

namespace {

struct Timing {
  double median = 0.0, fastest = 0.0;
};

Timing time_scene(Context& ctx, const RenderBenchOptions& o, const demo::Scene& s) {
  RenderTarget target(ctx, {o.width, o.height}, pick_msaa(ctx, 4));
  FrameLoop loop(ctx, target, nullptr);
  Background background(ctx, target);
  SceneRenderer scene(ctx, target);
  const float clear[4] = {0, 0, 0, 1}, top[3] = {0.36f, 0.45f, 0.56f},
              bottom[3] = {0.80f, 0.83f, 0.86f};
  auto frame = [&] {
    VkCommandBuffer cmd = loop.begin_frame();
    scene.prepare(cmd, s.list, s.camera, loop.frame_index());
    target.begin(cmd, clear);
    background.draw(cmd, top, bottom);
    scene.draw(cmd);
    target.end(cmd);
    loop.end_frame(false);
  };
  for (uint32_t i = 0; i < o.warmup; ++i) frame();
  loop.wait_idle();
  std::vector<double> ms;
  for (uint32_t i = 0; i < std::max(o.frames, 1u); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    frame();
    loop.wait_idle();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

std::vector<RenderBenchResult> bench_render(Context& ctx, const RenderBenchOptions& o) {
  std::vector<RenderBenchResult> out;
  for (uint32_t n : o.particle_counts) {
    // the same pile size whatever the count: radius ~ n^(-1/3)
    float radius = 0.03f * std::cbrt(10000.0f / float(n));
    auto s = demo::particle_pile(n, radius);
    Timing t = time_scene(ctx, o, *s);
    out.push_back({"particles " + std::to_string(n), n, t.median, t.fastest});
  }
  if (o.cloth_n >= 2) {
    const uint64_t tris = 2 * uint64_t(o.cloth_n - 1) * (o.cloth_n - 1);
    auto plain = demo::draped_cloth(o.cloth_n, false);
    Timing t = time_scene(ctx, o, *plain);
    out.push_back({"cloth " + std::to_string(o.cloth_n) + "x" + std::to_string(o.cloth_n), tris,
                   t.median, t.fastest});
    auto s = demo::draped_cloth(o.cloth_n, true);
    uint64_t verts = uint64_t(o.cloth_n) * o.cloth_n;
    out.push_back({"cloth " + std::to_string(o.cloth_n) + "x" + std::to_string(o.cloth_n) + " + " +
                       std::to_string(verts) + " arrows",
                   tris + verts, 0.0, 0.0});
    Timing ta = time_scene(ctx, o, *s);
    out.back().ms_per_frame = ta.median;
    out.back().ms_fastest = ta.fastest;
  }
  return out;
}

}  // namespace adj::render
