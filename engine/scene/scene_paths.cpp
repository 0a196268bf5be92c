#include "engine/scene/scene_paths.h"

#include <filesystem>

namespace adj::scene {

namespace {

namespace fs = std::filesystem;

void rebase(std::string& p, const fs::path& from, const fs::path& to) {
  if (p.empty() || fs::path(p).is_absolute()) return;
  const fs::path file = (from / p).lexically_normal();
  fs::path rel = file.lexically_relative(to);
  p = rel.empty() ? file.string() : rel.generic_string();
}

}  // namespace

void rebase_paths(Scene& scene, const std::string& from_dir, const std::string& to_dir) {
  std::error_code ec;
  const fs::path from = fs::absolute(from_dir.empty() ? fs::path(".") : fs::path(from_dir), ec).lexically_normal();
  const fs::path to = fs::absolute(to_dir.empty() ? fs::path(".") : fs::path(to_dir), ec).lexically_normal();
  if (from == to) return;
  for (Object& o : scene.objects) {
    rebase(o.cloth.mesh, from, to);
    rebase(o.soft.mesh, from, to);
    rebase(o.collider.mesh, from, to);
    rebase(o.robot.urdf, from, to);
    for (RobotBody& b : o.robot.bodies)
      for (RobotShape& s : b.shapes) rebase(s.file, from, to);
  }
}

}  // namespace adj::scene
