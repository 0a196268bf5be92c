#include "app/cmd_run.h"

#include "app/state_log.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

namespace adj::app {

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
  for (const std::string& w : compiled->warnings)
    std::fprintf(stderr, "%s: warning: %s\n", o.scene_path.c_str(), w.c_str());
  const Model& model = compiled->model;
  // the one solver: particles, bodies and their contact; PD actuators hold the initial pose
  Solver solver({.substeps = compiled->substeps, .thread_count = o.threads});
  State a = model.make_state(), b = model.make_state();
  Control control = model.make_hold_control();

  StateLog log(doc->name, compiled->frame_dt, compiled->substeps, model.particle_count(), compiled->has_robots());
  auto record = [&](int t, const State& s) {
    if (!o.out.empty() && t % o.every == 0) log.add(t, s);
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
  std::printf(
      "%s: %d particles, %d frames x %d substeps in %.3f s (%.0f substeps/s); "
      "centre of mass (%.4f, %.4f, %.4f)\n",
      doc->name.c_str(), model.particle_count(), o.frames, compiled->substeps, secs,
      secs > 0 ? o.frames * compiled->substeps / secs : 0.0, com.x, com.y, com.z);

  if (compiled->has_robots()) {
    std::printf("robots: %d bodies; joint coordinates at the end:", compiled->model.rigid.body_count());
    for (size_t i = 0; i < a.joint_q.size() && i < 12; ++i) std::printf(" %.4f", double(a.joint_q[i]));
    std::printf("%s\n", a.joint_q.size() > 12 ? " ..." : "");
  }
  if (!o.out.empty()) {
    if (Status st = log.write(o.out); !st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
    std::printf("states written to %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace adj::app
