#pragma once
// `adjoint optimize` and `adjoint check-grad`: a scene's task from the command line.
#include <cstdint>
#include <string>

#include "app/serve/run_server.h"
#include "engine/dist/communicator.h"

namespace adj::app {

struct OptimizeOptions {
  std::string scene_path;
  std::string task;        // empty: the scene's first task
  int iterations = -1;     // -1: the task's own count
  std::string log;         // JSON log: losses, gradient norms, final parameters
  std::string save_scene;  // the scene with the optimized parameters written back
  int threads = 0;
  std::string record;  // video of every iteration's rollout (MP4 or PNG frames)
  uint32_t record_width = 1280, record_height = 720;
  int record_fps = 60;
  int record_every = 1;  // record every k-th iteration (and the last)
  // the method (--method; --shac and --receding-horizon W are its older spellings):
  // "bptt" (the task's full-horizon gradient), "shac", "ppo", "pods", "receding"
  std::string method = "bptt";
  int pods_order = 1;        // PODS: 1 (gradient step) or 2 (Newton step)
  int receding_window = 0;   // > 0: receding-horizon control with plans of this many frames
  int receding_execute = 1;  // frames of each plan applied before replanning
  bool shac = false;         // policy tasks: SHAC (short windows, critic) instead of BPTT
  int shac_envs = 32;        // copies of the world per window (SHAC), episodes per iteration (PODS)
  long long seed = -1;       // SHAC: overrides the task's seed when >= 0
  int worlds = 1;            // BPTT: the loss averaged over this many randomized worlds (settings.randomize)
  ServeOptions serve;        // --serve [HOST:]PORT: the run published to viewers (address empty: not)
  // SHAC and PPO checkpoints (engine/optim/checkpoint.h): every checkpoint_every windows (and at the
  // end, at --stop-after and on Ctrl+C) into checkpoint_dir; resume: continue from the
  // checkpoint in that folder (its run's windows, seed and copies)
  std::string checkpoint_dir;
  int checkpoint_every = 0;  // 0: 10 when checkpoint_dir is given
  std::string resume;
  int stop_after = 0;  // > 0: stop after this many windows in this process (a checkpoint is written)
  // the ranks that train together (SHAC under mpirun); null: this process alone
  dist::Communicator* comm = nullptr;
  int fingerprint_every = 10;  // windows between the ranks' parameter comparisons
  int perturb_rank = -1;       // tests: this rank's first policy weight is moved (a mismatch to catch)
  int kill_rank = -1;          // tests: this rank kills itself after its first window
};

// Ctrl+C while a command trains: the first one asks it to stop after the current iteration
// (requested() turns true), a second one ends the program as usual. The handler before the
// guard comes back when it goes.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static bool requested();

 private:
  void (*previous_)(int) = nullptr;
};

struct CheckGradOptions {
  std::string scene_path;
  std::string task;
  int samples = 16;         // parameter entries compared
  double eps = 1e-6;        // central-difference step (double precision)
  double tolerance = 1e-2;  // fail above this max relative error
  uint64_t seed = 0;
  int threads = 0;
};

// exit codes: 0 ok, 1 error (message printed), 130 stopped by Ctrl+C (log still written)
int run_optimize(const OptimizeOptions& options);
// receding_window > 0: the task flown by receding-horizon control (iterations: Adam steps
// per plan, default 8); exit codes as run_optimize
int run_receding_horizon(const OptimizeOptions& options);
// shac: a policy task trained by SHAC (iterations: windows); exit codes as run_optimize
int run_shac(const OptimizeOptions& options);
// ppo: a policy task trained by PPO (iterations: PPO iterations; one process); exit codes as run_optimize
int run_ppo(const OptimizeOptions& options);
// pods: a policy task trained by PODS of pods_order (iterations: PODS iterations)
int run_pods(const OptimizeOptions& options);
// exit codes: 0 within tolerance, 1 error, 4 above tolerance
int run_check_grad(const CheckGradOptions& options);

}  // namespace adj::app
