#include "app/cmd_bench.h"

#include <cstdio>

#include <filesystem>

#include "engine/optim/sample_efficiency.h"
#include "engine/scene/scene_json.h"
#include "render/bench_render.h"
#include "render/context.h"
#include "render/vk_check.h"

namespace adj::app {

int run_bench_render(const BenchRenderOptions& o) {
  try {
    render::Context ctx(render::ContextOptions{});
    ctx.create_device(VK_NULL_HANDLE);
    render::RenderBenchOptions bo;
    bo.frames = o.frames;
    if (o.quick) {
      bo.particle_counts = {10000};
      bo.cloth_n = 64;
    }
    std::printf("render benchmark: %ux%u offscreen, 4x MSAA where supported, %u frames per case\n", bo.width, bo.height,
                bo.frames);
    std::printf("device: %s (%s), driver %s\n\n", ctx.info().name.c_str(), ctx.info().type.c_str(),
                ctx.info().driver.c_str());
    std::printf("| %-36s | %12s | %14s | %12s |\n", "case", "primitives", "ms/frame (med)", "ms (fastest)");
    std::printf("|%s|%s|%s|%s|\n", std::string(38, '-').c_str(), std::string(14, '-').c_str(),
                std::string(16, '-').c_str(), std::string(14, '-').c_str());
    for (const auto& r : render::bench_render(ctx, bo))
      std::printf("| %-36s | %12llu | %14.1f | %12.1f |\n", r.name.c_str(), (unsigned long long)r.primitives,
                  r.ms_per_frame, r.ms_fastest);
    return 0;
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

int run_bench_sample_efficiency(const BenchSampleOptions& o) {
  auto sc = scene::load_scene(o.scene_path);
  if (!sc) return std::fprintf(stderr, "%s\n", sc.status().message().c_str()), 1;
  optim::SampleEfficiencyOptions opt;
  opt.task = o.task;
  opt.seeds = o.seeds;
  opt.ppo_max_steps = o.ppo_max_steps;
  opt.bptt_iterations = o.bptt_iterations;
  opt.shac_window = o.shac_window;
  opt.pods_iterations = o.pods_iterations;
  opt.target_cost = o.target_cost;
  opt.start_q_range = o.start_q_range;
  opt.start_qd_range = o.start_qd_range;
  opt.rigid_shac_windows = o.shac_windows;
  opt.methods = o.methods;
  opt.pods_batch = o.pods_batch;
  opt.pods.cg_iterations = o.pods_cg;
  opt.pods.radius = opt.pods.step = o.pods_radius;
  if (o.pods_epochs > 0) opt.pods.epochs = o.pods_epochs;
  if (o.pods_radius_max > 0) opt.pods.radius_max = o.pods_radius_max;
  std::printf("sample efficiency on %s: BPTT and SHAC (gradients) vs PPO, seeds", o.scene_path.c_str());
  for (auto s : o.seeds) std::printf(" %llu", (unsigned long long)s);
  std::printf("\n");
  auto table = optim::run_sample_efficiency(*sc, std::filesystem::path(o.scene_path).parent_path().string(), opt,
                                            [](const std::string& line) {
                                              std::fputs(line.c_str(), stdout);
                                              std::fflush(stdout);
                                            });
  if (!table) return std::fprintf(stderr, "%s\n", table.status().message().c_str()), 1;
  std::fputs(table->format().c_str(), stdout);
  return 0;
}

}  // namespace adj::app
