// a rigid model's dynamics at one state, in MuJoCo's coordinates and names (what
// `adjoint dynamics` prints), so that Adjoint can be held against MuJoCo's mj_forward:
//   qpos  hinge/slide: the coordinate (MuJoCo's, which starts at the joint's ref); ball:
//         quaternion (w, x, y, z); free: position and quaternion (w first), world frame
//   qvel  hinge/slide: the rate; ball: angular velocity, body frame; free: linear velocity of
//         the body origin in the world frame, then angular velocity in the body frame
// the engine's free joint keeps the same velocities, its position and linear velocity in the
// joint frame (rigid_model.h): qd_engine = T qvel with T = RJ^T on the linear block (the
// identity for an unrotated joint frame), and every force f and the mass matrix M come back as
// T^T f and T^T M T. bodies joined by fixed joints
// act as one (MuJoCo fuses them), so fixed joints have no entry.
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_model.h"

namespace adj {

// one MuJoCo joint: the engine body whose joint it is, and MuJoCo's qpos0 of a hinge or
// slide (its `ref`): engine q = qpos - ref
struct MujocoJointMap {
  std::string name;
  int body = -1;
  double ref = 0;
};

// one MuJoCo actuator: engine act = scale * ctrl + offset, with ctrl first clamped to
// [ctrl_lower, ctrl_upper] when ctrl_limited (as MuJoCo clamps it)
struct MujocoActuatorMap {
  std::string name;
  int actuator = -1;
  double scale = 1, offset = 0;
  bool ctrl_limited = false;
  double ctrl_lower = 0, ctrl_upper = 0;
};

// MuJoCo's joints (in its order: bodies depth first, a body's joints in file order) and
// actuators over an engine model
struct MujocoLayout {
  std::vector<MujocoJointMap> joints;
  std::vector<MujocoActuatorMap> actuators;
};

// every joint with coordinates in body order (refs 0, named as their bodies) and every
// actuator as it is: the layout of a URDF or a scene
MujocoLayout mujoco_layout_of(const RigidModelT<double>& model);

struct DynamicsOptions {
  bool contact = true;   // contact forces of the model's ground, colliders and body pairs (qfrc_contact)
  bool limits = true;    // the engine's joint limit penalties (qfrc_limit)
  bool equality = true;  // the engine's joint couplings (URDF mimic; qfrc_equality)
};

// the dynamics at one state, MuJoCo's names; forces are generalized forces (nv)
struct MujocoDynamics {
  int nq = 0, nv = 0, nu = 0;
  std::vector<std::string> joint_names;  // (joints)
  std::vector<std::string> joint_types;  // "hinge", "slide", "ball", "free"
  std::vector<int> joint_qposadr, joint_dofadr;
  std::vector<double> qM;             // mass matrix with armature, row-major (nv x nv)
  std::vector<double> qfrc_bias;      // Coriolis, centrifugal and gravity forces
  std::vector<double> qfrc_passive;   // joint damping and stiffness
  std::vector<double> qfrc_actuator;  // actuator forces
  std::vector<double> qfrc_limit;     // the engine's limit penalties (MuJoCo: a constraint force; 0 with limits off)
  std::vector<double> qfrc_equality;  // the engine's joint coupling springs (MuJoCo: an equality constraint force)
  std::vector<double> qfrc_contact;   // the engine's penalty contact (MuJoCo: a constraint force; 0 with contact off)
  std::vector<double> qacc;           // qM^-1 (passive + actuator + limit + equality + contact - bias)
  double total_mass = 0;        // of the bodies that move (MuJoCo's: what is welded to the world is not counted) [kg]
  std::vector<double> gravity;  // (3) [m/s^2]
};

// errors: a qpos/qvel/ctrl of the wrong length (naming the counts), a zero quaternion, a free
// joint below another body, a model whose mass matrix is not positive definite
Result<MujocoDynamics> mujoco_dynamics(const RigidModelT<double>& model, const MujocoLayout& layout,
                                       const std::vector<double>& qpos, const std::vector<double>& qvel,
                                       const std::vector<double>& ctrl, const DynamicsOptions& options = {});

// a robot file as MuJoCo would load it for mj_forward: a URDF (root link welded to the
// world, no actuators, gravity -z, limits as the engine's penalty) or an MJCF file (its
// option gravity, worldbody geoms as colliders, its actuators); no ground plane beyond the
// file's own. warnings: what the importer skipped or approximated, located. An inertia that no
// rigid body has (A + B < C) is balanced with a warning naming its element, as the editor's
// import does (MuJoCo refuses it unless <compiler balanceinertia="true">)
struct RobotFileModel {
  RigidModelT<double> model;
  MujocoLayout layout;
  double timestep = 0.002;  // MJCF <option timestep>; URDF: MuJoCo's default
  std::vector<std::string> warnings;
};
// by the extension: .urdf, or .xml / .mjcf
Result<RobotFileModel> load_robot_file(const std::string& path);

// the unit quaternion (w, x, y, z) of a rotation matrix
rigid::quat<double> rigid_matrix_quat(const mat33<double>& R);

// MuJoCo's qpos0 of the layout: refs, identity quaternions, a free joint's frame as placed
std::vector<double> mujoco_qpos0(const RigidModelT<double>& model, const MujocoLayout& layout);

}  // namespace adj
