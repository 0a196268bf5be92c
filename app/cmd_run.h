#pragma once
// `adjoint run SCENE --steps N [--worlds N --seed S] [--out states.json]`: roll a scene out headless,
// as one world or many (engine/solver/worlds.h), each under the scene's randomization.
#include <string>

namespace adj::app {

struct RunOptions {
  std::string scene_path;
  int frames = 60;          // frames to simulate (each settings.substeps solver substeps)
  std::string out;          // states as JSON; empty = none
  int every = 1;            // write every k-th frame
  int threads = 0;          // OpenMP threads, 0 = default
  int worlds = 1;           // independent copies of the scene (settings.randomize: each its own parameters)
  long long seed = -1;      // the randomization's seed; < 0: the first task's seed, else 0
};

// exit code: 0 ok, 1 error (message printed: file and JSON path, or step and element)
int run_rollout(const RunOptions& options);

}  // namespace adj::app
