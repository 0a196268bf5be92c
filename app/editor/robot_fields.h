#pragma once
// The editable fields of robot objects beyond the fixed ones of fields.cpp (placement, URDF
// options): per body (joint, limits, damping, armature, mass and inertia), per actuator
// (gains, dof) and each joint's initial coordinate and velocity, addressed by path:
//   <robot>.q.<body>                 initial coordinate of the body's joint [rad or m]
//   <robot>.qd.<body>                initial velocity [rad/s or m/s]   (1-coordinate joints)
//   <robot>.bodies.<body>.<field>    robots listed body by body (URDF bodies live in the file)
//   <robot>.actuators[i].<field>     the robot's listed actuators
// set_by_path / get_by_path (fields.h) reach them; the inspector (robot_ui.cpp) draws them.
#include <span>
#include <string>

#include "app/editor/fields.h"

namespace adj::editor {

// fields of a listed robot's body, and the value of one of them inside a body
std::span<const Field> robot_body_fields();
void* robot_body_value(scene::RobotBody& body, const Field& field);
// fields of a robot actuator
std::span<const Field> robot_actuator_fields();
void* robot_actuator_value(scene::RobotActuator& actuator, const Field& field);

// the initial coordinates of a body's joint in the document (null when the document gives none:
// the joint starts at rest); `create` adds an entry with `q_count` zeros
std::vector<double>* robot_initial(scene::RobotObject& robot, const std::string& body, bool velocity, bool create,
                                   int count);

struct RobotFieldRef {
  const Field* field = nullptr;
  void* value = nullptr;
  int component = -1;  // vec3 component, -1: whole
};
// `rest` is the path after "<robot>."; errors name it. May add an initial entry to `object`.
Result<RobotFieldRef> resolve_robot_field(scene::Object& object, const std::string& rest);

}  // namespace adj::editor
