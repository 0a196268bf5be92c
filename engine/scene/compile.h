// Scene document -> Model: objects become particles, elements and colliders; each object's
// index ranges are kept so that parameters and losses can name objects.
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/model/rigid_model.h"
#include "engine/scene/scene.h"

namespace adj::scene {

// what one scene object became in the model: [begin, end) ranges
struct ObjectRange {
  std::string name;
  ObjectKind kind = ObjectKind::particles;
  int particle_begin = 0, particle_end = 0;
  int spring_begin = 0, spring_end = 0;
  int tri_begin = 0, tri_end = 0;
  int edge_begin = 0, edge_end = 0;  // bending edges
  int tet_begin = 0, tet_end = 0;
  int shape = -1;                 // collider: shape index in the model
  V3 target{0, 0, 0};             // target: its position
  std::vector<V3> target_points;  // target: its per-particle points (may be empty)
  // robot: its bodies (= joints), coordinates, dofs and actuators in CompiledScene::rigid
  int body_begin = 0, body_end = 0;
  int q_begin = 0, q_end = 0;
  int dof_begin = 0, dof_end = 0;
  int actuator_begin = 0, actuator_end = 0;
};

// limits that keep a bad file from exhausting memory
struct CompileLimits {
  long long max_particles = 2'000'000;
  long long max_elements = 8'000'000;
};

template <class S>
struct CompiledSceneT {
  ModelT<S> model;                    // the one Model of the scene
  std::vector<ObjectRange> objects;   // one per scene object, in document order
  std::vector<int> actuated_springs;  // model spring indices whose rest length is actuated
  std::vector<int> actuated_tets;     // model tet indices of actuated soft objects
  S frame_dt = S(1.0 / 60.0);         // settings.dt
  int substeps = 1;                   // settings.substeps
  int up_axis = 1;                    // settings.up_index(): the world coordinate that points up
  Randomization randomize;            // settings.randomize: per-world factors of runs over many worlds
  // the one world: particles, elements, colliders and (model.rigid) every robot object's
  // bodies in document order, with their initial joint states (model.joint_q, joint_qd)
  bool has_robots() const { return model.body_count() > 0; }
  // what importers skipped or approximated (URDF mimic joints, MJCF sites...), each naming
  // the object and the file's element
  std::vector<std::string> warnings;
  bool has_particles() const { return model.particle_count() > 0; }

  const ObjectRange* find(const std::string& name) const;
};

using CompiledScene = CompiledSceneT<float>;

// base_dir resolves relative mesh paths (the scene file's folder); errors name the object
// robot objects -> out.model.rigid, out.model.joint_q/joint_qd and the robot ranges of out.objects (called
// by compile() after the particle objects; engine/scene/compile_robot.cpp)
template <class S>
Status compile_robots(const Scene& scene, const std::string& base_dir, CompiledSceneT<S>& out);

template <class S>
Result<CompiledSceneT<S>> compile(const Scene& scene, const std::string& base_dir, const CompileLimits& limits = {});

}  // namespace adj::scene
