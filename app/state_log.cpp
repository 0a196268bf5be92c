#include "app/state_log.h"

#include <filesystem>
#include <fstream>

namespace adj::app {

namespace {

nlohmann::json vec_array(const Array<vec3<float>>& a) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& v : a) j.push_back({v.x, v.y, v.z});
  return j;
}

}  // namespace

StateLog::StateLog(std::string scene, double dt, int substeps, int particle_count, bool robots)
    : dt_(dt), robots_(robots) {
  head_ = {{"scene", std::move(scene)}, {"dt", dt}, {"substeps", substeps}, {"particle_count", particle_count}};
}

void StateLog::add(int frame, const State& s, int world) {
  nlohmann::json f = {{"frame", frame},
                      {"time", frame * dt_},
                      {"positions", vec_array(s.particle_q)},
                      {"velocities", vec_array(s.particle_qd)}};
  if (robots_) {
    f["joint_q"] = s.joint_q;
    f["joint_qd"] = s.joint_qd;
  }
  if (world >= 0) f["world"] = world;
  frames_.push_back(std::move(f));
}

Status StateLog::write(const std::string& path) const {
  nlohmann::json j = head_;
  j["frames"] = frames_;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump() << "\n";
    if (!f) return Status::error(path + ": cannot write");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::error(path + ": cannot write: " + ec.message());
  return Status::ok();
}

}  // namespace adj::app
