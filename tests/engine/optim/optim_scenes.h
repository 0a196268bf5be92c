// small compiled scenes and tasks for the optimization tests, built by hand with
// ModelBuilderT (object ranges filled in as compile() would), templated on the scalar
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/model/builder.h"
#include "engine/optim/trainer.h"
#include "engine/scene/compile.h"

namespace adj::optim::test {

using scene::CompiledSceneT;
using scene::LossKind;
using scene::ObjectKind;
using scene::ObjectRange;
using scene::ParamKind;
using scene::Task;

template <class S>
ModelT<S> must(Result<ModelT<S>> r) {
  if (!r) throw std::runtime_error(r.status().message());
  return std::move(r.value());
}

template <class T>
T must_ok(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

inline ObjectRange particles_object(const std::string& name, int pb, int pe, int sb = 0, int se = 0, int tb = 0,
                                    int te = 0, ObjectKind kind = ObjectKind::particles) {
  ObjectRange r;
  r.name = name;
  r.kind = kind;
  r.particle_begin = pb, r.particle_end = pe;
  r.spring_begin = sb, r.spring_end = se;
  r.tet_begin = tb, r.tet_end = te;
  return r;
}

inline ObjectRange target_object(const std::string& name, scene::V3 pos) {
  ObjectRange r;
  r.name = name;
  r.kind = ObjectKind::target;
  r.target = pos;
  return r;
}

inline ObjectRange collider_object(const std::string& name, int shape) {
  ObjectRange r;
  r.name = name;
  r.kind = ObjectKind::collider;
  r.shape = shape;
  return r;
}

// the notes' bounce: one particle thrown at a wall, bouncing on the ground on the way;
// contact ke 1e4, kd 10, kf 0, mu 0.2; frames of 1/60 s in 8 substeps (dt 1/480)
template <class S>
CompiledSceneT<S> bounce_scene() {
  ModelBuilderT<S> b;
  b.add_particle({S(-0.5), S(1.0), S(0)}, {S(5), S(-5), S(0)}, S(1), S(0.1));
  b.add_ground(S(0));
  b.add_plane({S(1.75), S(0), S(0)}, {S(-1), S(0), S(0)});
  b.settings().contact_ke = S(1e4);
  b.settings().contact_kd = S(10);
  b.settings().contact_kf = S(0);
  b.settings().contact_mu = S(0.2);
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("ball", 0, 1), collider_object("ground", 0), collider_object("wall", 1),
                target_object("goal", {-2.0, 1.5, 0.0})};
  cs.frame_dt = S(1.0 / 60.0);
  cs.substeps = 8;
  return cs;
}

inline Task bounce_task(int horizon = 36) {
  Task t;
  t.name = "bounce";
  t.horizon = horizon;
  t.parameters = {{ParamKind::initial_velocity, "ball"}};
  t.loss = {{LossKind::position, "ball", "goal"}};
  t.optimizer = {scene::OptimizerKind::sgd, 0.02, 0.0, 20};
  return t;
}

// the notes' spring cage: a centre particle tied by 8 springs (k 100, d 10) to the pinned
// corners of a cube, no gravity; 30 frames of 1/30 s
template <class S>
CompiledSceneT<S> cage_scene(bool actuated = false) {
  ModelBuilderT<S> b;
  b.add_particle({S(0), S(0), S(0)}, {}, S(1), S(0.05));
  for (int k = 0; k < 8; ++k) {
    vec3<S> c(S((k & 1) ? 1 : -1), S((k & 2) ? 1 : -1), S((k & 4) ? 1 : -1));
    b.add_particle(c * S(0.5), {}, S(0), S(0.05));
    b.add_spring(0, k + 1, S(100), S(10));
  }
  b.settings().gravity = {S(0), S(0), S(0)};
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("cage", 0, 9, 0, 8), target_object("goal", {0.1, 0.15, -0.12})};
  if (actuated) cs.actuated_springs = {1, 3, 4, 6};
  cs.frame_dt = S(1.0 / 30.0);
  cs.substeps = 2;
  return cs;
}

inline Task cage_task(int horizon = 30) {
  Task t;
  t.name = "cage";
  t.horizon = horizon;
  t.parameters = {{ParamKind::spring_rest, "cage", 0.1, 2.0}};
  t.loss = {{LossKind::position, "cage", "goal"}};
  t.optimizer = {scene::OptimizerKind::sgd, 0.5, 0.0, 20};
  return t;
}

// a ball landing on the ground and sliding (Coulomb friction), for the contact parameters
template <class S>
CompiledSceneT<S> slide_scene() {
  ModelBuilderT<S> b;
  b.add_particle({S(0), S(0.15), S(0)}, {S(2), S(-1), S(0.5)}, S(1), S(0.05));
  b.add_ground(S(0));
  b.settings().contact_ke = S(2e3);
  b.settings().contact_kd = S(5);
  b.settings().contact_kf = S(100);
  b.settings().contact_mu = S(0.3);
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("ball", 0, 1), collider_object("ground", 0), target_object("goal", {1.0, 0.2, 0.3})};
  cs.frame_dt = S(1.0 / 60.0);
  cs.substeps = 4;
  return cs;
}

// a soft cube (1 cell: 8 particles, 5 tets) hanging from its pinned x = 0 face
template <class S>
CompiledSceneT<S> soft_scene() {
  ModelBuilderT<S> b;
  SoftMaterial<S> mat;
  mat.density = S(100);
  mat.mu = S(300);
  mat.lambda = S(600);
  mat.kd = S(1);
  b.add_soft_grid({S(0), S(0.5), S(0)}, 1, 1, 1, S(0.2), {}, mat, true, S(0.01));
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("jelly", 0, cs.model.particle_count(), 0, 0, 0, cs.model.tet_count()),
                target_object("goal", {0.3, 0.3, 0.0})};
  cs.frame_dt = S(1.0 / 60.0);
  cs.substeps = 4;
  return cs;
}

// a 3x3-particle cloth (8 triangles) falling with lift and drag, no ground
template <class S>
CompiledSceneT<S> cloth_scene() {
  ModelBuilderT<S> b;
  ClothMaterial<S> mat;
  mat.tri_ke = S(200);
  mat.tri_ka = S(200);
  mat.tri_kd = S(2);
  mat.edge_ke = S(0.05);
  b.add_cloth_grid({S(0), S(1), S(0)}, mat33<S>::from_cols({S(1), S(0), S(0)}, {S(0), S(0), S(1)}, {S(0), S(-1), S(0)}),
                   2, 2, S(0.2), S(0.1), {S(1), S(0.5), S(0)}, mat);
  b.settings().tri_lift = S(1);
  b.settings().tri_drag = S(0.5);
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("cloth", 0, cs.model.particle_count(), 0, 0), target_object("goal", {1.0, 1.0, 0.0})};
  cs.objects[0].tri_begin = 0, cs.objects[0].tri_end = cs.model.tri_count();
  cs.objects[0].edge_begin = 0, cs.objects[0].edge_end = cs.model.edge_count();
  cs.frame_dt = S(1.0 / 60.0);
  cs.substeps = 4;
  return cs;
}

// DiffTaichi-style walker: 6 masses, 11 springs (all actuated), ground with friction
template <class S>
CompiledSceneT<S> robot_scene() {
  ModelBuilderT<S> b;
  vec3<S> p[6] = {{S(0), S(0.1), S(0)},     {S(0.2), S(0.1), S(0)},      {S(0.4), S(0.1), S(0)},
                  {S(0), S(0.3), S(0.05)},  {S(0.2), S(0.3), S(-0.05)},  {S(0.4), S(0.3), S(0.05)}};
  for (auto& x : p) b.add_particle(x + vec3<S>(S(0), S(0.02), S(0)), {}, S(0.5), S(0.1));
  int springs[11][2] = {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {0, 3}, {1, 4}, {2, 5}, {0, 4}, {1, 3}, {1, 5}, {2, 4}};
  for (auto& s : springs) b.add_spring(s[0], s[1], S(300), S(2));
  b.add_ground(S(0));
  b.settings().contact_ke = S(500);
  b.settings().contact_kd = S(5);
  b.settings().contact_kf = S(20);
  b.settings().contact_mu = S(0.8);
  CompiledSceneT<S> cs;
  cs.model = must(b.finalize());
  cs.objects = {collider_object("ground", 0), particles_object("robot", 0, 6, 0, 11)};
  for (int s = 0; s < 11; ++s) cs.actuated_springs.push_back(s);
  cs.frame_dt = S(1.0 / 60.0);
  cs.substeps = 4;
  return cs;
}

}  // namespace adj::optim::test
