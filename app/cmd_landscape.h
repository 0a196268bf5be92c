#pragma once
// `adjoint landscape`: a task's loss landscape (engine/optim/landscape.h) from the command
// line: the table on stdout, the picture as a PNG, every evaluated point as JSON.
#include <cstdint>
#include <string>
#include <vector>

namespace adj::app {

struct LandscapeCliOptions {
  std::string scene_path;
  std::string task;                // empty: the scene's first
  std::string direction = "grad";  // grad, random, or a parameter entry (name or index)
  std::string direction2;          // 2D: the second direction's entry (default: random)
  double span = 0;                 // <= 0: 0.1 max(1, |theta|)
  int points = 41;
  int grid = 0;                    // > 1: a grid x grid 2D slice too
  std::vector<std::string> sweep;  // "ke=1e3,1e4,1e5" (one knob per option)
  int stats = 0;                   // gradient statistics over this many perturbations
  double sigma = 0;
  std::uint64_t seed = 0;
  int threads = 0;
  std::string png, json;
};

// exit codes: 0 ok, 1 error (message printed)
int run_landscape(const LandscapeCliOptions& options);

}  // namespace adj::app
