#include "app/cmd_run.h"

#include "app/state_log.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/worlds.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace adj::app {

namespace {

// a world's summary: its randomized factors, the centre of mass of its particles, its robots'
// coordinates at the end
void print_world(const Worlds& worlds, int w, bool robots, std::uint64_t seed) {
  const Model& model = worlds.model(w);
  const State& a = worlds.state(w);
  const std::string prefix = worlds.world_count() > 1 ? "world " + std::to_string(w) + ": " : "";
  if (worlds.randomized())
    std::printf("%sparameters %s (seed %llu)\n", prefix.c_str(),
                describe_world(worlds.options().randomize, seed, w).c_str(), (unsigned long long)seed);
  vec3<double> com;
  double mass = 0;
  for (int i = 0; i < model.particle_count(); ++i) {
    double m = model.particle_mass[i];
    com += vec3<double>(a.particle_q[i].x, a.particle_q[i].y, a.particle_q[i].z) * m;
    mass += m;
  }
  if (mass > 0) com = com / mass;
  if (model.particle_count() > 0)
    std::printf("%scentre of mass (%.4f, %.4f, %.4f)\n", prefix.c_str(), com.x, com.y, com.z);
  if (robots) {
    std::printf("%srobots: %d bodies; joint coordinates at the end:", prefix.c_str(), model.rigid.body_count());
    for (size_t i = 0; i < a.joint_q.size() && i < 12; ++i) std::printf(" %.4f", double(a.joint_q[i]));
    std::printf("%s\n", a.joint_q.size() > 12 ? " ..." : "");
  }
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
  for (const std::string& w : compiled->warnings)
    std::fprintf(stderr, "%s: warning: %s\n", o.scene_path.c_str(), w.c_str());
  const Model& model = compiled->model;
  const std::uint64_t seed = o.seed >= 0 ? std::uint64_t(o.seed) : (doc->tasks.empty() ? 0 : doc->tasks.front().seed);
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  // the one solver per world: particles, bodies and their contact; PD actuators hold the initial
  // pose. One world steps on every thread; several, one world per thread
  auto made = Worlds::create(
      model, {.world_count = o.worlds,
              .thread_count = std::min(threads, o.worlds),
              .seed = seed,
              .randomize = compiled->randomize,
              .solver = {.substeps = compiled->substeps, .thread_count = o.worlds == 1 ? o.threads : 1}});
  if (!made) {
    std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), made.status().message().c_str());
    return 1;
  }
  Worlds& worlds = *made;
  std::vector<State> next(std::size_t(o.worlds));
  std::vector<Control> controls;
  for (int w = 0; w < o.worlds; ++w) controls.push_back(worlds.model(w).make_hold_control());

  StateLog log(doc->name, compiled->frame_dt, compiled->substeps, model.particle_count(), compiled->has_robots());
  if (o.worlds > 1) log.set_worlds(o.worlds);
  auto record = [&](int t) {
    if (o.out.empty() || t % o.every != 0) return;
    for (int w = 0; w < o.worlds; ++w) log.add(t, worlds.state(w), o.worlds > 1 ? w : -1);
  };

  auto t0 = std::chrono::steady_clock::now();
  record(0);
  for (int t = 0; t < o.frames; ++t) {
    Status st = worlds.run([&](int w, Solver& solver) {
      Status s = solver.step(worlds.model(w), worlds.state(w), next[std::size_t(w)], controls[std::size_t(w)],
                             compiled->frame_dt);
      if (s) std::swap(worlds.state(w), next[std::size_t(w)]);  // the next step reads what this one wrote
      return s;
    });
    if (!st) {
      std::fprintf(stderr, "%s: frame %d: %s\n", o.scene_path.c_str(), t, st.message().c_str());
      return 1;
    }
    record(t + 1);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("%s: %d particles, %d world%s, %d frames x %d substeps in %.3f s (%.0f substeps/s over all worlds)\n",
              doc->name.c_str(), model.particle_count(), o.worlds, o.worlds == 1 ? "" : "s", o.frames,
              compiled->substeps, secs, secs > 0 ? double(o.frames) * compiled->substeps * o.worlds / secs : 0.0);
  const int shown = std::min(o.worlds, 8);
  for (int w = 0; w < shown; ++w) print_world(worlds, w, compiled->has_robots(), seed);
  if (shown < o.worlds) std::printf("(%d more worlds)\n", o.worlds - shown);
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
