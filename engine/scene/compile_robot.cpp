// robot objects -> one RigidModel: bodies listed in a scene file or imported from URDF
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "engine/io/mjcf.h"
#include "engine/io/urdf.h"
#include "engine/model/builder.h"
#include "engine/scene/compile.h"

namespace adj::scene {

namespace {

vec3<double> d3(const V3& a) { return {a[0], a[1], a[2]}; }

// the quaternion of a ball or free joint's initial q (its last 4 numbers, w x y z) made unit,
// as MuJoCo normalizes qpos; a zero or non-finite one has no rotation and is refused naming
// the field (`path`), rather than failing later as a mass matrix that is not positive definite
Status normalize_joint_quat(int type, const std::string& path, std::vector<double>& q) {
  if ((type != RIGID_JOINT_BALL && type != RIGID_JOINT_FREE) || q.size() < 4) return Status::ok();
  const size_t w = q.size() - 4;
  double n2 = 0;
  for (size_t k = w; k < q.size(); ++k) n2 += q[k] * q[k];
  const double n = std::sqrt(n2);
  if (!std::isfinite(n) || n < 1e-9)
    return Status::error(path + "[" + std::to_string(w) + ".." + std::to_string(w + 3) +
                         "]: the quaternion (w, x, y, z) is zero or not finite; the identity is [1, 0, 0, 0]");
  for (size_t k = w; k < q.size(); ++k) q[k] /= n;
  return Status::ok();
}

// XYZ Euler angles [deg] (R = Rz Ry Rx) as a quaternion
rigid::quat<double> euler_quat(const V3& deg) {
  const double k = 3.14159265358979323846 / 360.0;  // half angle
  rigid::quat<double> qx(std::cos(deg[0] * k), std::sin(deg[0] * k), 0, 0);
  rigid::quat<double> qy(std::cos(deg[1] * k), 0, std::sin(deg[1] * k), 0);
  rigid::quat<double> qz(std::cos(deg[2] * k), 0, 0, std::sin(deg[2] * k));
  return rigid::qmul(qz, rigid::qmul(qy, qx));
}

GeomType geom_type(RobotShapeKind k) {
  switch (k) {
    case RobotShapeKind::sphere:
      return GEOM_SPHERE;
    case RobotShapeKind::box:
      return GEOM_BOX;
    case RobotShapeKind::capsule:
      return GEOM_CAPSULE;
    case RobotShapeKind::mesh:
      return GEOM_MESH;
  }
  return GEOM_SPHERE;
}

RigidActuatorDesc actuator_desc(const RobotActuator& a) {
  return {.type = a.kind == RobotActuatorKind::pd       ? RIGID_ACTUATOR_PD
                  : a.kind == RobotActuatorKind::thrust ? RIGID_ACTUATOR_THRUST
                                                        : RIGID_ACTUATOR_TORQUE,
          .dof = a.dof,
          .gear = a.gear,
          .kp = a.kp,
          .kd = a.kd,
          .pos = d3(a.position),
          .axis = d3(a.axis)};
}

// the bodies of a "robot" object; names -> builder indices
// a scene-relative file as a path
std::string scene_file(const std::string& file, const std::string& base_dir) {
  std::filesystem::path path(file);
  return path.is_absolute() || base_dir.empty() ? file : (std::filesystem::path(base_dir) / path).string();
}

Status add_listed(const RobotObject& rb, const std::string& where, const std::string& base_dir, RigidBuilder& b,
                  std::map<std::string, int>& index) {
  rigid::quat<double> place = euler_quat(rb.rotation);
  mat33<double> place_m = rigid::qmat(place);
  for (size_t i = 0; i < rb.bodies.size(); ++i) {
    const RobotBody& body = rb.bodies[i];
    const std::string bw = where + ".bodies[" + std::to_string(i) + "] (\"" + body.name + "\")";
    RigidJointDesc j;
    j.type = RigidJointType(int(body.joint));
    j.pos = d3(body.position);
    j.rot = euler_quat(body.rotation);
    j.axis = d3(body.axis);
    j.lower = body.lower, j.upper = body.upper;
    j.limit_ke = body.limit_ke, j.limit_kd = body.limit_kd;
    j.damping = body.damping, j.armature = body.armature;
    if (body.parent.empty()) {
      j.parent = -1;
      j.pos = d3(rb.position) + place_m * j.pos;
      j.rot = rigid::qmul(place, j.rot);
    } else {
      auto it = index.find(body.parent);
      if (it == index.end()) return Status::error(bw + ": no earlier body named \"" + body.parent + "\"");
      j.parent = it->second;
    }
    int k = b.add_body(body.name, j);
    index[body.name] = k;
    for (size_t si = 0; si < body.shapes.size(); ++si) {
      const RobotShape& s = body.shapes[si];
      RigidShapeDesc sd{.type = geom_type(s.kind),
                        .pos = d3(s.position),
                        .rot = euler_quat(s.rotation),
                        .size = d3(s.size),
                        .density = s.density,
                        .group = s.group,
                        .mask = s.mask};
      if (s.kind == RobotShapeKind::mesh) {
        // read here; the builder's errors (open mesh with a density, flat) name it as mesh_name
        std::string sw = bw;
        sw += ".shapes[" + std::to_string(si) + "]";
        const std::string full = scene_file(s.file, base_dir);
        auto mesh = load_mesh<double>(full);
        if (!mesh) return Status::error(sw + ".file: " + mesh.status().message());
        sd.mesh_vertices.assign(mesh->vertices.begin(), mesh->vertices.end());
        sd.mesh_tris.assign(mesh->tris.begin(), mesh->tris.end());
        sd.scale = d3(s.scale);
        sd.mesh_name = full;
        sd.mesh_name += ", ";
        sd.mesh_name += sw;
      }
      b.add_shape(k, sd);
    }
    if (body.mass > 0) {
      mat33<double> I;
      for (int c = 0; c < 3; ++c) I.m[c][c] = body.inertia[c];
      if (std::string why = rigid_inertia_problem(I); !why.empty())
        return Status::error(bw + ".inertia: " + why + " (no rigid body has this inertia)");
      b.set_mass(k, body.mass, d3(body.com), I);
    }
  }
  return Status::ok();
}

// the scene's per-joint overrides of an imported robot (joint name -> builder body)
Status override_joints(const RobotObject& rb, const std::string& where, const std::map<std::string, int>& joint_body,
                       RigidBuilder& b) {
  for (size_t i = 0; i < rb.joints.size(); ++i) {
    const RobotJointOverride& o = rb.joints[i];
    const std::string jw = where + ".joints[" + std::to_string(i) + "]";
    auto it = joint_body.find(o.name);
    RigidJointDesc* j = it == joint_body.end() ? nullptr : b.joint(it->second);
    if (!j) return Status::error(jw + ".name: " + rb.urdf + " has no joint named \"" + o.name + "\"");
    if (j->type == RIGID_JOINT_FIXED) return Status::error(jw + ": joint \"" + o.name + "\" is fixed");
    if (o.strength && j->type != RIGID_JOINT_REVOLUTE && j->type != RIGID_JOINT_PRISMATIC)
      return Status::error(jw + ".strength: joint \"" + o.name + "\" is not a hinge or slide (one actuated dof)");
    if (o.damping) j->damping = *o.damping;
    if (o.armature) j->armature = *o.armature;
    if (o.stiffness) j->stiffness = *o.stiffness;
    const bool limited = std::isfinite(j->lower) && std::isfinite(j->upper) && j->lower < j->upper;
    if ((o.limit_ke || o.limit_kd) && !limited)
      return Status::error(jw + ": joint \"" + o.name + "\" has no limits to stiffen");
    if (o.limit_ke) j->limit_ke = *o.limit_ke;
    if (o.limit_kd) j->limit_kd = *o.limit_kd;
  }
  return Status::ok();
}

// one torque actuator (gear = strength) per joint whose override states a strength, in the
// file's joint order (override_joints has checked the names); returns how many
int add_strength_actuators(const RobotObject& rb, const std::vector<std::string>& joint_order,
                           const std::map<std::string, int>& joint_body, RigidBuilder& b) {
  int added = 0;
  for (const std::string& name : joint_order)
    for (const RobotJointOverride& o : rb.joints)
      if (o.name == name && o.strength) {
        RigidActuatorDesc ad;
        ad.type = RIGID_ACTUATOR_TORQUE;
        ad.gear = *o.strength;
        b.add_actuator(joint_body.at(name), ad);
        ++added;
      }
  return added;
}

// a mesh collider's triangles, as the particles' model holds them (read and placed once): its
// vertices and triangles into a rigid collider
template <class S>
void mesh_collider_desc(const ModelT<S>& pm, int shape, RigidColliderDesc& cd) {
  const int t0 = pm.shape_mesh_start[shape], nt = pm.shape_mesh_count[shape];
  int lo = std::numeric_limits<int>::max(), hi = -1;
  for (int t = t0; t < t0 + nt; ++t)
    for (int i : {pm.mesh_tris[t].i, pm.mesh_tris[t].j, pm.mesh_tris[t].k}) lo = std::min(lo, i), hi = std::max(hi, i);
  cd.type = GEOM_MESH;
  cd.pos = {0, 0, 0};
  cd.rot = {};
  cd.size = {0, 0, 0};
  for (int i = lo; i <= hi; ++i) {
    const vec3<S>& x = pm.mesh_vertices[i];
    cd.mesh_vertices.push_back({double(x.x), double(x.y), double(x.z)});
  }
  for (int t = t0; t < t0 + nt; ++t)
    cd.mesh_tris.push_back({pm.mesh_tris[t].i - lo, pm.mesh_tris[t].j - lo, pm.mesh_tris[t].k - lo});
}

// the scene's gravity, robot contact law and colliders into the builder: the ground at height 0
// is the rigid model's ground; other heights, planes, spheres, boxes, capsules and meshes (the
// particles' model's copy: cs) are static colliders of the body shapes
template <class S>
void add_world(const Scene& scene, const CompiledSceneT<S>& cs, RigidBuilder& b) {
  const Settings& st = scene.settings;
  b.gravity = d3(st.gravity);
  b.ground = false;
  for (size_t oi = 0; oi < scene.objects.size(); ++oi) {
    const Object& o = scene.objects[oi];
    if (o.kind != ObjectKind::collider) continue;
    const Collider& c = o.collider;
    RigidColliderDesc cd;
    cd.pos = d3(c.position);
    cd.rot = euler_quat(c.rotation);
    switch (c.kind) {
      case ColliderKind::ground:  // across the up axis at its height; y-up at 0: the model's own ground
        if (c.position[1] == 0.0 && st.up_index() == 1) {
          b.ground = true;
          continue;
        }
        cd.type = GEOM_PLANE;
        cd.pos = {0, 0, 0};
        cd.pos[st.up_index()] = c.position[1];
        cd.rot = {};
        cd.size = {0, 0, 0};
        cd.size[st.up_index()] = 1;
        break;
      case ColliderKind::plane:
        cd.type = GEOM_PLANE;
        cd.rot = {};
        cd.size = d3(c.normal);
        break;
      case ColliderKind::sphere:
        cd.type = GEOM_SPHERE;
        cd.size = {c.size[0], 0, 0};
        break;
      case ColliderKind::box:
        cd.type = GEOM_BOX;
        cd.size = d3(c.size);
        break;
      case ColliderKind::capsule:
        cd.type = GEOM_CAPSULE;
        cd.size = {c.size[0], c.size[1], 0};
        break;
      case ColliderKind::mesh:
        mesh_collider_desc(cs.model, cs.objects[oi].shape, cd);
        break;
    }
    b.colliders.push_back(cd);
  }
  b.contact_ke = st.robot_contact.ke;
  b.contact_kd = st.robot_contact.kd;
  b.contact_kf = st.robot_contact.kf;
  b.contact_mu = st.robot_contact.mu;
  b.contact_eps = st.robot_contact.eps;
  b.contact_law = st.robot_contact.law == "depth_damped" ? CONTACT_DEPTH_DAMPED : CONTACT_SMOOTH;
}

// a robot's URDF or MJCF file into the builder, read as the object's import options say, its
// joint overrides and stated strengths applied: `index` maps each body's name to its builder
// body, `actuators` counts the actuators added, `warnings` takes the file's warnings
Status add_robot_file(const RobotObject& rb, const std::string& where, const std::string& base_dir, RigidBuilder& b,
                      std::map<std::string, int>& index, int& actuators, std::vector<std::string>& warnings) {
  UrdfOptions opt;
  opt.position = d3(rb.position);
  opt.rotation = euler_quat(rb.rotation);
  opt.fixed_base = rb.fixed_base;
  opt.default_actuators = rb.default_actuators;
  opt.actuator = actuator_desc(rb.default_actuator);
  if (rb.limit_ke >= 0) opt.limit_ke = rb.limit_ke;
  if (rb.limit_kd >= 0) opt.limit_kd = rb.limit_kd;
  opt.balance_inertia = rb.balance_inertia;
  opt.cylinder_segments = rb.cylinder_segments;
  std::map<std::string, int> joint_body;
  std::vector<std::string> joint_order;  // the file's joints, in its order
  // joints with a stated strength: torque actuators replace the file's
  const bool strengths = std::any_of(rb.joints.begin(), rb.joints.end(),
                                     [](const RobotJointOverride& j) { return j.strength.has_value(); });
  if (strengths) opt.default_actuators = false;
  std::filesystem::path path(rb.urdf);
  std::string full =
      path.is_absolute() || base_dir.empty() ? rb.urdf : (std::filesystem::path(base_dir) / path).string();
  if (rb.mjcf) {
    MjcfOptions mo;
    mo.position = opt.position;
    mo.rotation = opt.rotation;
    mo.world_geoms = false;  // the scene has its own ground and colliders
    mo.actuators = rb.default_actuators && !strengths;
    mo.limit_ke = opt.limit_ke, mo.limit_kd = opt.limit_kd;
    mo.balance_inertia = rb.balance_inertia;
    const RobotImport& im = rb.import;
    mo.density = im.density;
    mo.joint_damping = im.joint_damping, mo.joint_armature = im.joint_armature;
    mo.joint_stiffness = im.joint_stiffness;
    if (im.hinge_range) mo.hinge_range = {{(*im.hinge_range)[0] * M_PI / 180, (*im.hinge_range)[1] * M_PI / 180}};
    auto imp = rigid_import_mjcf(full, b, mo);
    if (!imp) return Status::error(where + ": " + imp.status().message());
    for (size_t i = 0; i < imp->bodies.size(); ++i) index[imp->names[i]] = imp->bodies[i];
    for (const MujocoJointMap& jm : imp->layout.joints) {
      joint_body[jm.name] = jm.body;
      joint_order.push_back(jm.name);
    }
    for (const std::string& w : imp->warnings) warnings.push_back(where + ": " + w);
    actuators += int(imp->actuators.size());
  } else {
    auto imp = rigid_import_urdf(full, b, opt);
    if (!imp) return Status::error(where + ": " + imp.status().message());
    for (size_t i = 0; i < imp->bodies.size(); ++i) {
      index[imp->links[i]] = imp->bodies[i];
      if (imp->joints[i].empty()) continue;
      joint_body[imp->joints[i]] = imp->bodies[i];
      joint_order.push_back(imp->joints[i]);
    }
    for (const std::string& w : imp->warnings) warnings.push_back(where + ": " + w);
    actuators += int(imp->actuators.size());
  }
  if (Status st = override_joints(rb, where, joint_body, b); !st) return st;
  if (strengths) actuators += add_strength_actuators(rb, joint_order, joint_body, b);
  return Status::ok();
}

// a robot object placed in the builder: its bodies by name, its bodies' and actuators' ranges
struct Placed {
  size_t object;
  std::map<std::string, int> index;  // body name -> builder body
  int body_begin, body_end, actuator_begin, actuator_end;
};

// where a placed robot's bodies, coordinates, dofs and actuators lie in the compiled model, and
// its initial joint states (the rest state's, where the object lists none)
template <class S>
Status place_robot(const Object& o, const Placed& p, CompiledSceneT<S>& out) {
  const RigidModelT<S>& m = out.model.rigid;
  const std::string where = "objects[" + std::to_string(p.object) + "] (\"" + o.name + "\")";
  ObjectRange& r = out.objects[p.object];
  r.body_begin = p.body_begin, r.body_end = p.body_end;
  r.q_begin = m.joint_q_start[p.body_begin], r.q_end = m.joint_q_start[p.body_end];
  r.dof_begin = m.joint_dof_start[p.body_begin], r.dof_end = m.joint_dof_start[p.body_end];
  r.actuator_begin = p.actuator_begin, r.actuator_end = p.actuator_end;
  for (size_t i = 0; i < o.robot.initial.size(); ++i) {
    const RobotInitial& in = o.robot.initial[i];
    const std::string iw = where + ".initial[" + std::to_string(i) + "]";
    auto it = p.index.find(in.body);
    if (it == p.index.end()) return Status::error(iw + ".body: no body named \"" + in.body + "\"");
    int j = it->second;
    int nq = m.joint_q_start[j + 1] - m.joint_q_start[j], nv = m.joint_dof_start[j + 1] - m.joint_dof_start[j];
    if (!in.q.empty() && int(in.q.size()) != nq)
      return Status::error(iw + ".q: the joint of \"" + in.body + "\" has " + std::to_string(nq) + " coordinates");
    if (!in.qd.empty() && int(in.qd.size()) != nv)
      return Status::error(iw + ".qd: the joint of \"" + in.body + "\" has " + std::to_string(nv) + " dofs");
    std::vector<double> q = in.q;
    if (Status s = normalize_joint_quat(m.joint_type[j], iw + ".q", q); !s) return s;
    for (int k = 0; k < int(q.size()); ++k) out.model.joint_q[m.joint_q_start[j] + k] = S(q[k]);
    for (int k = 0; k < int(in.qd.size()); ++k) out.model.joint_qd[m.joint_dof_start[j] + k] = S(in.qd[k]);
  }
  return Status::ok();
}

// a mesh collider is solid behind its faces to the bodies' boxes and mesh shapes (their corners
// and hull vertices: geometry.h's mesh_solid_distance), so its winding says which side is
// solid. warned of (once per mesh collider, when the robots have such shapes) where it looks
// wound the wrong way: a closed mesh whose faces point inward (negative volume about its
// centre), or an open sheet (its faces' area-weighted normals summing to over half its area: a
// terrain) facing down the up axis
template <class S>
void warn_mesh_winding(const Scene& scene, CompiledSceneT<S>& out) {
  const RigidModelT<S>& m = out.model.rigid;
  bool points = false;
  for (int s = 0; s < m.shape_count(); ++s)
    points = points || m.shape_type[s] == GEOM_BOX || m.shape_type[s] == GEOM_MESH;
  if (!points) return;
  const ModelT<S>& pm = out.model;
  for (size_t oi = 0; oi < scene.objects.size(); ++oi) {
    const Object& o = scene.objects[oi];
    if (o.kind != ObjectKind::collider || o.collider.kind != ColliderKind::mesh) continue;
    const int shape = out.objects[oi].shape, t0 = pm.shape_mesh_start[shape], nt = pm.shape_mesh_count[shape];
    auto vertex = [&](int i) {
      const vec3<S>& v = pm.mesh_vertices[i];
      return vec3<double>(double(v.x), double(v.y), double(v.z));
    };
    vec3<double> centre, normal_sum;
    double area = 0, volume = 0;
    int corners = 0;
    for (int t = t0; t < t0 + nt; ++t)
      for (int i : {pm.mesh_tris[t].i, pm.mesh_tris[t].j, pm.mesh_tris[t].k}) centre += vertex(i), ++corners;
    if (corners == 0) continue;
    centre = centre / double(corners);
    for (int t = t0; t < t0 + nt; ++t) {
      const vec3<double> a = vertex(pm.mesh_tris[t].i), b = vertex(pm.mesh_tris[t].j), c = vertex(pm.mesh_tris[t].k);
      const vec3<double> n2 = cross(b - a, c - a);  // twice the area, along the outward normal
      area += 0.5 * length(n2);
      normal_sum += n2 * 0.5;
      volume += dot((a + b + c) / 3.0 - centre, n2) / 6;
    }
    vec3<double> up;
    up[scene.settings.up_index()] = 1;
    const bool sheet = length(normal_sum) > 0.5 * area;
    const bool wrong = sheet ? dot(normal_sum, up) < 0 : volume < 0;
    if (!wrong) continue;
    out.warnings.push_back("objects[" + std::to_string(oi) + "] (\"" + o.name + "\"): a mesh_collider whose faces " +
                           (sheet ? "face down" : "point inward") +
                           " (counter-clockwise seen from outside is the rule): robot bodies' boxes and mesh "
                           "shapes, which meet a mesh collider as a solid behind its faces, would be pushed " +
                           (sheet ? "down through it" : "into it from outside") +
                           "; reverse the winding of its triangles");
  }
}

}  // namespace

template <class S>
Status compile_robots(const Scene& scene, const std::string& base_dir, CompiledSceneT<S>& out) {
  RigidBuilder b;
  add_world(scene, out, b);
  std::vector<Placed> placed;
  int actuators = 0;
  for (size_t oi = 0; oi < scene.objects.size(); ++oi) {
    const Object& o = scene.objects[oi];
    if (o.kind != ObjectKind::robot) continue;
    const RobotObject& rb = o.robot;
    const std::string where = "objects[" + std::to_string(oi) + "] (\"" + o.name + "\")";
    Placed p{oi, {}, b.body_count(), 0, actuators, 0};
    Status added = rb.urdf.empty() ? add_listed(rb, where, base_dir, b, p.index)
                                   : add_robot_file(rb, where, base_dir, b, p.index, actuators, out.warnings);
    if (!added) return added;
    for (size_t a = 0; a < rb.actuators.size(); ++a) {
      auto it = p.index.find(rb.actuators[a].body);
      if (it == p.index.end())
        return Status::error(where + ".actuators[" + std::to_string(a) + "].body: no body named \"" +
                             rb.actuators[a].body + "\"");
      b.add_actuator(it->second, actuator_desc(rb.actuators[a]));
      ++actuators;
    }
    p.body_end = b.body_count();
    p.actuator_end = actuators;
    placed.push_back(std::move(p));
  }
  if (placed.empty()) return Status::ok();
  // the depth-damped law is the ground's only (engine/collision/body_contact.h's point_contact);
  // colliders and the pairs between robots would silently follow the smooth law
  if (b.contact_law == CONTACT_DEPTH_DAMPED && (!b.colliders.empty() || placed.size() > 1))
    return Status::error(
        "settings.robot_contact.law: \"depth_damped\" acts on the ground at height 0 only; this "
        "scene has " +
        std::string(placed.size() > 1 ? "more than one robot" : "static colliders") +
        " (use \"smooth\", or one robot on the ground)");

  // body-body contact: shapes of different robots (trees) touch, a robot's own bodies do not
  // (RigidModel::self_collision off); the shapes' group/mask filters exclude pairs
  auto model = b.finalize<S>();
  if (!model) return Status::error("scene \"" + scene.name + "\": robots: " + model.status().message());
  out.model.rigid = std::move(model.value());
  const RigidModelT<S>& m = out.model.rigid;
  warn_mesh_winding(scene, out);
  StateT<S> rest = m.make_state();
  out.model.joint_q = std::move(rest.joint_q);
  out.model.joint_qd = std::move(rest.joint_qd);
  for (const Placed& p : placed)
    if (Status s = place_robot(scene.objects[p.object], p, out); !s) return s;
  return Status::ok();
}

template Status compile_robots<float>(const Scene&, const std::string&, CompiledSceneT<float>&);
template Status compile_robots<double>(const Scene&, const std::string&, CompiledSceneT<double>&);

}  // namespace adj::scene
