#pragma once
// `adjoint bench ...`: benchmarks printed as tables.
#include <cstdint>
#include <string>
#include <vector>

namespace adj::app {

struct BenchRenderOptions {
  uint32_t frames = 5;
  bool quick = false;  // 10k particles and a 64x64 cloth only (a smoke run)
};

int run_bench_render(const BenchRenderOptions& options);

// `adjoint bench sample-efficiency`: gradients (BPTT, SHAC) vs PPO on the walker, or on the
// cartpole swing-up (assets/scenes/robot_cartpole.json --task "swing up (policy)")
struct BenchSampleOptions {
  std::string scene_path;  // default: assets/scenes/walker.json next to the program's sources
  std::string task;
  std::vector<uint64_t> seeds{1, 2, 3};
  long long ppo_max_steps = 3'000'000;
  int bptt_iterations = 100;
  int shac_window = 32;      // 0 skips SHAC
  int pods_iterations = 60;  // with --target-cost: PODS-1 and PODS-2 iterations; 0 skips PODS
  double target_cost = 0;    // > 0: the mean frame cost to reach (cartpole: 3); 0: 0.8 x BPTT's best
  double start_q_range = -1, start_qd_range = -1;  // with --target-cost: the randomized starts (< 0: the task's)
  int shac_windows = 300;                          // with --target-cost: SHAC's budget [windows]
  std::vector<std::string> methods;                // empty: all
  int pods_batch = 8;                              // episodes per PODS iteration; 0: as SHAC's copies (32)
  int pods_cg = 10;                                // PODS-2: conjugate-gradient steps (H v products) per episode
  int pods_epochs = 0;                             // regression passes per PODS iteration; 0: PodsOptions' default
  double pods_radius_max = 0;                      // PODS: the largest step or trust radius; 0: PodsOptions' default
  double pods_radius = 0.05;  // PODS-2: the first trust radius (RMS per action entry); PODS-1: the first step
};

int run_bench_sample_efficiency(const BenchSampleOptions& options);

// `adjoint bench worlds SCENE --worlds N --threads T`: a scene over many worlds (engine/solver/worlds.h),
// forward and forward + backward of windows of control steps (SHAC's unit of work), one world on one
// thread beside it; control steps per second and memory per world (app/cmd_bench_worlds.cpp)
struct BenchWorldsOptions {
  std::string scene_path;
  int worlds = 256;
  int threads = 2;
  int window = 32;  // control steps a window
  int windows = 4;  // windows timed per row (after one untimed)
  bool use_double = false;
  bool recompute = false;  // the reverse pass recomputes each step instead of reading its record
  bool cuda = false;       // one row: the worlds on CudaSolverT (exit 77 without a device)
};

int run_bench_worlds(const BenchWorldsOptions& options);

}  // namespace adj::app
