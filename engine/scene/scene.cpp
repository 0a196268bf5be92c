#include "engine/scene/scene.h"

#include <string_view>

namespace adj::scene {

const Object* Scene::find(const std::string& object_name) const {
  for (const Object& o : objects)
    if (o.name == object_name) return &o;
  return nullptr;
}

const Task* Scene::find_task(const std::string& task_name) const {
  if (task_name.empty()) return tasks.empty() ? nullptr : &tasks.front();
  for (const Task& t : tasks)
    if (t.name == task_name) return &t;
  return nullptr;
}

const char* to_string(ObjectKind k) {
  switch (k) {
    case ObjectKind::particles:
      return "particles";
    case ObjectKind::cloth:
      return "cloth";
    case ObjectKind::soft:
      return "soft";
    case ObjectKind::collider:
      return "collider";
    case ObjectKind::target:
      return "target";
    case ObjectKind::robot:
      return "robot";
  }
  return "?";
}

const char* to_string(ColliderKind k) {
  switch (k) {
    case ColliderKind::ground:
      return "ground";
    case ColliderKind::plane:
      return "plane";
    case ColliderKind::sphere:
      return "sphere";
    case ColliderKind::box:
      return "box";
    case ColliderKind::capsule:
      return "capsule";
    case ColliderKind::mesh:
      return "mesh";
  }
  return "?";
}

const char* to_string(ParamKind k) {
  switch (k) {
    case ParamKind::initial_position:
      return "initial_position";
    case ParamKind::initial_velocity:
      return "initial_velocity";
    case ParamKind::control_force:
      return "control_force";
    case ParamKind::spring_activation:
      return "spring_activation";
    case ParamKind::policy:
      return "policy";
    case ParamKind::tet_activation:
      return "tet_activation";
    case ParamKind::joint_q:
      return "joint_q";
    case ParamKind::joint_qd:
      return "joint_qd";
    case ParamKind::actuator_control:
      return "actuator_control";
#define ADJ_X(decl, kind, ...) ADJ_FIELD_DECLARES_##decl(case ParamKind::kind : return #kind;)
      ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  }
  return "?";
}

const char* label(ParamKind k) {
  switch (k) {
    case ParamKind::initial_position:
      return "initial position";
    case ParamKind::initial_velocity:
      return "initial velocity";
    case ParamKind::control_force:
      return "control force";
    case ParamKind::spring_activation:
      return "spring activation";
    case ParamKind::policy:
      return "policy";
    case ParamKind::tet_activation:
      return "tet activation";
    case ParamKind::joint_q:
      return "initial joint angles";
    case ParamKind::joint_qd:
      return "initial joint velocities";
    case ParamKind::actuator_control:
      return "actuator inputs (per frame)";
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, doc, label, ...) \
  ADJ_FIELD_DECLARES_##decl(case ParamKind::kind : return label;)
      ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  }
  return "?";
}

bool is_per_frame(ParamKind k) {
  return k == ParamKind::control_force || k == ParamKind::spring_activation || k == ParamKind::tet_activation ||
         k == ParamKind::actuator_control;
}

bool is_scene_wide(ParamKind k) {
  if (k == ParamKind::policy) return true;
#define ADJ_X(decl, kind, field, side, domain, ...) \
  ADJ_FIELD_DECLARES_##decl(if (k == ParamKind::kind) return std::string_view(#domain) == "scene";)
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  return false;
}

bool is_robot_param(ParamKind k) {
  if (k == ParamKind::joint_q || k == ParamKind::joint_qd || k == ParamKind::actuator_control) return true;
#define ADJ_X(decl, kind, field, side, ...) \
  ADJ_FIELD_DECLARES_##decl(if (k == ParamKind::kind) return std::string_view(#side) == "robot";)
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  return false;
}

const char* to_string(LossKind k) {
  switch (k) {
    case LossKind::position:
      return "position";
    case LossKind::distance:
      return "distance";
    case LossKind::shape:
      return "shape";
    case LossKind::velocity:
      return "velocity";
    case LossKind::effort:
      return "effort";
    case LossKind::joint:
      return "joint";
    case LossKind::cartpole:
      return "cartpole";
    case LossKind::height:
      return "height";
    case LossKind::upright:
      return "upright";
    case LossKind::speed:
      return "speed";
    case LossKind::reach:
      return "reach";
    case LossKind::forward_velocity:
      return "forward_velocity";
    case LossKind::up_projection:
      return "up_projection";
    case LossKind::heading:
      return "heading";
    case LossKind::height_reward:
      return "height_reward";
    case LossKind::alive:
      return "alive";
  }
  return "?";
}

const char* to_string(ObservationKind k) {
  switch (k) {
    case ObservationKind::height:
      return "height";
    case ObservationKind::orientation:
      return "orientation";
    case ObservationKind::velocity:
      return "velocity";
    case ObservationKind::angular_velocity:
      return "angular_velocity";
    case ObservationKind::joint_positions:
      return "joint_positions";
    case ObservationKind::joint_velocities:
      return "joint_velocities";
    case ObservationKind::up_projection:
      return "up_projection";
    case ObservationKind::heading_projection:
      return "heading_projection";
    case ObservationKind::previous_action:
      return "previous_action";
    case ObservationKind::object_position:
      return "object_position";
    case ObservationKind::object_velocity:
      return "object_velocity";
  }
  return "?";
}

const char* to_string(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::sgd:
      return "sgd";
    case OptimizerKind::adam:
      return "adam";
  }
  return "?";
}

const char* to_string(RobotJointKind k) {
  static const char* names[] = {"revolute", "prismatic", "ball", "free", "fixed"};
  return names[int(k)];
}

const char* to_string(RobotShapeKind k) {
  static const char* names[] = {"sphere", "box", "capsule", "mesh"};
  return names[int(k)];
}

const char* to_string(RobotActuatorKind k) {
  static const char* names[] = {"torque", "pd", "thrust"};
  return names[int(k)];
}

}  // namespace adj::scene
