// The command line's checkpoint folder for a training run (SHAC, PPO): DIR/checkpoint.adjck,
// read by rank 0 and sent to every rank, written by rank 0; the run's identity (method, scene,
// task, iterations, seed) checked on resume; the loop's running totals kept with the trainer's
// state. The trainers' own state: engine/optim/checkpoint.h and their save()/load().
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "app/cmd_optimize.h"
#include "engine/core/status.h"
#include "engine/dist/communicator.h"
#include "engine/optim/checkpoint.h"

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

}  // namespace adj::app
