#pragma once
// Robots in an optimization's pictures (ghost trajectories, videos): which body a task
// follows, and that body's path through a rollout. Engine types only: the editor's worker
// (no GPU) and the CLI's video share it.
#include <string>
#include <vector>

#include "engine/core/math.h"
#include "engine/scene/compile.h"
#include "engine/vis/rigid_vis.h"

namespace adj::app {

// the body the task's first robot loss term reads (else that robot's base); -1: no robot term
inline int tracked_robot_body(const scene::CompiledScene& cs, const scene::Task& task) {
  for (const scene::LossTerm& l : task.loss) {
    const scene::ObjectRange* r = cs.find(l.object);
    if (!r || r->kind != scene::ObjectKind::robot || r->body_end <= r->body_begin) continue;
    for (int b = r->body_begin; b < r->body_end; ++b)
      if (cs.model.rigid.body_name[size_t(b)] == l.body) return b;
    return r->body_begin;
  }
  return -1;
}

// the mean position of an object's particles in a state (its range must have particles)
inline vec3<float> particle_centre(const scene::ObjectRange& r, const StateT<float>& st) {
  vec3<float> c{};
  for (int i = r.particle_begin; i < r.particle_end; ++i) c += st.particle_q[size_t(i)];
  return c / float(r.particle_end - r.particle_begin);
}

// that body's centre of mass [m] in each state (empty for body -1)
inline std::vector<vec3<float>> robot_com_path(const RigidModelT<float>& model,
                                               const std::vector<StateT<float>>& states, int body) {
  std::vector<vec3<float>> path;
  if (body < 0 || body >= model.body_count()) return path;
  std::vector<float> joints(size_t(model.body_count()) * kRigidJointFloats);
  for (const StateT<float>& st : states) {
    rigid_vis_joints(model, st, joints.data());
    const float* f = &joints[size_t(body) * kRigidJointFloats];
    path.push_back({f[6], f[7], f[8]});
  }
  return path;
}

}  // namespace adj::app
