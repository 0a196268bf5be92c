// `adjoint optimize SCENE --task T --method shac`: a policy task trained as SHAC does it
// (engine/optim/shac.h BatchShacTrainerT: windows of 32 frames over many randomized copies,
// a learned critic for each window's end), BatchShacOptions' defaults: the settings the
// cartpole swing-up test uses
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "app/cmd_optimize.h"
#include "app/scene_task.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"

namespace adj::app {

int run_shac(const OptimizeOptions& o) {
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Scene* doc = &loaded->doc;
  const scene::CompiledScene* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  const int windows = o.iterations >= 0 ? o.iterations : task->optimizer.iterations;
  optim::ShacTaskSettings ts{.envs = o.shac_envs,
                             .windows = windows,
                             .seed = o.seed >= 0 ? std::uint64_t(o.seed) : task->seed,
                             .thread_count = std::max(o.threads, 0)};
  auto made = optim::make_task(*cs, *task, {.thread_count = std::max(o.threads, 0)});
  if (!made) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), made.status().message().c_str()), 1;
  auto shac = optim::make_shac_trainer(**made, ts);
  if (!shac) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), shac.status().message().c_str()), 1;
  const optim::BatchShacOptions so;  // the window length the trainer uses
  std::printf("%s / %s: SHAC, %d copies, windows of %d frames, %d windows, seed %llu\n", doc->name.c_str(),
              task->name.c_str(), o.shac_envs, so.window, windows, static_cast<unsigned long long>(ts.seed));
  std::printf("%6s %14s %14s %14s\n", "window", "mean cost", "eval cost", "sim steps");
  nlohmann::json log = nlohmann::json::array();
  auto first = shac->evaluate();
  if (!first) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), first.status().message().c_str()), 1;
  for (int k = 0; k < windows; ++k) {
    auto st = shac->step();
    if (!st)
      return std::fprintf(stderr, "%s: window %d: %s\n", o.scene_path.c_str(), k, st.status().message().c_str()), 1;
    if (st->skipped) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), st->skip_reason.c_str());
    if (k % 10 == 9 || k + 1 == windows) {
      auto e = shac->evaluate();
      if (!e) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), e.status().message().c_str()), 1;
      std::printf("%6d %14.6g %14.6g %14lld\n", k, st->mean_cost, double(*e), st->sim_steps);
      log.push_back({{"window", k},
                     {"mean_cost", st->mean_cost},
                     {"eval_cost", double(*e)},
                     {"sim_steps", st->sim_steps},
                     {"skipped_windows", st->skipped_windows}});
    }
  }
  auto last = shac->evaluate();
  if (!last) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), last.status().message().c_str()), 1;
  std::printf("the policy's mean frame cost: %.6g -> %.6g\n", double(*first), double(*last));
  if (!o.log.empty()) {
    std::ofstream f(o.log);
    f << nlohmann::json{{"scene", doc->name}, {"task", task->name}, {"windows", log}}.dump(1) << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
  }
  return 0;
}

}  // namespace adj::app
