// What the optimize commands publish to their viewers besides their own records
// (app/serve/run_server.h): a snapshot of the parameters and one rollout's states.
#pragma once

#include <vector>

#include "app/serve/run_server.h"
#include "engine/model/state.h"

namespace adj::app {

// the snapshot of an iteration: its parameters and the states of its rollout
template <class S>
RunSnapshot rollout_snapshot(int iteration, const std::vector<S>& theta, const std::vector<StateT<S>>& frames) {
  RunSnapshot out{iteration, std::vector<double>(theta.begin(), theta.end()), {}, {}};
  out.particle_q.reserve(frames.size());
  out.joint_q.reserve(frames.size());
  for (const StateT<S>& s : frames) {
    std::vector<float>& pq = out.particle_q.emplace_back();
    pq.reserve(s.particle_q.size() * 3);
    for (const auto& p : s.particle_q) pq.insert(pq.end(), {float(p.x), float(p.y), float(p.z)});
    out.joint_q.emplace_back(s.joint_q.begin(), s.joint_q.end());
  }
  return out;
}

}  // namespace adj::app
