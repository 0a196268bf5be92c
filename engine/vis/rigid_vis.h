// a rigid state as plain float arrays for drawing (the app copies them into GPU buffers;
// the renderer never sees an engine type). every writer fills memory the caller provides.
//   shapes:   kRigidShapeFloats per shape: position [m] (3), rotation quaternion w x y z (4),
//             size (3: sphere r; box half extents; capsule r, half height along local y),
//             kind (GeomType), body index
//   joints:   kRigidJointFloats per body: joint anchor, world [m] (3), joint axis, world (3; zero
//             for ball, free and fixed joints), body centre of mass, world [m] (3)
//   contacts: kRigidContactFloats per contact: point [m] (3), force of the ground [N] (3)
#pragma once

#include "engine/model/rigid_model.h"

namespace adj {

inline constexpr int kRigidShapeFloats = 12;
inline constexpr int kRigidJointFloats = 9;
inline constexpr int kRigidContactFloats = 6;

// out: model.shape_count() * kRigidShapeFloats floats
template <class S>
void rigid_vis_shapes(const RigidModelT<S>& model, const StateT<S>& state, float* out);
// out: model.body_count() * kRigidJointFloats floats
template <class S>
void rigid_vis_joints(const RigidModelT<S>& model, const StateT<S>& state, float* out);
// writes min(contact_count, capacity) contacts; returns how many
template <class S>
int rigid_vis_contacts(const RigidContactsT<S>& contacts, float* out, int capacity);

// rotation matrix -> unit quaternion (w, x, y, z)
template <class S>
rigid::quat<S> rigid_mat_to_quat(const mat33<S>& R);

}  // namespace adj
