// MJCF import (MuJoCo's XML, read with tinyxml2): appends the bodies, joints, shapes and
// actuators of a model to a RigidBuilder, and says how MuJoCo's coordinates map to the
// engine's (MujocoLayout, for engine/io/mujoco_dynamics.h).
//
// supported:
//   <include file> (anywhere; relative to the main file), <compiler angle, eulerseq,
//   inertiafromgeom, balanceinertia, meshdir, autolimits, settotalmass; coordinate="local" only>, <option
//   timestep, gravity>, <default> classes (nested, `class`, `childclass`), <asset><mesh file
//   scale> (OBJ, STL), <worldbody> with bodies (pos; quat, axisangle, euler, xyaxes or zaxis),
//   joints (hinge, slide, ball, free and <freejoint>; pos, axis, range, limited, ref,
//   springref, stiffness, damping, armature), <inertial> (mass, pos, orientation,
//   diaginertia or fullinertia) or inertia from the geoms (density or mass), geoms (sphere,
//   capsule, cylinder, box, ellipsoid, mesh, plane; fromto), <actuator> motor (gear,
//   ctrlrange, ctrllimited), position (kp, kv), velocity (kv) on joints.
// how it maps:
//   - a body with several joints becomes a chain of engine bodies, one per joint; the last
//     carries the body's name, mass, shapes and children, the others are massless and named
//     "<body>/<joint>". a body without joints hangs by a fixed joint.
//   - engine q = MuJoCo qpos - ref (hinge, slide): a body sits as written at q = 0.
//   - geoms give mass and inertia with MuJoCo's formulas (exact solids); contact shapes: sphere,
//     box, capsule, mesh (its convex hull), cylinder as a 24-sided prism (rigid_cylinder.h;
//     flat faces stand, the rim rolls); an ellipsoid touches as a sphere of its largest radius
//     (warned); geoms
//     with contype = conaffinity = 0 are not contact shapes. contype/conaffinity -> group/mask.
//   - worldbody geoms (plane, sphere, box, capsule; cylinder as a capsule, warned) become static
//     colliders.
//   - position servos -> PD actuators (kp gear^2 kp, kd gear^2 kv, act = ctrl/gear - ref),
//     velocity servos -> velocity actuators (kd gear^2 kv, act = ctrl/gear); the control map
//     (and ctrlrange) is in the layout. ctrlrange is not applied by the engine's step.
//   - joint limits become the engine's limit penalty (options.limit_ke, limit_kd).
//   - MjcfOptions can replace the file's density, joint damping/armature/stiffness defaults and
//     add limits to unlimited hinges (the way dflex reads DiffRL's locomotion robots).
// anything else (sites, cameras, lights, tendons, equality, sensors, textures, frictionloss,
// forcerange, other actuators...) is skipped with a warning that names the file and line.
// errors name the file, the line and the XML element.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/io/mujoco_dynamics.h"
#include "engine/model/rigid_builder.h"

namespace adj {

struct MjcfOptions {
  vec3<double> position{};  // placement of the model's world frame [m]
  rigid::quat<double> rotation{};
  bool world_geoms = true;  // worldbody geoms -> static colliders (a scene has its own ground: false)
  bool actuators = true;    // the file's actuators
  double limit_ke = 1000;   // penalty on limited joints (0 = ignore the limits)
  double limit_kd = 10;
  bool balance_inertia = false;  // as <compiler balanceinertia="true">: an inertia that violates
                                 // A + B >= C is made isotropic with the same trace (a warning)
  // reading choices that replace the file's own (how other simulators read a file: dflex reads
  // DiffRL's robots so). unset: as MuJoCo reads it
  double density = 0;                                // > 0: every geom's density [kg/m^3]; the file's density
                                                     // attributes, <default>s and compiler settotalmass are
                                                     // ignored (a geom's mass wins)
  std::optional<double> joint_damping;               // set: the damping of every joint whose <joint> element
  std::optional<double> joint_armature;              // does not state it itself (its <default> class ignored);
  std::optional<double> joint_stiffness;             // likewise armature and stiffness
  std::optional<std::array<double, 2>> hinge_range;  // set: the limits [rad] of every hinge the file
                                                     // leaves unlimited (penalty limit_ke, limit_kd)
};

struct MjcfImport {
  std::vector<int> bodies;            // builder body index of each body added, in order
  std::vector<std::string> names;     // their names
  std::vector<int> actuators;         // builder actuator indices added
  MujocoLayout layout;                // MuJoCo's joints and actuators over those bodies
  vec3<double> gravity{0, 0, -9.81};  // <option gravity> [m/s^2]
  double timestep = 0.002;            // <option timestep> [s]
  // the file's initial qpos (MuJoCo's order and units, layout.joints' coordinates in turn): its
  // first <keyframe><key qpos>, else <custom><numeric name="init_qpos"> (Gymnasium, DiffRL);
  // empty when it has neither (qpos0: every coordinate at its ref)
  std::vector<double> qpos0;
  std::vector<std::string> warnings;  // what was skipped or approximated, with file and line
};

Result<MjcfImport> rigid_import_mjcf(const std::string& path, RigidBuilder& builder, const MjcfOptions& options = {});

}  // namespace adj
