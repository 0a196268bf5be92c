// a pointer/count view of RigidModelT with the same field names, so the stages of a rigid step
// (engine/articulation/: rigid_dynamics.h, rigid_adjoint.h, body_contact.h: generic over the model type) run on a
// CUDA device from the same source as on the host; Span (pointer + count) for its arrays and
// for the per-environment scratch carved from one preallocated arena (ArenaCursor).
//
// SolverT's articulation stage (engine/solver/articulation_stage.h) instantiates the stages on
// RigidModelT itself; SolverT's coupled substep (engine/solver/coupled_kernels.h), the batch kernel
// (engine/articulation/rigid_batch.h) and the CUDA backend on RigidViewT. mesh shapes touch through
// their convex hulls, which the view holds (the hull arrays; the triangle meshes themselves, for
// drawing, are left out).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/core/spatial.h"
#include "engine/model/rigid_model.h"

namespace adj::rigid {

// pointer + count over host or device memory; a std::vector converts to it on the host
template <class T>
struct Span {
  T* ptr = nullptr;
  int n = 0;
  Span() = default;
  ADJ_HD Span(T* p, int count) : ptr(p), n(count) {}
  template <class U, class = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, U>>>
  Span(const std::vector<U>& v) : ptr(const_cast<T*>(v.data())), n(int(v.size())) {}  // NOLINT: implicit on purpose
  ADJ_HD T& operator[](int i) const { return ptr[i]; }
  ADJ_HD int size() const { return n; }
  ADJ_HD bool empty() const { return n == 0; }
  ADJ_HD T* data() const { return ptr; }
  ADJ_HD T& back() const { return ptr[n - 1]; }
  ADJ_HD T* begin() const { return ptr; }
  ADJ_HD T* end() const { return ptr + n; }
};

// the plain scalar of a model type (RigidModelT<S> or RigidViewT<S>)
template <class M>
using model_scalar_t = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<const M&>().contact_kf)>>;

// the record type of a pass that records no contacts (device code)
struct NoRecord {};

// RigidModelT's fields as spans (body_name and the drawn triangle meshes left out)
template <class S>
struct RigidViewT {
  Span<const S> body_mass;
  Span<const vec3<S>> body_com;
  Span<const mat33<S>> body_inertia;
  Span<const int> joint_type, joint_parent;
  Span<const vec3<S>> joint_pos;
  Span<const mat33<S>> joint_rot;
  Span<const vec3<S>> joint_axis;
  Span<const int> joint_q_start, joint_dof_start;
  Span<const S> joint_lower, joint_upper, joint_limit_ke, joint_limit_kd;
  S joint_limit_eps = S(0.01);
  Span<const S> joint_stiffness, joint_spring_q;
  Span<const S> dof_damping, dof_armature;
  Span<const int> dof_joint;
  Span<const int> coupling_joint, coupling_leader;
  Span<const S> coupling_ratio, coupling_offset, coupling_ke, coupling_kd;
  Span<const int> shape_body, shape_type;
  Span<const vec3<S>> shape_pos;
  Span<const mat33<S>> shape_rot;
  Span<const vec3<S>> shape_size;
  Span<const int> shape_group, shape_mask;
  // mesh shapes' convex hulls (engine/model/rigid_mesh.h); empty without mesh shapes
  Span<const vec3<S>> hull_vertex;
  Span<const Idx3> hull_tri;
  Span<const vec3<S>> hull_normal;
  Span<const S> hull_offset;
  Span<const int> shape_hull_vertex_start, shape_hull_tri_start;
  Span<const int> actuator_dof, actuator_type;
  Span<const S> actuator_gear, actuator_kp, actuator_kd;
  Span<const vec3<S>> actuator_pos, actuator_axis;
  Span<const int> collider_type;
  Span<const vec3<S>> collider_pos;
  Span<const mat33<S>> collider_rot;
  Span<const vec3<S>> collider_size;
  Span<const int> collider_mesh_start, collider_mesh_count;
  Span<const vec3<S>> collider_mesh_vertices;
  Span<const Idx3> collider_mesh_tris;
  vec3<S> gravity;
  bool ground = true;
  S contact_ke = S(0), contact_kd = S(0), contact_kf = S(0), contact_mu = S(0), contact_eps = S(0);
  int contact_law = CONTACT_SMOOTH;
  bool body_contact = true;
  bool self_collision = false;
  // joint_q_start.back() and joint_dof_start.back(), kept as numbers: the host reads the
  // counts of a view whose spans point into device memory, which it cannot dereference
  int q_total = 0, dof_total = 0;

  ADJ_HD int body_count() const { return body_mass.size(); }
  ADJ_HD int q_count() const { return q_total; }
  ADJ_HD int dof_count() const { return dof_total; }
  ADJ_HD int shape_count() const { return shape_body.size(); }
  ADJ_HD int actuator_count() const { return actuator_dof.size(); }
  ADJ_HD int collider_count() const { return collider_type.size(); }
  ADJ_HD int coupling_count() const { return coupling_joint.size(); }
  ADJ_HD ParamRow param_row() const { return {body_count(), actuator_count(), dof_count()}; }
  ADJ_HD int param_count() const { return param_row().count(); }
};

// copies one array field between two models of one layout (host arrays -> spans, or spans
// over host arrays -> spans over a device copy: `map` turns a source span into a target span)
template <class S, class Map>
RigidViewT<S> map_rigid_view(const RigidViewT<S>& v, Map&& map) {
  RigidViewT<S> r = v;
  auto put = [&](auto& to, const auto& from) { to = map(from); };
  put(r.body_mass, v.body_mass);
  put(r.body_com, v.body_com);
  put(r.body_inertia, v.body_inertia);
  put(r.joint_type, v.joint_type);
  put(r.joint_parent, v.joint_parent);
  put(r.joint_pos, v.joint_pos);
  put(r.joint_rot, v.joint_rot);
  put(r.joint_axis, v.joint_axis);
  put(r.joint_q_start, v.joint_q_start);
  put(r.joint_dof_start, v.joint_dof_start);
  put(r.joint_lower, v.joint_lower);
  put(r.joint_upper, v.joint_upper);
  put(r.joint_limit_ke, v.joint_limit_ke);
  put(r.joint_limit_kd, v.joint_limit_kd);
  put(r.joint_stiffness, v.joint_stiffness);
  put(r.joint_spring_q, v.joint_spring_q);
  put(r.dof_damping, v.dof_damping);
  put(r.dof_armature, v.dof_armature);
  put(r.dof_joint, v.dof_joint);
  put(r.coupling_joint, v.coupling_joint);
  put(r.coupling_leader, v.coupling_leader);
  put(r.coupling_ratio, v.coupling_ratio);
  put(r.coupling_offset, v.coupling_offset);
  put(r.coupling_ke, v.coupling_ke);
  put(r.coupling_kd, v.coupling_kd);
  put(r.shape_body, v.shape_body);
  put(r.shape_type, v.shape_type);
  put(r.shape_pos, v.shape_pos);
  put(r.shape_rot, v.shape_rot);
  put(r.shape_size, v.shape_size);
  put(r.shape_group, v.shape_group);
  put(r.shape_mask, v.shape_mask);
  put(r.hull_vertex, v.hull_vertex);
  put(r.hull_tri, v.hull_tri);
  put(r.hull_normal, v.hull_normal);
  put(r.hull_offset, v.hull_offset);
  put(r.shape_hull_vertex_start, v.shape_hull_vertex_start);
  put(r.shape_hull_tri_start, v.shape_hull_tri_start);
  put(r.actuator_dof, v.actuator_dof);
  put(r.actuator_type, v.actuator_type);
  put(r.actuator_gear, v.actuator_gear);
  put(r.actuator_kp, v.actuator_kp);
  put(r.actuator_kd, v.actuator_kd);
  put(r.actuator_pos, v.actuator_pos);
  put(r.actuator_axis, v.actuator_axis);
  put(r.collider_type, v.collider_type);
  put(r.collider_pos, v.collider_pos);
  put(r.collider_rot, v.collider_rot);
  put(r.collider_size, v.collider_size);
  put(r.collider_mesh_start, v.collider_mesh_start);
  put(r.collider_mesh_count, v.collider_mesh_count);
  put(r.collider_mesh_vertices, v.collider_mesh_vertices);
  put(r.collider_mesh_tris, v.collider_mesh_tris);
  return r;
}

// a view over a host model's arrays (valid while the model lives and is not resized)
template <class S>
RigidViewT<S> make_rigid_view(const RigidModelT<S>& m) {
  RigidViewT<S> v;
  v.body_mass = m.body_mass;
  v.body_com = m.body_com;
  v.body_inertia = m.body_inertia;
  v.joint_type = m.joint_type;
  v.joint_parent = m.joint_parent;
  v.joint_pos = m.joint_pos;
  v.joint_rot = m.joint_rot;
  v.joint_axis = m.joint_axis;
  v.joint_q_start = m.joint_q_start;
  v.joint_dof_start = m.joint_dof_start;
  v.q_total = m.q_count();
  v.dof_total = m.dof_count();
  v.joint_lower = m.joint_lower;
  v.joint_upper = m.joint_upper;
  v.joint_limit_ke = m.joint_limit_ke;
  v.joint_limit_kd = m.joint_limit_kd;
  v.joint_limit_eps = m.joint_limit_eps;
  v.joint_stiffness = m.joint_stiffness;
  v.joint_spring_q = m.joint_spring_q;
  v.dof_damping = m.dof_damping;
  v.dof_armature = m.dof_armature;
  v.dof_joint = m.dof_joint;
  v.coupling_joint = m.coupling_joint;
  v.coupling_leader = m.coupling_leader;
  v.coupling_ratio = m.coupling_ratio;
  v.coupling_offset = m.coupling_offset;
  v.coupling_ke = m.coupling_ke;
  v.coupling_kd = m.coupling_kd;
  v.shape_body = m.shape_body;
  v.shape_type = m.shape_type;
  v.shape_pos = m.shape_pos;
  v.shape_rot = m.shape_rot;
  v.shape_size = m.shape_size;
  v.shape_group = m.shape_group;
  v.shape_mask = m.shape_mask;
  v.hull_vertex = m.hull_vertex;
  v.hull_tri = m.hull_tri;
  v.hull_normal = m.hull_normal;
  v.hull_offset = m.hull_offset;
  v.shape_hull_vertex_start = m.shape_hull_vertex_start;
  v.shape_hull_tri_start = m.shape_hull_tri_start;
  v.actuator_dof = m.actuator_dof;
  v.actuator_type = m.actuator_type;
  v.actuator_gear = m.actuator_gear;
  v.actuator_kp = m.actuator_kp;
  v.actuator_kd = m.actuator_kd;
  v.actuator_pos = m.actuator_pos;
  v.actuator_axis = m.actuator_axis;
  v.collider_type = m.collider_type;
  v.collider_pos = m.collider_pos;
  v.collider_rot = m.collider_rot;
  v.collider_size = m.collider_size;
  v.collider_mesh_start = m.collider_mesh_start;
  v.collider_mesh_count = m.collider_mesh_count;
  v.collider_mesh_vertices = m.collider_mesh_vertices;
  v.collider_mesh_tris = m.collider_mesh_tris;
  v.gravity = m.gravity;
  v.ground = m.ground;
  v.contact_ke = m.contact_ke;
  v.contact_kd = m.contact_kd;
  v.contact_kf = m.contact_kf;
  v.contact_mu = m.contact_mu;
  v.contact_eps = m.contact_eps;
  v.contact_law = m.contact_law;
  v.body_contact = m.body_contact;
  v.self_collision = m.self_collision;
  return v;
}

// the first mesh shape of a model, -1 if none (the CUDA backend refuses mesh shapes: their
// contact has not run on a device)
template <class S>
int rigid_first_mesh_shape(const RigidModelT<S>& m) {
  for (int s = 0; s < m.shape_count(); ++s)
    if (m.shape_type[s] == GEOM_MESH) return s;
  return -1;
}

// the first mesh collider, -1 if none (refused by the CUDA backend likewise)
template <class S>
int rigid_first_mesh_collider(const RigidModelT<S>& m) {
  for (int c = 0; c < m.collider_count(); ++c)
    if (m.collider_type[c] == GEOM_MESH) return c;
  return -1;
}

// bump allocation of spans from one block (base null: only measures the size)
struct ArenaCursor {
  char* base = nullptr;
  std::size_t offset = 0;
  template <class T>
  ADJ_HD Span<T> take(int count) {
    offset = (offset + alignof(T) - 1) / alignof(T) * alignof(T);
    Span<T> r(base ? reinterpret_cast<T*>(base + offset) : nullptr, count);
    offset += sizeof(T) * std::size_t(count > 0 ? count : 0);
    return r;
  }
};

}  // namespace adj::rigid
