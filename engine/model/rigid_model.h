// articulated rigid bodies in generalized coordinates: RigidModel (tree of bodies and
// joints, shapes, actuators, contact parameters), State (joint_q, joint_qd), Control
// (actuator inputs), RigidModelGrad (gradients of the differentiable parameters) and the
// contacts and joint reaction forces of a state, for drawing.
//
// body i hangs from its parent through joint i (bodies are stored parent before child);
// the body frame is the joint frame after the joint's motion. coordinates per joint type:
//   revolute   q: angle [rad]                      qd: angular rate [rad/s]
//   prismatic  q: offset [m]                       qd: rate [m/s]
//   ball       q: quaternion (w, x, y, z)          qd: angular velocity, body frame [rad/s]
//   free       q: position [m] (parent joint frame), quaternion (w, x, y, z)
//              qd: linear velocity of the body origin in the parent joint frame (so the
//              position's rate), then angular velocity in the body frame (MuJoCo's convention:
//              a body spinning in free flight keeps its linear velocity under explicit steps)
//   fixed      no coordinates
#pragma once

#include <string>

#include "engine/collision/contact_law.h"
#include "engine/collision/geometry.h"
#include "engine/core/array.h"
#include "engine/core/math.h"
#include "engine/core/spatial.h"
#include "engine/model/state.h"

namespace adj {

enum RigidJointType {
  RIGID_JOINT_REVOLUTE,
  RIGID_JOINT_PRISMATIC,
  RIGID_JOINT_BALL,
  RIGID_JOINT_FREE,
  RIGID_JOINT_FIXED
};
// torque: gear * act on the dof; pd: kp (act - q) - kd qd; thrust: a force gear * act along
// a body-fixed axis at a body-fixed point of the body (rotors; the dof only names the body);
// velocity: kd (act - qd) (MuJoCo's velocity servo, revolute/prismatic)
enum RigidActuatorType { RIGID_ACTUATOR_TORQUE, RIGID_ACTUATOR_PD, RIGID_ACTUATOR_THRUST, RIGID_ACTUATOR_VELOCITY };

// coordinates and degrees of freedom of a joint type
ADJ_HD inline int rigid_joint_q_count(int type) {
  return type == RIGID_JOINT_FREE ? 7 : type == RIGID_JOINT_BALL ? 4 : type == RIGID_JOINT_FIXED ? 0 : 1;
}
ADJ_HD inline int rigid_joint_dof_count(int type) {
  return type == RIGID_JOINT_FREE ? 6 : type == RIGID_JOINT_BALL ? 3 : type == RIGID_JOINT_FIXED ? 0 : 1;
}
// the leading dofs whose motion is along axes fixed in the parent (the free joint's
// translations); every other dof's axis moves with the child body
ADJ_HD inline int rigid_joint_parent_dofs(int type) { return type == RIGID_JOINT_FREE ? 3 : 0; }

// gradients of the differentiable parameters (the same names as in RigidModelT)
template <class S>
struct RigidModelGradT {
  Array<S> body_mass;     // dL/d body mass (inertia scales with it), (body_count)
  Array<S> actuator_kp;   // (actuator_count)
  Array<S> actuator_kd;   // (actuator_count)
  Array<S> dof_damping;   // (dof_count)
  Array<S> dof_armature;  // (dof_count)
  S contact_ke = 0, contact_kd = 0, contact_mu = 0;
  vec3<S> gravity;  // dL/d gravity (the bodies'; a scene's gravity also moves its particles)
};

// contacts and joint reaction forces of one state, for drawing. each contact acts on `body`
// (shape `shape`) from the ground, a static collider or another body (other_body, other_shape;
// that body feels -force at the same point)
template <class S>
struct RigidContactsT {
  Array<vec3<S>> point;         // contact point [m] (ground: on the body surface; bodies and colliders:
                                // midway between the two surfaces), (contact_count)
  Array<vec3<S>> normal;        // unit normal pointing from the other side into the body, (contact_count)
  Array<vec3<S>> force;         // force on the body [N], (contact_count)
  Array<int> body;              // body index, (contact_count)
  Array<int> shape;             // shape index, (contact_count)
  Array<int> other_body;        // the other body, -1 = ground or static collider, (contact_count)
  Array<int> other_shape;       // its shape, -1 = ground or static collider, (contact_count)
  Array<int> collider;          // static collider index, -1 = ground or a body, (contact_count)
  Array<vec3<S>> joint_point;   // joint anchor, world [m], (body_count)
  Array<vec3<S>> joint_force;   // force of the parent on the child across the joint [N], (body_count)
  Array<vec3<S>> joint_torque;  // its moment about the anchor [N m], (body_count)
  int contact_count() const { return int(point.size()); }
};

namespace rigid {
// contacts between bodies and particles of one state, for drawing and tests
template <class S>
struct CouplingContactsT {
  Array<vec3<S>> point;   // contact point [m], (contact_count)
  Array<vec3<S>> normal;  // unit normal out of the body shape, toward the particle, (contact_count)
  Array<vec3<S>> force;   // force on the particle [N] (the body feels -force), (contact_count)
  Array<int> particle;    // (contact_count)
  Array<int> body;        // (contact_count)
  Array<int> shape;       // (contact_count)
  int contact_count() const { return int(point.size()); }
};

}  // namespace rigid

// where each differentiable parameter of a rigid model starts in a packed row (the order of
// rigid::ParamsT, engine/articulation/rigid_dynamics.h): body_mass, actuator_kp, actuator_kd,
// dof_damping, dof_armature, then the scalars (contact ke, kd, mu and gravity's x, y, z)
struct ParamRow {
  int nb, na, nv;  // bodies, actuators, dofs
  static constexpr int kScalars = 6;
  ADJ_HD int actuator_kp() const { return nb; }
  ADJ_HD int actuator_kd() const { return nb + na; }
  ADJ_HD int dof_damping() const { return nb + 2 * na; }
  ADJ_HD int dof_armature() const { return nb + 2 * na + nv; }
  ADJ_HD int scalars() const { return nb + 2 * na + 2 * nv; }
  ADJ_HD int count() const { return scalars() + kScalars; }
};

template <class S>
struct RigidModelT {
  // bodies
  Array<std::string> body_name;  // (body_count)
  Array<S> body_mass;            // [kg], (body_count)
  Array<vec3<S>> body_com;       // centre of mass in the body frame [m], (body_count)
  Array<mat33<S>> body_inertia;  // inertia about the com, body axes [kg m^2], (body_count)

  // joints: joint i connects body joint_parent[i] (-1 = world) to body i
  Array<int> joint_type;              // RigidJointType, (body_count)
  Array<int> joint_parent;            // parent body, (body_count)
  Array<vec3<S>> joint_pos;           // joint frame origin in the parent body frame [m], (body_count)
  Array<mat33<S>> joint_rot;          // joint frame axes in the parent body frame, (body_count)
  Array<vec3<S>> joint_axis;          // unit axis in the joint frame (revolute/prismatic), (body_count)
  Array<int> joint_q_start;           // first coordinate in State::joint_q, (body_count + 1)
  Array<int> joint_dof_start;         // first dof in State::joint_qd, (body_count + 1)
  Array<S> joint_lower, joint_upper;  // limits [rad or m] (revolute/prismatic), (body_count)
  Array<S> joint_limit_ke;            // limit penalty stiffness [N m/rad or N/m], (body_count)
  Array<S> joint_limit_kd;            // limit penalty damping [N m s/rad or N s/m], (body_count)
  S joint_limit_eps = S(0.01);        // width of the C1 ramp of the limit penalty [rad or m]
  Array<S> joint_stiffness;  // spring -k (q - joint_spring_q) [N m/rad or N/m] (revolute/prismatic), (body_count)
  Array<S> joint_spring_q;   // the spring's rest coordinate [rad or m], (body_count)
  Array<S> dof_damping;      // viscous joint damping [N m s/rad or N s/m], (dof_count)
  Array<S> dof_armature;     // rotor inertia added to the mass matrix diagonal, (dof_count)
  Array<int> dof_joint;      // joint of each dof, (dof_count)

  // joint couplings (URDF <mimic>): joint coupling_joint[c] follows coupling_ratio[c] *
  // q[leader] + coupling_offset[c] through a spring-damper between the two coordinates that
  // pushes both (revolute/prismatic joints)
  Array<int> coupling_joint;   // the follower, (coupling_count)
  Array<int> coupling_leader;  // (coupling_count)
  Array<S> coupling_ratio;     // (coupling_count)
  Array<S> coupling_offset;    // [rad or m], (coupling_count)
  Array<S> coupling_ke;        // [N m/rad or N/m], (coupling_count)
  Array<S> coupling_kd;        // [N m s/rad or N s/m], (coupling_count)

  // collision shapes (against the ground, static colliders and the shapes of other bodies)
  Array<int> shape_body;      // (shape_count)
  Array<int> shape_type;      // GeomType (sphere, box, capsule, mesh), (shape_count)
  Array<vec3<S>> shape_pos;   // in the body frame [m], (shape_count)
  Array<mat33<S>> shape_rot;  // axes in the body frame, (shape_count)
  Array<vec3<S>> shape_size;  // sphere (r), box half-extents, capsule (r, half-height along y),
                              // mesh (bounding radius about the shape origin, 0, 0) [m]
  // body-body contact filter: shapes a and b touch if (group_a & mask_b) and (group_b & mask_a)
  // (MuJoCo's contype/conaffinity); empty = group 1, mask all
  Array<int> shape_group;  // (shape_count)
  Array<int> shape_mask;   // (shape_count)
  // triangle meshes of mesh shapes, in the shape frame with the scale applied; the contact
  // geometry is their convex hull, at most kRigidMeshHullCap vertices (engine/model/rigid_mesh.h).
  // shapes of other types have empty ranges; a model without mesh shapes may leave all empty
  Array<vec3<S>> mesh_vertex;          // [m], (mesh_vertex_count)
  Array<Idx3> mesh_tri;                // indices into mesh_vertex, counter-clockwise seen from outside
  Array<int> shape_mesh_tri_start;     // first triangle of each shape in mesh_tri, (shape_count + 1)
  Array<vec3<S>> hull_vertex;          // hull vertices = contact samples of radius 0 [m]
  Array<Idx3> hull_tri;                // hull faces, indices into hull_vertex, outward
  Array<vec3<S>> hull_normal;          // unit outward normal of each hull face, (hull_tri_count)
  Array<S> hull_offset;                // plane offset: dot(hull_normal, x) = hull_offset on the face [m]
  Array<int> shape_hull_vertex_start;  // first hull vertex of each shape, (shape_count + 1)
  Array<int> shape_hull_tri_start;     // first hull face of each shape, (shape_count + 1)

  // actuators on one dof each
  Array<int> actuator_dof;       // (actuator_count)
  Array<int> actuator_type;      // RigidActuatorType, (actuator_count)
  Array<S> actuator_gear;        // torque = gear * act (torque actuators), (actuator_count)
  Array<S> actuator_kp;          // PD stiffness [N m/rad or N/m], (actuator_count)
  Array<S> actuator_kd;          // PD damping [N m s/rad or N s/m], (actuator_count)
  Array<vec3<S>> actuator_pos;   // thrust: point of application, body frame [m], (actuator_count)
  Array<vec3<S>> actuator_axis;  // thrust: unit direction, body frame, (actuator_count)

  // static colliders that body shapes touch (engine/collision/geometry.h's ShapeRef)
  Array<int> collider_type;      // GeomType (plane, sphere, box, capsule, mesh), (collider_count)
  Array<vec3<S>> collider_pos;   // centre (plane: a point on it), world [m], (collider_count)
  Array<mat33<S>> collider_rot;  // axes, world, (collider_count)
  Array<vec3<S>> collider_size;  // plane: unit normal; sphere (r); box half extents; capsule (r, half height
                                 // along y) [m], (collider_count)
  // mesh colliders' triangles (bodies' spheres and capsules touch them: engine/collision/pairs.h)
  Array<int> collider_mesh_start;         // first triangle in collider_mesh_tris, (collider_count)
  Array<int> collider_mesh_count;         // triangle count, 0 but for meshes, (collider_count)
  Array<vec3<S>> collider_mesh_vertices;  // world-space vertices [m]
  Array<Idx3> collider_mesh_tris;         // vertex triples

  // world
  vec3<S> gravity{S(0), S(-9.81), S(0)};  // [m/s^2]
  bool ground = true;                     // plane through the origin with normal +y
  // contact law (engine/collision/contact_law.h; its defaults)
  S contact_ke = S(kContactKe);    // normal stiffness [N/m]
  S contact_kd = S(kContactKd);    // normal damping [N s/m]
  S contact_kf = S(kContactKf);    // friction slope [N s/m]; 0 = off
  S contact_mu = S(kContactMu);    // Coulomb coefficient
  S contact_eps = S(kContactEps);  // friction smoothing width around zero slip [m/s]
  int contact_law = 0;             // the ground's ContactLaw (colliders, pairs: smooth)
  bool body_contact = true;        // shapes of different bodies touch (filtered as above)
  bool self_collision = false;     // bodies of one tree touch too (never a parent and its child)

  int body_count() const { return int(body_mass.size()); }
  int q_count() const { return joint_q_start.empty() ? 0 : joint_q_start.back(); }
  int dof_count() const { return joint_dof_start.empty() ? 0 : joint_dof_start.back(); }
  int shape_count() const { return int(shape_body.size()); }
  int actuator_count() const { return int(actuator_dof.size()); }
  int collider_count() const { return int(collider_type.size()); }
  int coupling_count() const { return int(coupling_joint.size()); }
  // differentiable parameters: masses, PD gains, joint damping and armature, contact ke/kd/mu,
  // gravity (ParamRow's packing)
  ParamRow param_row() const { return {body_count(), actuator_count(), dof_count()}; }
  int param_count() const { return param_row().count(); }

  // a state at the rest configuration (zero angles, identity quaternions)
  // (joint arrays only; ModelT::make_state gives the whole world's)
  StateT<S> make_state() const;
  ControlT<S> make_control() const {
    ControlT<S> c;
    c.joint_act.assign(actuator_dof.size(), S(0));
    return c;
  }
  RigidModelGradT<S> make_grad() const;
  // "joint 3 (knee)" for messages
  std::string joint_label(int joint) const;
};

using RigidModel = RigidModelT<float>;

}  // namespace adj
