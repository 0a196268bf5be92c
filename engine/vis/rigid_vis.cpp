#include "engine/vis/rigid_vis.h"

#include <cmath>
#include <vector>

#include "engine/articulation/rigid_queries.h"

namespace adj {

template <class S>
rigid::quat<S> rigid_mat_to_quat(const mat33<S>& R) {
  const auto& m = R.m;
  S tr = m[0][0] + m[1][1] + m[2][2];
  rigid::quat<S> q;
  if (tr > 0) {
    S s = std::sqrt(tr + S(1)) * S(2);
    q = {S(0.25) * s, (m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s};
  } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
    S s = std::sqrt(S(1) + m[0][0] - m[1][1] - m[2][2]) * S(2);
    q = {(m[2][1] - m[1][2]) / s, S(0.25) * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s};
  } else if (m[1][1] > m[2][2]) {
    S s = std::sqrt(S(1) + m[1][1] - m[0][0] - m[2][2]) * S(2);
    q = {(m[0][2] - m[2][0]) / s, (m[0][1] + m[1][0]) / s, S(0.25) * s, (m[1][2] + m[2][1]) / s};
  } else {
    S s = std::sqrt(S(1) + m[2][2] - m[0][0] - m[1][1]) * S(2);
    q = {(m[1][0] - m[0][1]) / s, (m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, S(0.25) * s};
  }
  return rigid::qnormalize(q);
}

template <class S>
void rigid_vis_shapes(const RigidModelT<S>& model, const StateT<S>& state, float* out) {
  std::vector<vec3<S>> pos;
  std::vector<mat33<S>> rot;
  rigid_forward_kinematics(model, state, pos, rot);
  for (int s = 0; s < model.shape_count(); ++s) {
    int b = model.shape_body[s];
    vec3<S> p = pos[b] + rot[b] * model.shape_pos[s];
    rigid::quat<S> q = rigid_mat_to_quat(rot[b] * model.shape_rot[s]);
    float* o = out + s * kRigidShapeFloats;
    const vec3<S>& sz = model.shape_size[s];
    const float v[kRigidShapeFloats] = {float(p.x),
                                        float(p.y),
                                        float(p.z),
                                        float(q.w),
                                        float(q.x),
                                        float(q.y),
                                        float(q.z),
                                        float(sz.x),
                                        float(sz.y),
                                        float(sz.z),
                                        float(model.shape_type[s]),
                                        float(b)};
    for (int k = 0; k < kRigidShapeFloats; ++k) o[k] = v[k];
  }
}

template <class S>
void rigid_vis_joints(const RigidModelT<S>& model, const StateT<S>& state, float* out) {
  std::vector<vec3<S>> pos;
  std::vector<mat33<S>> rot;
  rigid_forward_kinematics(model, state, pos, rot);
  for (int b = 0; b < model.body_count(); ++b) {
    // the body frame is the joint frame after the motion: its origin is the anchor for
    // revolute joints; the axis is fixed in it for both revolute and prismatic joints
    int t = model.joint_type[b];
    vec3<S> axis = (t == RIGID_JOINT_REVOLUTE || t == RIGID_JOINT_PRISMATIC) ? rot[b] * model.joint_axis[b] : vec3<S>{};
    vec3<S> com = pos[b] + rot[b] * model.body_com[b];
    const float v[kRigidJointFloats] = {float(pos[b].x), float(pos[b].y), float(pos[b].z), float(axis.x), float(axis.y),
                                        float(axis.z),   float(com.x),    float(com.y),    float(com.z)};
    for (int k = 0; k < kRigidJointFloats; ++k) out[b * kRigidJointFloats + k] = v[k];
  }
}

template <class S>
int rigid_vis_contacts(const RigidContactsT<S>& c, float* out, int capacity) {
  int n = std::min(c.contact_count(), capacity);
  for (int i = 0; i < n; ++i) {
    const float v[kRigidContactFloats] = {float(c.point[i].x), float(c.point[i].y), float(c.point[i].z),
                                          float(c.force[i].x), float(c.force[i].y), float(c.force[i].z)};
    for (int k = 0; k < kRigidContactFloats; ++k) out[i * kRigidContactFloats + k] = v[k];
  }
  return n;
}

#define ADJ_RIGID_VIS(S)                                                              \
  template rigid::quat<S> rigid_mat_to_quat<S>(const mat33<S>&);                      \
  template void rigid_vis_shapes<S>(const RigidModelT<S>&, const StateT<S>&, float*); \
  template void rigid_vis_joints<S>(const RigidModelT<S>&, const StateT<S>&, float*); \
  template int rigid_vis_contacts<S>(const RigidContactsT<S>&, float*, int);
ADJ_RIGID_VIS(float)
ADJ_RIGID_VIS(double)

}  // namespace adj
