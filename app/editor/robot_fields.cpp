#include "app/editor/robot_fields.h"

#include <cstdlib>
#include <limits>

namespace adj::editor {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

const Field k_body[] = {
    {"damping", FieldType::number, 0.001f, 0, 1e6, "N m s/rad (prismatic: N s/m), per dof", nullptr, nullptr, {}},
    {"armature", FieldType::number, 0.001f, 0, 1e6, "kg m^2, rotor inertia per dof", nullptr, nullptr, {}},
    {"lower", FieldType::number, 0.01f, -k_inf, k_inf, "rad or m (joint limit)", nullptr, nullptr, {}},
    {"upper", FieldType::number, 0.01f, -k_inf, k_inf, "rad or m (joint limit)", nullptr, nullptr, {}},
    {"limit_ke", FieldType::number, 0.0f, 0, 1e9, "N m/rad, limit penalty (0: no limit)", nullptr, nullptr, {}},
    {"limit_kd", FieldType::number, 0.0f, 0, 1e9, "N m s/rad, limit damping", nullptr, nullptr, {}},
    {"mass", FieldType::number, 0.0f, 0, 1e9, "kg (> 0: replaces the shapes' density mass)", nullptr, nullptr, {}},
    {"com",
     FieldType::vec3,
     0.005f,
     -k_inf,
     k_inf,
     "m, centre of mass in the body frame (with mass)",
     nullptr,
     nullptr,
     {}},
    {"inertia",
     FieldType::vec3,
     0.0f,
     0,
     k_inf,
     "kg m^2, principal moments about the com (with mass)",
     nullptr,
     nullptr,
     {}},
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m, joint frame in the parent body", nullptr, nullptr, {}},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg, joint frame axes in the parent body", nullptr, nullptr, {}},
    {"axis", FieldType::vec3, 0.01f, -1, 1, "revolute/prismatic axis in the joint frame", nullptr, nullptr, {}},
};

const Field k_actuator[] = {
    {"gear", FieldType::number, 0.01f, -k_inf, k_inf, "torque (thrust) = gear * input", nullptr, nullptr, {}},
    {"kp", FieldType::number, 0.0f, 0, 1e9, "PD stiffness, N m/rad or N/m", nullptr, nullptr,
     scene::ParamKind::actuator_kp},
    {"kd", FieldType::number, 0.0f, 0, 1e9, "PD damping, N m s/rad or N s/m", nullptr, nullptr,
     scene::ParamKind::actuator_kd},
    {"dof", FieldType::integer, 0.05f, 0, 5, "dof within the joint", nullptr, nullptr, {}},
};

const Field k_q = {
    "q",     FieldType::number,        0.01f, -k_inf, k_inf, "rad or m, initial joint coordinate", nullptr,
    nullptr, scene::ParamKind::joint_q};
const Field k_qd = {
    "qd",    FieldType::number,         0.01f, -k_inf, k_inf, "rad/s or m/s, initial joint velocity", nullptr,
    nullptr, scene::ParamKind::joint_qd};

const Field* find(std::span<const Field> fields, const std::string& name, int* component) {
  *component = -1;
  for (const Field& f : fields)
    if (name == f.name) return &f;
  if (name.size() > 2 && name[name.size() - 2] == '.') {
    char c = name.back();
    int k = c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1;
    for (const Field& f : fields)
      if (k >= 0 && f.type == FieldType::vec3 && name.substr(0, name.size() - 2) == f.name) {
        *component = k;
        return &f;
      }
  }
  return nullptr;
}

}  // namespace

std::span<const Field> robot_body_fields() { return k_body; }
std::span<const Field> robot_actuator_fields() { return k_actuator; }

void* robot_body_value(scene::RobotBody& b, const Field& f) {
  const std::string n = f.name;
  if (n == "damping") return &b.damping;
  if (n == "armature") return &b.armature;
  if (n == "lower") return &b.lower;
  if (n == "upper") return &b.upper;
  if (n == "limit_ke") return &b.limit_ke;
  if (n == "limit_kd") return &b.limit_kd;
  if (n == "mass") return &b.mass;
  if (n == "com") return &b.com;
  if (n == "inertia") return &b.inertia;
  if (n == "position") return &b.position;
  if (n == "rotation") return &b.rotation;
  return &b.axis;
}

void* robot_actuator_value(scene::RobotActuator& a, const Field& f) {
  const std::string n = f.name;
  if (n == "gear") return &a.gear;
  if (n == "kp") return &a.kp;
  if (n == "kd") return &a.kd;
  return &a.dof;
}

std::vector<double>* robot_initial(scene::RobotObject& robot, const std::string& body, bool velocity, bool create,
                                   int count) {
  for (auto& in : robot.initial)
    if (in.body == body) {
      std::vector<double>& v = velocity ? in.qd : in.q;
      if (v.empty() && !create) return nullptr;
      if (v.empty()) v.assign(size_t(count), 0.0);
      return &v;
    }
  if (!create) return nullptr;
  scene::RobotInitial in;
  in.body = body;
  (velocity ? in.qd : in.q).assign(size_t(count), 0.0);
  robot.initial.push_back(in);
  return velocity ? &robot.initial.back().qd : &robot.initial.back().q;
}

Result<RobotFieldRef> resolve_robot_field(scene::Object& o, const std::string& rest) {
  scene::RobotObject& rb = o.robot;
  auto listed_body = [&](const std::string& name) -> scene::RobotBody* {
    for (auto& b : rb.bodies)
      if (b.name == name) return &b;
    return nullptr;
  };
  RobotFieldRef r;
  // initial joint state: q.<body>, qd.<body>
  for (const char* head : {"q.", "qd."}) {
    if (rest.rfind(head, 0) != 0) continue;
    const bool vel = head[1] == 'd';
    const std::string body = rest.substr(vel ? 3 : 2);
    if (!rb.urdf.empty() || listed_body(body)) {
      if (const scene::RobotBody* b = listed_body(body);
          b && b->joint != scene::RobotJointKind::revolute && b->joint != scene::RobotJointKind::prismatic)
        return Status::error(rest + ": the joint of \"" + body + "\" is " + scene::to_string(b->joint) +
                             "; only revolute and prismatic joints are set by one number");
      std::vector<double>* v = robot_initial(rb, body, vel, true, 1);
      r.field = vel ? &k_qd : &k_q;
      r.value = v->data();  // a 1-coordinate joint (the compiler checks URDF joints)
      return r;
    }
    return Status::error(rest + ": the robot has no body named \"" + body + "\"");
  }
  // bodies.<body>.<field>
  if (rest.rfind("bodies.", 0) == 0) {
    if (!rb.urdf.empty()) return Status::error(rest + ": the bodies of a URDF robot are edited in its file");
    const std::string tail = rest.substr(7);
    // body names may contain dots: the longest body name that prefixes the tail
    scene::RobotBody* best = nullptr;
    for (auto& b : rb.bodies)
      if (tail.size() > b.name.size() + 1 && tail.compare(0, b.name.size(), b.name) == 0 &&
          tail[b.name.size()] == '.' && (!best || b.name.size() > best->name.size()))
        best = &b;
    if (!best) return Status::error(rest + ": no such body");
    r.field = find(k_body, tail.substr(best->name.size() + 1), &r.component);
    if (!r.field) return Status::error(rest + ": a body has no field \"" + tail.substr(best->name.size() + 1) + "\"");
    r.value = robot_body_value(*best, *r.field);
    return r;
  }
  // actuators[i].<field>
  if (rest.rfind("actuators[", 0) == 0) {
    size_t close = rest.find("].");
    if (close == std::string::npos) return Status::error(rest + ": expected actuators[i].<field>");
    int i = std::atoi(rest.substr(10, close - 10).c_str());
    if (i < 0 || i >= int(rb.actuators.size())) return Status::error(rest + ": actuator index out of range");
    r.field = find(k_actuator, rest.substr(close + 2), &r.component);
    if (!r.field) return Status::error(rest + ": an actuator has no field \"" + rest.substr(close + 2) + "\"");
    r.value = robot_actuator_value(rb.actuators[size_t(i)], *r.field);
    return r;
  }
  return Status::error(rest + ": a robot has no such field");
}

}  // namespace adj::editor
