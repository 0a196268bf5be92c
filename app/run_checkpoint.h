// The command line's checkpoint folder for a training run (SHAC, PPO): DIR/checkpoint.adjck,
// read by rank 0 and sent to every rank, written by rank 0; the run's identity (method, scene,
// task, iterations, seed) checked on resume; the loop's running totals kept with the trainer's
// state; a SHAC, AHAC or PPO policy's evaluation episode replayed from it (`adjoint render --policy`).
// The trainers' own state: engine/optim/checkpoint.h and their save()/load().
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "app/cmd_optimize.h"
#include "engine/core/status.h"
#include "engine/dist/communicator.h"
#include "engine/model/state.h"
#include "engine/optim/checkpoint.h"
#include "engine/scene/scene.h"

namespace adj::app {

// what the command line adds to a checkpoint ("cli" in its header)
struct RunTotals {
  int ended = 0;                                  // episodes that ended early so far
  double first = 0;                               // the evaluation before the first iteration
  nlohmann::json rows = nlohmann::json::array();  // the --log rows so far
};

// what a SHAC run is, beyond the trainer's own state (`adjoint optimize --method shac` and the
// editor's SHAC write and check the same): a checkpoint of another run is refused
nlohmann::json shac_run_identity(const std::string& scene, const std::string& task, int windows, std::uint64_t seed,
                                 const std::string& method = "shac");

// where and how often a run writes checkpoints (0: never), from --checkpoint-dir,
// --checkpoint-every, --resume and --stop-after; errors: flags that need a folder, a fresh
// run into a folder that holds a checkpoint
Status checkpoint_plan(const OptimizeOptions& o, std::string& dir, int& every);

// rank 0 reads DIR's checkpoint, every rank receives and decodes it; the header's "run" must
// equal `identity` and its "cli" fills `totals`. Errors name the file and what differs
Result<optim::Checkpoint> read_run_checkpoint(const std::string& dir, const nlohmann::json& identity,
                                              dist::Communicator& comm, RunTotals& totals);

// the header's "run" and "cli" set; rank 0 writes DIR's checkpoint (the folder made if missing)
Status write_run_checkpoint(const std::string& dir, const nlohmann::json& identity, const RunTotals& totals,
                            optim::Checkpoint& ck, dist::Communicator& comm);

// DIR/checkpoint.adjck as a policy run's checkpoint (SHAC, AHAC or PPO; the editor's "Continue
// from checkpoint..." and `adjoint render --policy` read it so): the header's run identity.
// Errors name the file: unreadable, damaged, or a checkpoint of no policy run
struct PolicyCheckpoint {
  optim::Checkpoint ck;
  std::string method;  // "shac", "ahac" or "ppo"
  std::string scene;   // the scene's name (scene::Scene::name) and the task trained
  std::string task;
  int iterations = 0;  // the run's windows (SHAC, AHAC) or iterations (PPO): the learning rates' schedule
  int trained = 0;     // those trained so far
  int copies = 0;      // training copies
  std::uint64_t seed = 0;
};
Result<PolicyCheckpoint> read_policy_checkpoint(const std::string& dir);

// the evaluation episode `adjoint optimize` runs after the checkpoint's last window or iteration
// (BatchShacTrainerT::evaluate, PpoTrainer::evaluate: the policy's mean action, the observation
// statistics as saved, the task's nominal start, its horizon or an earlier termination), on a
// trainer made as that run made it from the scene (compiled from `doc` and its folder
// `scene_dir`) and loaded from the checkpoint: the same bits
struct PolicyEpisode {
  std::vector<State> states;  // frame 0 (the start) to the last frame, (length + 1)
  double eval_cost = 0;       // the mean frame cost over the horizon (the run's "eval cost")
  double eval_return = 0;     // -eval_cost x horizon: the summed reward (SHAC's "eval return")
  int length = 0;             // frames run: the horizon, or fewer where the episode terminated
};
// errors: a checkpoint of another scene or of a task the scene lacks (naming the file), one the
// task's trainer refuses (another network shape, copies or window)
Result<PolicyEpisode> evaluate_policy_checkpoint(const PolicyCheckpoint& p, const scene::Scene& doc,
                                                 const std::string& scene_dir, int threads = 0);

}  // namespace adj::app
