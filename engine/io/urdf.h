// URDF import: appends a robot described by a URDF file to a RigidBuilder. links become
// bodies (named as the links, parent before child, siblings in the file order of their
// joints, as MuJoCo orders them), joints their joints:
//   revolute, continuous -> revolute; prismatic -> prismatic; fixed -> fixed;
//   floating -> free; pybullet's spherical -> ball; planar -> an error naming the joint.
// pybullet's <capsule radius length> (length between the cap centres) is a capsule. xacro files
// are refused (expand them with ROS's xacro first); malformed XML is an error with its line.
// inertial -> mass, com and inertia; collision geometry (or the visual one when a link has
// no collision) -> shapes: box, sphere, cylinder -> capsule of the same radius and overall
// length (axis z turned to the capsule's y), or with UrdfOptions::cylinder_segments a prism
// that touches as a cylinder, mesh -> a mesh shape (OBJ, STL or Collada .dae, with its scale;
// engine/model/rigid_mesh.h; its mass comes from <inertial>, so it need not be closed).
// visual geometry is used only by links without collision geometry. mesh filenames:
// package://pkg/rest is looked up as <dir>/pkg/rest, then <dir>/rest, for the URDF's directory
// and each parent in turn; file:///abs is absolute; others are relative to the URDF. limits and
// dynamics damping come across; <mimic> becomes a coupling spring (RigidCouplingDesc) of the
// joint to its leader (multiplier, offset; UrdfOptions::mimic_ke, mimic_kd); the root link hangs from the world by a
// fixed joint or, with fixed_base = false, a free joint at the placement.
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_builder.h"

namespace adj {

struct UrdfOptions {
  vec3<double> position{};  // root placement in the world [m]
  rigid::quat<double> rotation{};
  bool fixed_base = true;  // false: free joint on the root link
  double limit_ke = 1000;  // penalty on URDF joint limits (0 = ignore the limits)
  double limit_kd = 10;
  bool default_actuators = true;  // one per revolute/prismatic joint, in body order
  double mimic_ke = 1000;         // <mimic> joints: coupling spring to their leader (0 = ignore <mimic>)
  double mimic_kd = 10;           // and its damping
  int cylinder_segments = 0;      // > 2: cylinders touch as prisms of this many sides (rigid_cylinder.h);
                                  // 0: as capsules of the same radius and length (as before)
  RigidActuatorDesc actuator{};   // kind and gains of those actuators
  bool balance_inertia = false;   // an <inertial> that violates A + B >= C is made isotropic with
                                  // the same trace, with a warning (MuJoCo's balanceinertia);
                                  // false: refused
};

struct UrdfImport {
  std::vector<int> bodies;            // builder body index of each link, in the order added
  std::vector<std::string> links;     // their names
  std::vector<std::string> joints;    // the URDF joint attaching each ("" for the root)
  std::vector<double> effort;         // that joint's <limit effort> [N m or N]; 0 when none is given
  std::vector<int> actuators;         // builder actuator indices added
  std::vector<std::string> warnings;  // what was ignored (mimic joints, joint friction), naming the element
};

// errors name the file and the link (and its collision/visual element and mesh file) or joint;
// an inertial whose principal moments violate A + B >= C is refused (as MuJoCo refuses it),
// or balanced with a warning (UrdfOptions::balance_inertia)
Result<UrdfImport> rigid_import_urdf(const std::string& path, RigidBuilder& builder, const UrdfOptions& options = {});
// the same from URDF text; `source` names it in messages, and its directory is where relative
// mesh filenames start
Result<UrdfImport> rigid_import_urdf_string(const std::string& xml, const std::string& source, RigidBuilder& builder,
                                            const UrdfOptions& options = {});

}  // namespace adj
