#include "app/editor/fields.h"

#include "app/editor/robot_fields.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace adj::editor {

namespace {

using K = scene::ParamKind;
constexpr double k_inf = std::numeric_limits<double>::infinity();

#define OBJ(expr) [](scene::Object& o) -> void* { return &o.expr; }
#define SET(expr) [](scene::Settings& s) -> void* { return &s.expr; }

const Field k_cloth[] = {
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m", OBJ(cloth.position), nullptr, K::initial_position},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg", OBJ(cloth.rotation), nullptr, {}},
    {"velocity", FieldType::vec3, 0.01f, -k_inf, k_inf, "m/s", OBJ(cloth.velocity), nullptr, K::initial_velocity},
    {"nx", FieldType::integer, 0.2f, 1, 512, "cells", OBJ(cloth.nx), nullptr, {}},
    {"ny", FieldType::integer, 0.2f, 1, 512, "cells", OBJ(cloth.ny), nullptr, {}},
    {"cell", FieldType::number, 0.001f, 1e-4, 10, "m", OBJ(cloth.cell), nullptr, {}},
    {"scale", FieldType::number, 0.01f, 1e-4, 1e4, "", OBJ(cloth.scale), nullptr, {}},
    {"particle_mass", FieldType::number, 0.0f, 0, 1e6, "kg", OBJ(cloth.particle_mass), nullptr, K::particle_mass},
    {"radius", FieldType::number, 0.001f, 0, 10, "m", OBJ(cloth.radius), nullptr, {}},
    {"pin_left", FieldType::boolean, 0, 0, 0, "", OBJ(cloth.pin_left), nullptr, {}},
    {"pin_right", FieldType::boolean, 0, 0, 0, "", OBJ(cloth.pin_right), nullptr, {}},
    {"mesh", FieldType::text, 0, 0, 0, "OBJ path, relative to the scene file", OBJ(cloth.mesh), nullptr, {}},
    {"material.tri_ke", FieldType::number, 0.0f, 0, 1e9, "N/m", OBJ(cloth.material.tri_ke), nullptr, K::tri_ke},
    {"material.tri_ka", FieldType::number, 0.0f, 0, 1e9, "N/m", OBJ(cloth.material.tri_ka), nullptr, K::tri_ka},
    {"material.tri_kd", FieldType::number, 0.0f, 0, 1e6, "N s/m", OBJ(cloth.material.tri_kd), nullptr, K::tri_kd},
    {"material.edge_ke", FieldType::number, 0.0f, 0, 1e6, "N m/rad", OBJ(cloth.material.edge_ke), nullptr, K::edge_ke},
    {"material.edge_kd", FieldType::number, 0.0f, 0, 1e6, "N s/m", OBJ(cloth.material.edge_kd), nullptr, {}},
    {"material.lift", FieldType::number, 0.01f, 0, 100, "", OBJ(cloth.material.lift), nullptr, {}},
    {"material.drag", FieldType::number, 0.01f, 0, 100, "", OBJ(cloth.material.drag), nullptr, {}},
};

const Field k_soft[] = {
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m", OBJ(soft.position), nullptr, K::initial_position},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg", OBJ(soft.rotation), nullptr, {}},
    {"velocity", FieldType::vec3, 0.01f, -k_inf, k_inf, "m/s", OBJ(soft.velocity), nullptr, K::initial_velocity},
    {"nx", FieldType::integer, 0.2f, 1, 128, "cells", OBJ(soft.nx), nullptr, {}},
    {"ny", FieldType::integer, 0.2f, 1, 128, "cells", OBJ(soft.ny), nullptr, {}},
    {"nz", FieldType::integer, 0.2f, 1, 128, "cells", OBJ(soft.nz), nullptr, {}},
    {"cell", FieldType::number, 0.001f, 1e-4, 10, "m", OBJ(soft.cell), nullptr, {}},
    {"scale", FieldType::number, 0.01f, 1e-4, 1e4, "", OBJ(soft.scale), nullptr, {}},
    {"radius", FieldType::number, 0.001f, 0, 10, "m", OBJ(soft.radius), nullptr, {}},
    {"pin_left", FieldType::boolean, 0, 0, 0, "", OBJ(soft.pin_left), nullptr, {}},
    {"mesh", FieldType::text, 0, 0, 0, "closed OBJ, relative to the scene file", OBJ(soft.mesh), nullptr, {}},
    {"material.density", FieldType::number, 0.0f, 1e-3, 1e6, "kg/m^3", OBJ(soft.material.density), nullptr, {}},
    {"material.mu", FieldType::number, 0.0f, 0, 1e10, "Pa", OBJ(soft.material.mu), nullptr, K::tet_mu},
    {"material.lambda", FieldType::number, 0.0f, 0, 1e10, "Pa", OBJ(soft.material.lambda), nullptr, K::tet_lambda},
    {"material.kd", FieldType::number, 0.0f, 0, 1e6, "", OBJ(soft.material.kd), nullptr, {}},
};

const Field k_collider[] = {
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m", OBJ(collider.position), nullptr, {}},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg", OBJ(collider.rotation), nullptr, {}},
    {"size",
     FieldType::vec3,
     0.01f,
     0,
     k_inf,
     "m (box: half extents; sphere/capsule: radius, half height)",
     OBJ(collider.size),
     nullptr,
     {}},
    {"normal", FieldType::vec3, 0.01f, -1, 1, "plane normal", OBJ(collider.normal), nullptr, {}},
    {"scale", FieldType::number, 0.01f, 1e-4, 1e4, "", OBJ(collider.scale), nullptr, {}},
    {"mesh", FieldType::text, 0, 0, 0, "OBJ path, relative to the scene file", OBJ(collider.mesh), nullptr, {}},
};

const Field k_target[] = {
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m", OBJ(target.position), nullptr, {}},
    {"radius", FieldType::number, 0.005f, 0, 100, "m (drawn size)", OBJ(target.radius), nullptr, {}},
};

// robots: placement; URDF robots also their import options (per-body and per-joint fields:
// robot_fields.h)
const Field k_robot[] = {
    {"position",
     FieldType::vec3,
     0.01f,
     -k_inf,
     k_inf,
     "m, placement of the root joint frames",
     OBJ(robot.position),
     nullptr,
     {}},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg", OBJ(robot.rotation), nullptr, {}},
};
const Field k_robot_urdf[] = {
    {"position",
     FieldType::vec3,
     0.01f,
     -k_inf,
     k_inf,
     "m, placement of the root link",
     OBJ(robot.position),
     nullptr,
     {}},
    {"rotation", FieldType::vec3, 0.5f, -360, 360, "deg", OBJ(robot.rotation), nullptr, {}},
    {"file", FieldType::text, 0, 0, 0, "URDF path, relative to the scene file", OBJ(robot.urdf), nullptr, {}},
    {"fixed_base",
     FieldType::boolean,
     0,
     0,
     0,
     "root link welded to the world (else a free joint)",
     OBJ(robot.fixed_base),
     nullptr,
     {}},
    {"default_actuators",
     FieldType::boolean,
     0,
     0,
     0,
     "one actuator per revolute/prismatic joint",
     OBJ(robot.default_actuators),
     nullptr,
     {}},
    {"balance_inertia",
     FieldType::boolean,
     0,
     0,
     0,
     "repair inertias that violate A + B >= C (MuJoCo's balanceinertia)",
     OBJ(robot.balance_inertia),
     nullptr,
     {}},
    {"cylinder_segments",
     FieldType::integer,
     1,
     0,
     256,
     "cylinders touch as prisms of this many sides (0: as capsules)",
     OBJ(robot.cylinder_segments),
     nullptr,
     {}},
    {"actuator.gear",
     FieldType::number,
     0.01f,
     -k_inf,
     k_inf,
     "default actuators: torque = gear * input",
     OBJ(robot.default_actuator.gear),
     nullptr,
     {}},
    {"actuator.kp", FieldType::number, 0.0f, 0, 1e9, "default actuators: PD stiffness", OBJ(robot.default_actuator.kp),
     nullptr, K::actuator_kp},
    {"actuator.kd", FieldType::number, 0.0f, 0, 1e9, "default actuators: PD damping", OBJ(robot.default_actuator.kd),
     nullptr, K::actuator_kd},
};

const Field k_particles[] = {
    {"visible", FieldType::boolean, 0, 0, 0, "", OBJ(visible), nullptr, {}},
};

const Field k_settings[] = {
    {"dt", FieldType::number, 0.0001f, 1e-6, 1.0, "s per frame", nullptr, SET(dt), {}},
    {"substeps", FieldType::integer, 0.2f, 1, 10000, "solver steps per frame", nullptr, SET(substeps), {}},
    {"gravity", FieldType::vec3, 0.05f, -k_inf, k_inf, "m/s^2", nullptr, SET(gravity), K::gravity},
    {"damping", FieldType::number, 0.01f, 0, 1000, "1/s", nullptr, SET(damping), {}},
    {"contact.ke", FieldType::number, 0.0f, 0, 1e9, "N/m", nullptr, SET(contact.ke), K::contact_ke},
    {"contact.kd", FieldType::number, 0.0f, 0, 1e6, "N s/m", nullptr, SET(contact.kd), K::contact_kd},
    {"contact.kf", FieldType::number, 0.0f, 0, 1e6, "N s/m", nullptr, SET(contact.kf), {}},
    {"contact.mu", FieldType::number, 0.01f, 0, 10, "", nullptr, SET(contact.mu), K::contact_mu},
    {"contact.eps", FieldType::number, 0.001f, 1e-6, 10, "m/s", nullptr, SET(contact.eps), {}},
    {"contact.particle_contact", FieldType::boolean, 0, 0, 0, "", nullptr, SET(contact.particle_contact), {}},
    // the robots' contact law (the same defaults; kg-scale robots usually want it stiffer)
    {"robot_contact.ke", FieldType::number, 0.0f, 0, 1e9, "N/m", nullptr, SET(robot_contact.ke), {}},
    {"robot_contact.kd", FieldType::number, 0.0f, 0, 1e6, "N s/m", nullptr, SET(robot_contact.kd), {}},
    {"robot_contact.kf", FieldType::number, 0.0f, 0, 1e6, "N s/m", nullptr, SET(robot_contact.kf), {}},
    {"robot_contact.mu", FieldType::number, 0.01f, 0, 10, "", nullptr, SET(robot_contact.mu), {}},
    {"robot_contact.eps", FieldType::number, 0.001f, 1e-6, 10, "m/s", nullptr, SET(robot_contact.eps), {}},
};

#undef OBJ
#undef SET

const K k_opt_particles[] = {K::initial_position, K::initial_velocity, K::control_force, K::spring_activation,
                             K::spring_rest,      K::spring_ke,        K::spring_kd,     K::particle_mass};
const K k_opt_cloth[] = {K::initial_position, K::initial_velocity, K::control_force, K::tri_ke,
                         K::tri_ka,           K::tri_kd,           K::edge_ke,       K::particle_mass};
const K k_opt_soft[] = {K::initial_position, K::initial_velocity, K::control_force,
                        K::tet_mu,           K::tet_lambda,       K::particle_mass};
const K k_opt_robot[] = {K::joint_q,     K::joint_qd,  K::actuator_control, K::actuator_kp,
                         K::actuator_kd, K::body_mass, K::joint_damping,    K::joint_armature};

const Field* find_field(std::span<const Field> fields, const std::string& name) {
  for (const Field& f : fields)
    if (name == f.name) return &f;
  return nullptr;
}

// "a.b.y" with a vec3 field "a.b": the field and the component (-1: whole)
const Field* match(std::span<const Field> fields, const std::string& rest, int* component) {
  *component = -1;
  if (const Field* f = find_field(fields, rest)) return f;
  if (rest.size() > 2 && rest[rest.size() - 2] == '.') {
    char c = rest.back();
    int k = c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1;
    if (k < 0) return nullptr;
    const Field* f = find_field(fields, rest.substr(0, rest.size() - 2));
    if (f && f->type == FieldType::vec3) {
      *component = k;
      return f;
    }
  }
  return nullptr;
}

Status parse_number(const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return Status::error("\"" + text + "\" is not a number");
  *out = v;
  return Status::ok();
}

Status write_value(const Field& f, void* value, int component, const std::string& text) {
  if (component >= 0) {
    double v = 0;
    if (Status st = parse_number(text, &v); !st) return st;
    (*static_cast<scene::V3*>(value))[size_t(component)] = v;
    return Status::ok();
  }
  return field_from_string(f, value, text);
}

// particle fields, addressed as "particles[i].<name>"
const Field k_particle_fields[] = {
    {"position", FieldType::vec3, 0.01f, -k_inf, k_inf, "m", nullptr, nullptr, {}},
    {"velocity", FieldType::vec3, 0.01f, -k_inf, k_inf, "m/s", nullptr, nullptr, {}},
    {"mass", FieldType::number, 0.01f, 0, k_inf, "kg", nullptr, nullptr, {}},
    {"radius", FieldType::number, 0.001f, 0, k_inf, "m", nullptr, nullptr, {}},
};

void* particle_value(scene::Particle& p, const Field& f) {
  std::string n = f.name;
  if (n == "position") return &p.position;
  if (n == "velocity") return &p.velocity;
  if (n == "mass") return &p.mass;
  return &p.radius;
}

struct Resolved {
  const Field* field = nullptr;
  void* value = nullptr;
  int component = -1;
};

Result<Resolved> resolve(scene::Scene& s, const std::string& path) {
  size_t dot = path.find('.');
  if (dot == std::string::npos) return Status::error(path + ": expected <object>.<field>");
  std::string head = path.substr(0, dot), rest = path.substr(dot + 1);
  Resolved r;
  if (head == "settings") {
    r.field = match(settings_fields(), rest, &r.component);
    if (!r.field) return Status::error(path + ": no such settings field");
    r.value = r.field->get_settings(s.settings);
    return r;
  }
  scene::Object* o = nullptr;
  for (auto& obj : s.objects)
    if (obj.name == head) o = &obj;
  if (!o) return Status::error(path + ": no object named \"" + head + "\"");
  if (rest == "visible") {
    r.field = &k_particles[0];
    r.value = &o->visible;
    return r;
  }
  if (rest.rfind("particles[", 0) == 0 && o->kind == scene::ObjectKind::particles) {
    size_t close = rest.find("].");
    if (close == std::string::npos) return Status::error(path + ": expected particles[i].<field>");
    int i = std::atoi(rest.substr(10, close - 10).c_str());
    if (i < 0 || i >= int(o->particles.particles.size())) return Status::error(path + ": particle index out of range");
    r.field = match(k_particle_fields, rest.substr(close + 2), &r.component);
    if (!r.field) return Status::error(path + ": no such particle field");
    r.value = particle_value(o->particles.particles[size_t(i)], *r.field);
    return r;
  }
  r.field = match(object_fields(*o), rest, &r.component);
  if (!r.field && o->kind == scene::ObjectKind::robot) {
    auto rr = resolve_robot_field(*o, rest);
    if (!rr) return Status::error(path + ": " + rr.status().message());
    r.field = rr->field;
    r.value = rr->value;
    r.component = rr->component;
    return r;
  }
  if (!r.field) return Status::error(path + ": a " + scene::to_string(o->kind) + " has no field \"" + rest + "\"");
  r.value = r.field->get(*o);
  return r;
}

}  // namespace

std::span<const Field> object_fields(const scene::Object& o) {
  switch (o.kind) {
    case scene::ObjectKind::cloth:
      return k_cloth;
    case scene::ObjectKind::soft:
      return k_soft;
    case scene::ObjectKind::collider:
      return k_collider;
    case scene::ObjectKind::target:
      return k_target;
    case scene::ObjectKind::particles:
      return {};
    case scene::ObjectKind::robot:  // per body, joint and actuator: robot_fields.h
      if (o.robot.urdf.empty()) return k_robot;
      return k_robot_urdf;
  }
  return {};
}

std::span<const Field> settings_fields() { return k_settings; }

std::span<const scene::ParamKind> optimizable(scene::ObjectKind kind) {
  switch (kind) {
    case scene::ObjectKind::particles:
      return k_opt_particles;
    case scene::ObjectKind::cloth:
      return k_opt_cloth;
    case scene::ObjectKind::soft:
      return k_opt_soft;
    case scene::ObjectKind::robot:
      return k_opt_robot;
    default:
      return {};
  }
}

std::string field_to_string(const Field& f, const void* value) {
  char buf[128];
  switch (f.type) {
    case FieldType::number:
      std::snprintf(buf, sizeof buf, "%.17g", *static_cast<const double*>(value));
      break;
    case FieldType::integer:
      std::snprintf(buf, sizeof buf, "%d", *static_cast<const int*>(value));
      break;
    case FieldType::boolean:
      return *static_cast<const bool*>(value) ? "true" : "false";
    case FieldType::vec3: {
      const auto& v = *static_cast<const scene::V3*>(value);
      std::snprintf(buf, sizeof buf, "%.17g,%.17g,%.17g", v[0], v[1], v[2]);
      break;
    }
    case FieldType::text:
      return *static_cast<const std::string*>(value);
  }
  return buf;
}

Status field_from_string(const Field& f, void* value, const std::string& text) {
  switch (f.type) {
    case FieldType::number:
      return parse_number(text, static_cast<double*>(value));
    case FieldType::integer: {
      double v = 0;
      if (Status st = parse_number(text, &v); !st) return st;
      if (v != double(int(v))) return Status::error("\"" + text + "\" is not an integer");
      *static_cast<int*>(value) = int(v);
      return Status::ok();
    }
    case FieldType::boolean:
      if (text == "true" || text == "1" || text == "on")
        *static_cast<bool*>(value) = true;
      else if (text == "false" || text == "0" || text == "off")
        *static_cast<bool*>(value) = false;
      else
        return Status::error("\"" + text + "\" is not true or false");
      return Status::ok();
    case FieldType::vec3: {
      scene::V3 v{};
      if (std::sscanf(text.c_str(), "%lf,%lf,%lf", &v[0], &v[1], &v[2]) != 3)
        return Status::error("\"" + text + "\" is not x,y,z");
      *static_cast<scene::V3*>(value) = v;
      return Status::ok();
    }
    case FieldType::text:
      *static_cast<std::string*>(value) = text;
      return Status::ok();
  }
  return Status::ok();
}

Status set_by_path(scene::Scene& s, const std::string& path, const std::string& text) {
  auto r = resolve(s, path);
  if (!r) return r.status();
  if (Status st = write_value(*r->field, r->value, r->component, text); !st)
    return Status::error(path + ": " + st.message());
  return Status::ok();
}

Result<std::string> get_by_path(const scene::Scene& scene, const std::string& path) {
  scene::Scene s = scene;  // resolve() hands out mutable pointers
  auto r = resolve(s, path);
  if (!r) return r.status();
  if (r->component >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", (*static_cast<scene::V3*>(r->value))[size_t(r->component)]);
    return std::string(buf);
  }
  return field_to_string(*r->field, r->value);
}

}  // namespace adj::editor
