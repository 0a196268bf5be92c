#include "app/cmd_run.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

namespace adj::app {

namespace {

nlohmann::json vec_array(const Array<vec3<float>>& a) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& v : a) j.push_back({v.x, v.y, v.z});
  return j;
}

}  // namespace

int run_rollout(const RunOptions& o) {
  auto doc = scene::load_scene(o.scene_path);
  if (!doc) {
    std::fprintf(stderr, "%s\n", doc.status().message().c_str());
    return 1;
  }
  std::string base = std::filesystem::path(o.scene_path).parent_path().string();
  auto compiled = scene::compile<float>(*doc, base);
  if (!compiled) {
    std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), compiled.status().message().c_str());
    return 1;
  }
  const Model& model = compiled->model;
  // the one solver: particles, bodies and their contact; PD actuators hold the initial pose
  Solver solver({.substeps = compiled->substeps, .thread_count = o.threads});
  State a = model.make_state(), b = model.make_state();
  Control control = model.make_hold_control();

  nlohmann::json frames = nlohmann::json::array();
  auto record = [&](int t, const State& s) {
    if (o.out.empty() || t % o.every != 0) return;
    nlohmann::json f = {{"frame", t},
                        {"time", t * compiled->frame_dt},
                        {"positions", vec_array(s.particle_q)},
                        {"velocities", vec_array(s.particle_qd)}};
    if (compiled->has_robots()) {
      f["joint_q"] = s.joint_q;
      f["joint_qd"] = s.joint_qd;
    }
    frames.push_back(std::move(f));
  };

  auto t0 = std::chrono::steady_clock::now();
  record(0, a);
  for (int t = 0; t < o.frames; ++t) {
    Status st = solver.step(model, a, b, control, compiled->frame_dt);
    if (!st) {
      std::fprintf(stderr, "%s: frame %d: %s\n", o.scene_path.c_str(), t, st.message().c_str());
      return 1;
    }
    std::swap(a, b);  // the next step reads what this one wrote (no differentiation here)
    record(t + 1, a);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // summary: centre of mass of the free particles and the speed of the run
  vec3<double> com;
  double mass = 0;
  for (int i = 0; i < model.particle_count(); ++i) {
    double m = model.particle_mass[i];
    com += vec3<double>(a.particle_q[i].x, a.particle_q[i].y, a.particle_q[i].z) * m;
    mass += m;
  }
  if (mass > 0) com = com / mass;
  std::printf("%s: %d particles, %d frames x %d substeps in %.3f s (%.0f substeps/s); "
              "centre of mass (%.4f, %.4f, %.4f)\n",
              doc->name.c_str(), model.particle_count(), o.frames, compiled->substeps, secs,
              secs > 0 ? o.frames * compiled->substeps / secs : 0.0, com.x, com.y, com.z);

  if (compiled->has_robots()) {
    std::printf("robots: %d bodies; joint coordinates at the end:", compiled->model.rigid.body_count());
    for (size_t i = 0; i < a.joint_q.size() && i < 12; ++i) std::printf(" %.4f", double(a.joint_q[i]));
    std::printf("%s\n", a.joint_q.size() > 12 ? " ..." : "");
  }
  if (!o.out.empty()) {
    nlohmann::json j = {{"scene", doc->name}, {"dt", compiled->frame_dt}, {"substeps", compiled->substeps},
                        {"particle_count", model.particle_count()}, {"frames", frames}};
    std::string tmp = o.out + ".tmp";
    {
      std::ofstream f(tmp);
      f << j.dump() << "\n";
      if (!f) {
        std::fprintf(stderr, "%s: cannot write\n", o.out.c_str());
        return 1;
      }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, o.out, ec);
    if (ec) {
      std::fprintf(stderr, "%s: cannot write: %s\n", o.out.c_str(), ec.message().c_str());
      return 1;
    }
    std::printf("states written to %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace adj::app
