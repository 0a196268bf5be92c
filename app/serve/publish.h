// What the optimize commands publish to their viewers besides their own records
// (app/serve/run_server.h): a snapshot of the parameters and one rollout's states.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "engine/model/state.h"

namespace adj::app {

// {"iteration", "parameters", "frames": [{"particle_q": [x, y, z, ...], "joint_q": [...]}, ...]}
template <class S>
nlohmann::json rollout_snapshot(int iteration, const std::vector<S>& theta, const std::vector<StateT<S>>& frames) {
  nlohmann::json fs = nlohmann::json::array();
  for (const StateT<S>& s : frames) {
    std::vector<float> pq;
    pq.reserve(s.particle_q.size() * 3);
    for (const auto& p : s.particle_q) pq.insert(pq.end(), {float(p.x), float(p.y), float(p.z)});
    std::vector<float> jq(s.joint_q.begin(), s.joint_q.end());
    fs.push_back({{"particle_q", std::move(pq)}, {"joint_q", std::move(jq)}});
  }
  return {{"iteration", iteration}, {"parameters", theta}, {"frames", std::move(fs)}};
}

}  // namespace adj::app
