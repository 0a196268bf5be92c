#pragma once
// The states of a headless run, one entry per recorded frame, written as JSON (atomically):
// `adjoint run --out` and `adjoint render --states`. Floats are written so that they read
// back bit for bit, so two paths through the solver can be compared exactly.
//   {"scene", "dt", "substeps", "particle_count", "frames": [{"frame", "time", "positions",
//    "velocities", "joint_q", "joint_qd" (robots only), "world" (runs over several worlds)}]}
// and "worlds" (their count) in the head of a run over several worlds
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/status.h"
#include "engine/model/state.h"

namespace adj::app {

class StateLog {
 public:
  StateLog(std::string scene, double dt, int substeps, int particle_count, bool robots);
  void add(int frame, const State& s, int world = -1);  // world >= 0: written with the frame
  void set_worlds(int worlds) { head_["worlds"] = worlds; }
  // FILE.tmp, then renamed over FILE; the message names the file
  Status write(const std::string& path) const;
  int size() const { return int(frames_.size()); }

 private:
  nlohmann::json head_;
  nlohmann::json frames_ = nlohmann::json::array();
  double dt_;
  bool robots_;
};

}  // namespace adj::app
