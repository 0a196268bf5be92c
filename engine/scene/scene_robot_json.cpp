// robot objects in scene files:
//   {"type": "robot", "name": "arm", "position": [...], "rotation": [...],
//    "bodies": [{"name", "parent", "joint", "position", "rotation", "axis", "lower", "upper",
//                "limit_ke", "limit_kd", "damping", "armature", "mass", "com", "inertia",
//                "shapes": [{"type", "position", "rotation", "size", "density", "group", "mask",
//                            mesh: "file" (OBJ, STL, DAE..., relative to the scene), "scale"}]}],
//    "actuators": [{"body", "type": "torque"|"pd"|"thrust", "dof", "gear", "kp", "kd",
//                   thrust: "position", "axis" (body frame)}],
//    "initial": [{"body", "q": [...], "qd": [...]}]}
//   {"type": "urdf", "name": "cartpole", "file": "../robots/cartpole.urdf", "position", "rotation",
//    "fixed_base", "default_actuators", "actuator": {"type", "gear", "kp", "kd"}, "actuators", "initial",
//    "limit_ke", "limit_kd" (every limited joint), "balance_inertia" (repair A + B < C inertias),
//    "cylinder_segments" (cylinders touch as prisms of that many sides; 0: as capsules),
//    "joints": [{"name", "damping", "armature", "stiffness", "limit_ke", "limit_kd"}] (per joint)}
//   {"type": "mjcf", "name": "hopper", "file": "hopper.xml", "position", "rotation",
//    "default_actuators" (the file's <actuator>s), "actuators", "initial", and the same
//    limit_ke, limit_kd, balance_inertia, joints (and "strength": torque actuators replace the
//    file's), "import": {"density", "joint_damping", "joint_armature", "joint_stiffness",
//    "hinge_range": [lo, hi] deg} (how to read the file)}; bodies are named as
//    in the file (engine/io/mjcf.h); fixed_base and actuator are read but unused
#include <set>

#include "engine/scene/scene_json_detail.h"

namespace adj::scene::json_detail {

namespace {

void read_numbers(Reader& r, Fields& f, const char* key, std::vector<double>& out) {
  const json* a = r.array(f, key);
  if (!a) return;
  for (size_t i = 0; i < a->size(); ++i) {
    const json& x = (*a)[i];
    if (!x.is_number() || !std::isfinite(x.get<double>())) {
      r.error(Reader::index(Reader::join(f.path, key), i), "expected a finite number");
      return;
    }
    out.push_back(x.get<double>());
  }
}

void read_actuator_fields(Reader& r, Fields& f, RobotActuator& a) {
  int k = r.choice(f, "type", {"torque", "pd", "thrust"}, false);
  if (k >= 0) a.kind = RobotActuatorKind(k);
  if (a.kind == RobotActuatorKind::thrust) {
    r.vec3(f, "position", a.position);
    r.vec3(f, "axis", a.axis);
    if (std::abs(a.axis[0]) + std::abs(a.axis[1]) + std::abs(a.axis[2]) < 1e-12)
      r.error(Reader::join(f.path, "axis"), "must not be zero");
  }
  r.integer(f, "dof", a.dof, 0, 5);
  r.number(f, "gear", a.gear);
  r.number(f, "kp", a.kp, 0);
  r.number(f, "kd", a.kd, 0);
}

void read_shape(Reader& r, const json& j, const std::string& path, RobotShape& s) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  int k = r.choice(f, "type", {"sphere", "box", "capsule", "mesh"}, true);
  if (k >= 0) s.kind = RobotShapeKind(k);
  r.vec3(f, "position", s.position);
  r.vec3(f, "rotation", s.rotation);
  const bool mesh = s.kind == RobotShapeKind::mesh;
  r.vec3(f, "size", s.size, !mesh);
  if (mesh) {
    r.string(f, "file", s.file, true);
    if (f.j.contains("file") && s.file.empty()) r.error(Reader::join(path, "file"), "must not be empty");
    r.vec3(f, "scale", s.scale);
    if (!(s.scale[0] > 0 && s.scale[1] > 0 && s.scale[2] > 0)) r.error(Reader::join(path, "scale"), "must be positive");
  }
  r.number(f, "density", s.density, 0);
  r.integer(f, "group", s.group, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  r.integer(f, "mask", s.mask, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  for (int c = 0; c < (mesh ? 0 : s.kind == RobotShapeKind::box ? 3 : s.kind == RobotShapeKind::capsule ? 2 : 1); ++c)
    if (s.size[c] <= 0) r.error(Reader::join(path, "size"), "sizes must be positive");
  r.finish(f);
}

void read_body(Reader& r, const json& j, const std::string& path, RobotBody& b) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", b.name, true);
  r.string(f, "parent", b.parent);
  int k = r.choice(f, "joint", {"revolute", "prismatic", "ball", "free", "fixed"}, true);
  if (k >= 0) b.joint = RobotJointKind(k);
  r.vec3(f, "position", b.position);
  r.vec3(f, "rotation", b.rotation);
  r.vec3(f, "axis", b.axis);
  if (std::abs(b.axis[0]) + std::abs(b.axis[1]) + std::abs(b.axis[2]) < 1e-12)
    r.error(Reader::join(path, "axis"), "must not be zero");
  r.number(f, "lower", b.lower);
  r.number(f, "upper", b.upper);
  if (b.lower > b.upper) r.error(path, "lower limit is above the upper limit");
  r.number(f, "limit_ke", b.limit_ke, 0);
  r.number(f, "limit_kd", b.limit_kd, 0);
  r.number(f, "damping", b.damping, 0);
  r.number(f, "armature", b.armature, 0);
  r.number(f, "mass", b.mass, 0);
  r.vec3(f, "com", b.com);
  r.vec3(f, "inertia", b.inertia);
  if (const json* a = r.array(f, "shapes")) {
    b.shapes.resize(a->size());
    for (size_t i = 0; i < a->size(); ++i)
      read_shape(r, (*a)[i], Reader::index(Reader::join(path, "shapes"), i), b.shapes[i]);
  }
  r.finish(f);
}

void read_joint_override(Reader& r, const json& j, const std::string& path, RobotJointOverride& o) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", o.name, true);
  if (f.j.contains("name") && o.name.empty()) r.error(Reader::join(path, "name"), "must not be empty");
  const std::pair<const char*, std::optional<double>*> keys[] = {
      {"damping", &o.damping},   {"armature", &o.armature}, {"stiffness", &o.stiffness},
      {"limit_ke", &o.limit_ke}, {"limit_kd", &o.limit_kd}, {"strength", &o.strength}};
  for (const auto& [key, out] : keys) {
    if (!f.j.contains(key)) continue;
    double x = 0;
    r.number(f, key, x, 0);
    *out = x;
  }
  r.finish(f);
}

ojson write_joint_override(const RobotJointOverride& o) {
  ojson j{{"name", o.name}};
  if (o.damping) j["damping"] = *o.damping;
  if (o.armature) j["armature"] = *o.armature;
  if (o.stiffness) j["stiffness"] = *o.stiffness;
  if (o.limit_ke) j["limit_ke"] = *o.limit_ke;
  if (o.limit_kd) j["limit_kd"] = *o.limit_kd;
  if (o.strength) j["strength"] = *o.strength;
  return j;
}

void read_import(Reader& r, const json& j, const std::string& path, RobotImport& im) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "density", im.density, 0);
  const std::pair<const char*, std::optional<double>*> keys[] = {{"joint_damping", &im.joint_damping},
                                                                 {"joint_armature", &im.joint_armature},
                                                                 {"joint_stiffness", &im.joint_stiffness}};
  for (const auto& [key, out] : keys) {
    if (!f.j.contains(key)) continue;
    double x = 0;
    r.number(f, key, x, 0);
    *out = x;
  }
  if (f.j.contains("hinge_range")) {
    std::vector<double> range;
    read_numbers(r, f, "hinge_range", range);
    if (range.size() != 2 || !(range[0] < range[1]))
      r.error(Reader::join(path, "hinge_range"), "expected [lower, upper] in degrees, lower below upper");
    else
      im.hinge_range = std::array<double, 2>{range[0], range[1]};
  }
  r.finish(f);
}

ojson write_import(const RobotImport& im) {
  ojson j = ojson::object();
  if (im.density > 0) j["density"] = im.density;
  if (im.joint_damping) j["joint_damping"] = *im.joint_damping;
  if (im.joint_armature) j["joint_armature"] = *im.joint_armature;
  if (im.joint_stiffness) j["joint_stiffness"] = *im.joint_stiffness;
  if (im.hinge_range) j["hinge_range"] = {(*im.hinge_range)[0], (*im.hinge_range)[1]};
  return j;
}

ojson write_shape(const RobotShape& s) {
  ojson j{{"type", to_string(s.kind)},
          {"position", v3(s.position)},
          {"rotation", v3(s.rotation)},
          {"size", v3(s.size)},
          {"density", s.density}};
  if (s.kind == RobotShapeKind::mesh) {
    j["file"] = s.file;
    j["scale"] = v3(s.scale);
  }
  if (s.group != 1 || s.mask != -1) {  // the contact filter, when not the default
    j["group"] = s.group;
    j["mask"] = s.mask;
  }
  return j;
}

ojson write_body(const RobotBody& b) {
  ojson j{{"name", b.name}};
  if (!b.parent.empty()) j["parent"] = b.parent;
  j["joint"] = to_string(b.joint);
  j["position"] = v3(b.position);
  j["rotation"] = v3(b.rotation);
  j["axis"] = v3(b.axis);
  if (std::isfinite(b.lower)) j["lower"] = b.lower;
  if (std::isfinite(b.upper)) j["upper"] = b.upper;
  j["limit_ke"] = b.limit_ke;
  j["limit_kd"] = b.limit_kd;
  j["damping"] = b.damping;
  j["armature"] = b.armature;
  if (b.mass > 0) {
    j["mass"] = b.mass;
    j["com"] = v3(b.com);
    j["inertia"] = v3(b.inertia);
  }
  ojson ss = ojson::array();
  for (const RobotShape& s : b.shapes) ss.push_back(write_shape(s));
  j["shapes"] = ss;
  return j;
}

ojson write_actuator(const RobotActuator& a, bool with_body) {
  ojson j;
  if (with_body) j["body"] = a.body;
  j["type"] = to_string(a.kind);
  if (with_body) j["dof"] = a.dof;
  j["gear"] = a.gear;
  j["kp"] = a.kp;
  j["kd"] = a.kd;
  if (a.kind == RobotActuatorKind::thrust) {
    j["position"] = v3(a.position);
    j["axis"] = v3(a.axis);
  }
  return j;
}

}  // namespace

void read_robot(Reader& r, Fields& f, RobotObject& robot, bool urdf) {
  r.vec3(f, "position", robot.position);
  r.vec3(f, "rotation", robot.rotation);
  if (urdf) {
    r.string(f, "file", robot.urdf, true);
    if (f.j.contains("file") && robot.urdf.empty()) r.error(Reader::join(f.path, "file"), "must not be empty");
    r.boolean(f, "fixed_base", robot.fixed_base);
    r.boolean(f, "default_actuators", robot.default_actuators);
    if (const json* a = r.field(f, "actuator", false)) {
      std::string ap = Reader::join(f.path, "actuator");
      if (r.is_object(*a, ap)) {
        Fields af{*a, ap, {}};
        read_actuator_fields(r, af, robot.default_actuator);
        r.finish(af);
      }
    }
    r.number(f, "limit_ke", robot.limit_ke, 0);
    r.number(f, "limit_kd", robot.limit_kd, 0);
    r.boolean(f, "balance_inertia", robot.balance_inertia);
    r.integer(f, "cylinder_segments", robot.cylinder_segments, 0, 256);
    if (robot.cylinder_segments == 1 || robot.cylinder_segments == 2)
      r.error(Reader::join(f.path, "cylinder_segments"), "must be 0 (capsules) or at least 3");
    if (const json* a = r.array(f, "joints")) {
      robot.joints.resize(a->size());
      std::set<std::string> names;
      for (size_t i = 0; i < a->size(); ++i) {
        std::string jp = Reader::index(Reader::join(f.path, "joints"), i);
        read_joint_override(r, (*a)[i], jp, robot.joints[i]);
        if (!robot.joints[i].name.empty() && !names.insert(robot.joints[i].name).second)
          r.error(jp + ".name", "\"" + robot.joints[i].name + "\" is overridden by an earlier entry");
      }
    }
    if (const json* im = r.field(f, "import", false)) {
      const std::string ip = Reader::join(f.path, "import");
      if (robot.mjcf)
        read_import(r, *im, ip, robot.import);
      else
        r.error(ip, "import options read MJCF files only (this robot is a URDF file)");
    }
  } else if (const json* a = r.array(f, "bodies", true)) {
    robot.bodies.resize(a->size());
    std::set<std::string> names;
    for (size_t i = 0; i < a->size(); ++i) {
      std::string bp = Reader::index(Reader::join(f.path, "bodies"), i);
      read_body(r, (*a)[i], bp, robot.bodies[i]);
      const RobotBody& b = robot.bodies[i];
      if (!b.parent.empty() && !names.count(b.parent))
        r.error(bp + ".parent", "\"" + b.parent + "\" is not a body listed before this one");
      if (!names.insert(b.name).second) r.error(bp + ".name", "\"" + b.name + "\" is used by an earlier body");
    }
  }
  if (const json* a = r.array(f, "actuators")) {
    robot.actuators.resize(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      std::string ap = Reader::index(Reader::join(f.path, "actuators"), i);
      if (!r.is_object((*a)[i], ap)) continue;
      Fields af{(*a)[i], ap, {}};
      r.string(af, "body", robot.actuators[i].body, true);
      read_actuator_fields(r, af, robot.actuators[i]);
      r.finish(af);
    }
  }
  if (const json* a = r.array(f, "initial")) {
    robot.initial.resize(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      std::string ip = Reader::index(Reader::join(f.path, "initial"), i);
      if (!r.is_object((*a)[i], ip)) continue;
      Fields inf{(*a)[i], ip, {}};
      r.string(inf, "body", robot.initial[i].body, true);
      read_numbers(r, inf, "q", robot.initial[i].q);
      read_numbers(r, inf, "qd", robot.initial[i].qd);
      r.finish(inf);
    }
  }
}

ojson write_robot(const Object& o) {
  const RobotObject& rb = o.robot;
  ojson j;
  j["name"] = o.name;
  if (!o.visible) j["visible"] = false;
  j["type"] = rb.urdf.empty() ? "robot" : rb.mjcf ? "mjcf" : "urdf";
  if (!rb.urdf.empty()) {
    j["file"] = rb.urdf;
    j["fixed_base"] = rb.fixed_base;
    j["default_actuators"] = rb.default_actuators;
    j["actuator"] = write_actuator(rb.default_actuator, false);
    j["actuator"]["dof"] = rb.default_actuator.dof;
    if (rb.limit_ke >= 0) j["limit_ke"] = rb.limit_ke;
    if (rb.limit_kd >= 0) j["limit_kd"] = rb.limit_kd;
    if (rb.balance_inertia) j["balance_inertia"] = true;
    if (rb.cylinder_segments > 0) j["cylinder_segments"] = rb.cylinder_segments;
    if (!rb.joints.empty()) {
      ojson js = ojson::array();
      for (const RobotJointOverride& o : rb.joints) js.push_back(write_joint_override(o));
      j["joints"] = js;
    }
    if (!(rb.import == RobotImport{})) j["import"] = write_import(rb.import);
  }
  j["position"] = v3(rb.position);
  j["rotation"] = v3(rb.rotation);
  if (rb.urdf.empty()) {
    ojson bs = ojson::array();
    for (const RobotBody& b : rb.bodies) bs.push_back(write_body(b));
    j["bodies"] = bs;
  }
  ojson as = ojson::array();
  for (const RobotActuator& a : rb.actuators) as.push_back(write_actuator(a, true));
  j["actuators"] = as;
  ojson is = ojson::array();
  for (const RobotInitial& i : rb.initial) is.push_back({{"body", i.body}, {"q", i.q}, {"qd", i.qd}});
  j["initial"] = is;
  return j;
}

}  // namespace adj::scene::json_detail
