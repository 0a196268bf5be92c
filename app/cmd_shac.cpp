// `adjoint optimize SCENE --task T --method shac`: a policy task trained as SHAC does it
// (engine/optim/shac.h BatchShacTrainerT: windows of 32 frames over many randomized copies,
// a learned critic for each window's end), BatchShacOptions' defaults: the settings the
// cartpole swing-up test uses
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "app/cmd_optimize.h"
#include "app/scene_task.h"
#include "app/serve/publish.h"
#include "app/serve/run_server.h"
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
  // per row: control steps (frames over all copies) and wall time so far, the window's mean frame
  // cost, the evaluation episode's mean frame cost and its return (minus its summed costs: for
  // reward terms, the summed reward over the task's horizon, as the papers report it)
  std::printf("%6s %12s %9s %12s %12s %12s %8s %8s\n", "window", "ctrl steps", "wall [s]", "mean cost", "eval cost",
              "eval return", "ended", "skipped");
  nlohmann::json log = nlohmann::json::array();
  const auto t0 = std::chrono::steady_clock::now();
  const int substeps = std::max(cs->substeps, 1), horizon = task->horizon;
  int ended = 0;
  auto first = shac->evaluate();
  if (!first) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), first.status().message().c_str()), 1;
  auto server = open_serve(o.serve, serve_hello(o.scene_path, "shac",
                                                {{"task", task->name},
                                                 {"windows", windows},
                                                 {"envs", o.shac_envs},
                                                 {"window", so.window},
                                                 {"seed", ts.seed}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  std::vector<StateT<float>> eval_states;  // the evaluation episode, frame by frame (published)
  auto keep_state = [&](int, const optim::PolicyEnvT<float>& env) { eval_states.push_back(env.state(0)); };
  int k = 0;
  for (; k < windows; ++k) {
    if (serving && serving->hold()) {
      std::printf("stopped by a viewer after %d windows\n", k);
      break;
    }
    auto st = shac->step();
    if (!st)
      return std::fprintf(stderr, "%s: window %d: %s\n", o.scene_path.c_str(), k, st.status().message().c_str()), 1;
    if (st->skipped) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), st->skip_reason.c_str());
    ended += st->terminated;
    nlohmann::json record{{"iteration", k},
                          {"loss", st->mean_cost},
                          {"sim_steps", st->sim_steps},
                          {"skipped", st->skipped},
                          {"skipped_windows", st->skipped_windows}};
    if (k % 10 == 9 || k + 1 == windows) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      eval_states.clear();
      auto e = serving ? shac->evaluate(keep_state) : shac->evaluate();
      if (!e) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), e.status().message().c_str()), 1;
      const long long steps = st->sim_steps / substeps;
      const double ret = -double(*e) * horizon;
      std::printf("%6d %12lld %9.1f %12.6g %12.6g %12.6g %8d %8d\n", k, steps, wall, st->mean_cost, double(*e), ret,
                  ended, st->skipped_windows);
      log.push_back({{"window", k},
                     {"control_steps", steps},
                     {"wall_s", wall},
                     {"mean_cost", st->mean_cost},
                     {"eval_cost", double(*e)},
                     {"eval_return", ret},
                     {"sim_steps", st->sim_steps},
                     {"episodes_ended", ended},
                     {"skipped_windows", st->skipped_windows}});
      record.update({{"eval_cost", double(*e)}, {"eval_return", ret}, {"wall_s", wall}, {"episodes_ended", ended}});
      if (serving) serving->snapshot(rollout_snapshot(k, shac->weights(), eval_states));
    }
    if (serving) serving->iteration(std::move(record));
  }
  auto last = shac->evaluate();
  if (!last) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), last.status().message().c_str()), 1;
  std::printf("the policy's mean frame cost: %.6g -> %.6g\n", double(*first), double(*last));
  if (serving)
    serving->end({{"status", k < windows ? "stopped" : "finished"}, {"iterations", k}, {"final_cost", double(*last)}});
  if (!o.log.empty()) {
    std::ofstream f(o.log);
    f << nlohmann::json{{"scene", doc->name}, {"task", task->name}, {"windows", log}}.dump(1) << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
  }
  return 0;
}

}  // namespace adj::app
