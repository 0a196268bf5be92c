// `adjoint optimize SCENE --task T --shac`: a robot policy task trained as SHAC does it
// (engine/optim/shac.h BatchShacTrainerT: windows of 32 frames over many randomized copies,
// a learned critic for each window's end), the settings the cartpole swing-up test uses
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/cmd_optimize.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/rigid_task.h"
#include "engine/optim/shac.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::app {

int run_shac(const OptimizeOptions& o) {
  auto doc = scene::load_scene(o.scene_path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  auto cs = scene::compile<float>(*doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), cs.status().message().c_str()), 1;
  const scene::Task* task = doc->find_task(o.task);
  if (!task) return std::fprintf(stderr, "%s: no such task\n", o.scene_path.c_str()), 1;
  if (!task->has_policy || !optim::is_robot_task(*cs, *task))
    return std::fprintf(stderr, "%s: --shac trains a robot task's policy; task '%s' has %s\n", o.scene_path.c_str(),
                        task->name.c_str(), task->has_policy ? "no robot" : "no policy"),
           1;
  // copies start from random joint angles and rates around the task's start
  auto env = optim::RigidPolicyEnvT<float>::create(
      *cs, *task, {.env_count = o.shac_envs, .q_range = 3.14159, .qd_range = 0.5});
  if (!env) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), env.status().message().c_str()), 1;
  auto eval = optim::RigidPolicyEnvT<float>::create(*cs, *task);
  if (!eval) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), eval.status().message().c_str()), 1;
  const int windows = o.iterations >= 0 ? o.iterations : task->optimizer.iterations;
  optim::BatchShacOptions so;
  so.action_noise = 0.3;
  so.critic_hidden = {32, 32};
  so.critic_passes = 4;
  so.lr_decay_windows = windows;
  so.seed = o.seed >= 0 ? std::uint64_t(o.seed) : task->seed;
  if (o.threads > 0) so.thread_count = o.threads;
  auto shac = optim::BatchShacTrainerT<float>::create(std::move(*env), std::move(*eval), so);
  if (!shac) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), shac.status().message().c_str()), 1;
  std::printf("%s / %s: SHAC, %d copies, windows of %d frames, %d windows, seed %llu\n", doc->name.c_str(),
              task->name.c_str(), o.shac_envs, so.window, windows, static_cast<unsigned long long>(so.seed));
  std::printf("%6s %14s %14s %14s\n", "window", "mean cost", "eval cost", "sim steps");
  nlohmann::json log = nlohmann::json::array();
  auto first = shac->evaluate();
  if (!first) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), first.status().message().c_str()), 1;
  for (int k = 0; k < windows; ++k) {
    auto st = shac->step();
    if (!st) return std::fprintf(stderr, "%s: window %d: %s\n", o.scene_path.c_str(), k, st.status().message().c_str()), 1;
    if (k % 10 == 9 || k + 1 == windows) {
      auto e = shac->evaluate();
      if (!e) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), e.status().message().c_str()), 1;
      std::printf("%6d %14.6g %14.6g %14lld\n", k, st->mean_cost, double(*e), st->sim_steps);
      log.push_back({{"window", k}, {"mean_cost", st->mean_cost}, {"eval_cost", double(*e)}, {"sim_steps", st->sim_steps}});
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
