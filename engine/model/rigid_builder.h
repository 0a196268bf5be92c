// RigidBuilder: how scene files and the editor build a robot. bodies are added parent
// first, each with the joint that attaches it; shapes give contact geometry and, with a
// density, mass and inertia; actuators drive one dof each. finalize() checks the tree and
// returns the model (or an error that names the body, joint or actuator).
//
//   RigidBuilder b;
//   int cart = b.add_body("cart", {.type = RIGID_JOINT_PRISMATIC, .axis = {1, 0, 0}});
//   b.add_shape(cart, {.type = GEOM_BOX, .size = {0.2, 0.1, 0.1}, .density = 100});
//   int pole = b.add_body("pole", {.type = RIGID_JOINT_REVOLUTE, .parent = cart, .axis = {0, 0, 1}});
//   b.set_mass(pole, 0.1, {0, 0.5, 0}, inertia);
//   b.add_actuator(cart, {.type = RIGID_ACTUATOR_TORQUE, .gear = 10});
//   Result<RigidModelT<double>> model = b.finalize<double>();
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_mesh.h"
#include "engine/model/rigid_model.h"

namespace adj {

struct RigidJointDesc {
  RigidJointType type = RIGID_JOINT_REVOLUTE;
  int parent = -1;                                          // parent body, -1 = world
  vec3<double> pos{};                                       // joint frame origin in the parent body frame [m]
  rigid::quat<double> rot{};                                // joint frame axes in the parent body frame
  vec3<double> axis{0, 0, 1};                               // revolute/prismatic axis in the joint frame (normalized)
  double lower = -std::numeric_limits<double>::infinity();  // limit [rad or m]
  double upper = std::numeric_limits<double>::infinity();
  double limit_ke = 0;   // limit penalty stiffness; 0 = no limit
  double limit_kd = 0;   // limit penalty damping
  double damping = 0;    // viscous damping on each dof
  double armature = 0;   // rotor inertia on each dof
  double stiffness = 0;  // spring -stiffness (q - spring_q) (revolute/prismatic) [N m/rad or N/m]
  double spring_q = 0;   // its rest coordinate [rad or m]
};

struct RigidShapeDesc {
  GeomType type = GEOM_SPHERE;
  vec3<double> pos{};                // in the body frame [m]
  rigid::quat<double> rot{};         // axes in the body frame
  vec3<double> size{0.1, 0.1, 0.1};  // sphere (r), box half-extents, capsule (r, half-height along y) [m];
                                     // mesh: unused (the model's shape_size is the mesh's bound)
  double density = 0;                // [kg/m^3]; > 0 adds the shape's mass and inertia to its body
                                     // (meshes: the solid a closed mesh bounds; an open mesh is an error)
  int group = 1, mask = -1;          // body-body contact filter (RigidModelT::shape_group/shape_mask)
  // mesh shapes: vertices [m] (before the scale) and counter-clockwise triangles in the shape
  // frame, the per-axis scale, and a name for messages (the file)
  std::vector<vec3<double>> mesh_vertices{};
  std::vector<Idx3> mesh_tris{};
  vec3<double> scale{1, 1, 1};
  std::string mesh_name{};
};

// a static collider that body shapes touch (engine/collision/geometry.h's GeomType)
struct RigidColliderDesc {
  int type = GEOM_PLANE;                      // GeomType: plane, sphere, box, capsule or mesh
  vec3<double> pos{};                         // centre (plane: a point on it), world [m]
  rigid::quat<double> rot{};                  // axes, world
  vec3<double> size{0, 1, 0};                 // plane: normal (normalized by finalize); sphere (r); box half extents;
                                              // capsule (r, half height along y) [m]; mesh: unused
  std::vector<vec3<double>> mesh_vertices{};  // mesh: world-space vertices [m] (pos and rot unused)
  std::vector<Idx3> mesh_tris{};              // mesh: vertex triples
};

struct RigidActuatorDesc {
  RigidActuatorType type = RIGID_ACTUATOR_TORQUE;
  int dof = 0;                 // dof within the joint (0 for revolute/prismatic)
  double gear = 1;             // torque actuators: torque = gear * act
  double kp = 0, kd = 0;       // PD actuators: kp (act - q) - kd qd; velocity: kd (act - qd)
                               // (revolute/prismatic only)
  vec3<double> pos{};          // thrust: point of application, body frame [m]
  vec3<double> axis{0, 1, 0};  // thrust: direction, body frame (normalized)
};

// joint `joint` follows ratio * q[leader] + offset through a spring-damper between the two
// coordinates (URDF <mimic>); both joints revolute or prismatic
struct RigidCouplingDesc {
  int joint = -1, leader = -1;  // bodies whose joints are coupled
  double ratio = 1, offset = 0;
  double ke = 1000, kd = 10;  // [N m/rad or N/m], [N m s/rad or N s/m]
};

class RigidBuilder {
 public:
  // a body attached by `joint`; returns its index (also its joint's index)
  int add_body(std::string name, const RigidJointDesc& joint);
  // given mass [kg], centre of mass [m] and inertia about it [kg m^2] (body frame); replaces
  // what shapes contributed. calls on a missing body are reported by finalize()
  void set_mass(int body, double mass, const vec3<double>& com, const mat33<double>& inertia);
  // mesh shapes are prepared here (welded, scaled, hull; mass when dense); their errors, naming
  // the shape, its body and mesh_name, are reported by finalize()
  int add_shape(int body, const RigidShapeDesc& shape);
  int add_actuator(int body, const RigidActuatorDesc& actuator);

  vec3<double> gravity{0, -9.81, 0};  // [m/s^2]
  bool ground = true;
  // contact law (engine/collision/contact_law.h's defaults)
  double contact_ke = kContactKe, contact_kd = kContactKd, contact_kf = kContactKf, contact_mu = kContactMu,
         contact_eps = kContactEps;
  int contact_law = 0;            // the ground's ContactLaw
  double joint_limit_eps = 0.01;  // [rad or m]
  bool body_contact = true;       // shapes of different bodies touch
  bool self_collision = false;    // bodies of one tree touch too (never a parent and its child)
  std::vector<RigidColliderDesc> colliders;
  std::vector<RigidCouplingDesc> couplings;

  int body_count() const { return int(bodies_.size()); }
  // the joint of a body added earlier, to adjust before finalize() (nullptr for no such body)
  RigidJointDesc* joint(int body) { return body >= 0 && body < body_count() ? &bodies_[body].joint : nullptr; }

  template <class S>
  Result<RigidModelT<S>> finalize() const;

 private:
  // finalize()'s parts, each checking and writing its arrays of m
  template <class S>
  Status finalize_bodies(RigidModelT<S>& m) const;
  template <class S>
  Status finalize_shapes(RigidModelT<S>& m) const;
  template <class S>
  Status finalize_colliders(RigidModelT<S>& m) const;
  template <class S>
  Status finalize_actuators(RigidModelT<S>& m) const;
  template <class S>
  Status finalize_couplings(RigidModelT<S>& m) const;

  struct Body {
    std::string name;
    RigidJointDesc joint;
    double mass = 0;                 // shape mass, accumulated
    vec3<double> moment{};           // sum of m c [kg m]
    mat33<double> inertia_origin{};  // about the body origin [kg m^2]
    bool given = false;
    double given_mass = 0;
    vec3<double> given_com{};
    mat33<double> given_inertia{};
  };
  std::vector<Body> bodies_;
  std::vector<RigidShapeDesc> shapes_;
  std::vector<RigidMeshGeometry> meshes_;  // per shape; prepared by add_shape for mesh shapes
  std::vector<int> shape_body_;
  std::vector<RigidActuatorDesc> actuators_;
  std::vector<int> actuator_body_;
  std::string error_;  // the first bad call, reported by finalize()
};

// empty when an inertia about the centre of mass is physical: symmetric, finite, principal
// moments >= 0 and each at most the sum of the other two (A + B >= C, with a relative slack of
// 1e-9); else why not
std::string rigid_inertia_problem(const mat33<double>& inertia);

// MuJoCo's compiler balanceinertia: an inertia that violates A + B >= C becomes isotropic
// with the same trace (each principal moment their mean); a physical one comes back as it is
mat33<double> rigid_balance_inertia(const mat33<double>& inertia);

// mass [kg] and inertia about the centre [kg m^2] (shape axes) of a solid primitive shape
// (mesh shapes: rigid_mesh_mass, whose centre of mass is not the shape origin)
void rigid_shape_mass(const RigidShapeDesc& shape, double& mass, mat33<double>& inertia);

}  // namespace adj
