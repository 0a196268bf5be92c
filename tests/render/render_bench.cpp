// render_bench [frames [particle counts... (0: no cloth)]]: the table of render::bench_render at
// 1280x720 (no validation)
#include <cstdio>
#include <cstdlib>

#include "render/bench_render.h"
#include "render/context.h"

int main(int argc, char** argv) {
  adj::render::Context ctx(adj::render::ContextOptions{});
  ctx.create_device(VK_NULL_HANDLE);
  adj::render::RenderBenchOptions o;
  if (argc > 1) o.frames = uint32_t(std::atoi(argv[1]));
  if (argc > 2) {  // particle counts; a count of 0 skips the cloth case
    o.particle_counts.clear();
    for (int i = 2; i < argc; ++i) {
      uint32_t n = uint32_t(std::atoi(argv[i]));
      if (n == 0)
        o.cloth_n = 0;
      else
        o.particle_counts.push_back(n);
    }
  }
  std::printf("device: %s (max storage buffer range %u MiB)\n", ctx.info().name.c_str(),
              ctx.properties().limits.maxStorageBufferRange >> 20);
  for (const auto& r : adj::render::bench_render(ctx, o))
    std::printf("%-34s %9.1f ms/frame median %9.1f fastest\n", r.name.c_str(), r.ms_per_frame,
                r.ms_fastest);
  return 0;
}
