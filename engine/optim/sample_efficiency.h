// The sample-efficiency benchmark (`adjoint bench sample-efficiency`): on a policy task
// (the mass-spring walker by default), how many simulator steps and how much wall time
// gradient training (full-horizon BPTT and SHAC windows) and PPO need to reach the same
// progress, over several seeds.
//
// progress = -loss (for the walker: the distance walked [m]; for robot tasks such as the
// cartpole swing-up: -(mean frame cost), with the target set by target_cost). The target is
// target_fraction x the mean best progress of BPTT over the seeds; each method runs until
// it first reaches the target or spends its budget. Steps count solver substeps; gradient
// methods count their adjoint substeps too (2x the forward ones), PPO counts the frames its
// copies run; evaluation episodes (PPO and SHAC's mean-action check) are not counted.
//
//   scene::Scene walker = *scene::load_scene("assets/scenes/walker.json");
//   auto table = optim::run_sample_efficiency(walker, "assets/scenes", {}, print_line);
//   if (!table) report(table.status());
//   std::puts(table->format().c_str());
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/pods.h"
#include "engine/optim/ppo.h"
#include "engine/scene/scene.h"

namespace adj::optim {

struct SampleEfficiencyOptions {
  std::string task;                           // task name; empty = the scene's first
  std::vector<std::uint64_t> seeds{1, 2, 3};  // policy initialisation and PPO noise
  int bptt_iterations = 100;                  // full-horizon iterations (the task's optimizer)
  int shac_window = 32;                       // frames per SHAC window; 0 = skip SHAC
  int shac_episodes = 40;                     // SHAC budget, in episodes
  double shac_lr = 0.003;
  // off: SHAC sees the raw observations BPTT and PPO see (with normalized inputs a random
  // initial policy saturates and already shuffles 0.2-0.7 m, which would flatter SHAC)
  bool shac_normalize = false;
  long long ppo_max_steps = 3'000'000;  // PPO budget per seed [solver substeps]
  double target_fraction = 0.8;         // of the mean best BPTT progress
  PpoOptions ppo = default_ppo();       // seed is replaced by each seed

  // target_cost > 0 (the cartpole swing-up: 3.0, the swing-up test's threshold; hanging still
  // is 4.0): progress = -(mean frame cost of an episode from the task's initial state); every
  // method runs until its cost is <= target_cost. SHAC runs with a critic on `rigid_envs`
  // copies from randomized states (BatchShacTrainerT's defaults, the settings of the swing-up
  // test); PPO runs rigid_ppo_envs copies from the same randomized states. 0: the target follows
  // BPTT (target_fraction), as above.
  double target_cost = 0;
  int rigid_envs = 32;
  // the randomized starts of SHAC, PODS and PPO with target_cost > 0 (PolicyEnvOptions): joint
  // coordinates moved by up to start_q_range [rad or m], dof velocities by up to start_qd_range
  double start_q_range = -1, start_qd_range = -1;  // < 0: the task's policy spec's
  // the methods run, by name (BPTT, SHAC, PODS-1, PODS-2, PPO); empty: all
  std::vector<std::string> methods;
  bool runs(const std::string& method) const {
    return methods.empty() || std::find(methods.begin(), methods.end(), method) != methods.end();
  }
  int rigid_shac_windows = 300;  // SHAC budget [windows of shac_window frames] (its lr decays over it)
  // PODS-1 and PODS-2 (engine/optim/pods.h, in double) from the same randomized states, rigid_envs
  // episodes per iteration, evaluated after each iteration; 0 skips PODS
  int pods_iterations = 60;
  PodsOptions pods;  // order and batch are replaced (order 1 and 2; batch: pods_batch)
  // episodes per PODS iteration (0: rigid_envs). 8, PodsOptions' default: on the payload PODS-2
  // reached the target cost with 3.9x fewer steps than with 32; on the throw's first version
  // PODS-1 reached 2.22 instead of 3.74 (PODS-2 2.39 instead of 2.35); on the cartpole neither
  // swung up
  int pods_batch = 8;
  // PPO (PpoOptions' defaults: 32 frames per copy per update, normalized observations, GAE
  // 0.95) on ppo_envs copies (the walker) or rigid_ppo_envs copies from the randomized states
  // (the cartpole); each run anneals its step size linearly over its budget (ppo_max_steps)
  int ppo_envs = 32;
  int rigid_ppo_envs = 64;
  PpoOptions rigid_ppo = default_rigid_ppo();
  // the walker's: rewards x 100 (a frame's progress is ~1e-3 m); raw observations, as BPTT and
  // SHAC see them there (shac_normalize: normalized, the untrained policy already walks; PPO
  // with them reached the target in 14-23 k substeps)
  static PpoOptions default_ppo() {
    PpoOptions p;
    p.reward_scale = 100;
    p.normalize_observations = false;
    return p;
  }
  // the cartpole's: frame costs are O(1) to O(10); x 0.1 keeps the returns O(10)
  static PpoOptions default_rigid_ppo() {
    PpoOptions p;
    p.reward_scale = 0.1;
    return p;
  }
};

struct SampleEfficiencyRow {
  std::string method;  // "BPTT", "SHAC", "PODS-1", "PODS-2", "PPO"
  std::uint64_t seed = 0;
  double best_progress = 0;        // best -loss seen [m for the walker]
  long long steps_to_target = -1;  // -1: not reached within the budget
  double seconds_to_target = -1;
  long long steps_run = 0;  // all steps the method ran
  double seconds_run = 0;
};

struct SampleEfficiencyTable {
  std::string scene, task;
  int horizon = 0, substeps = 0;
  double target = 0;  // progress every method is asked to reach
  std::vector<SampleEfficiencyRow> rows;
  // median steps to the target of PPO over that of the gradient method (BPTT when any BPTT
  // run reached the target, else SHAC); unreached PPO runs count as their budget, so the
  // ratio is then a lower bound
  double step_ratio() const;
  std::string gradient_method() const;
  std::string format() const;  // the table, one row a line, and the summary
};

// progress(line) is called with a line per finished run (may be empty)
Result<SampleEfficiencyTable> run_sample_efficiency(const scene::Scene& scene, const std::string& base_dir,
                                                    const SampleEfficiencyOptions& options = {},
                                                    const std::function<void(const std::string&)>& progress = {});

}  // namespace adj::optim
