#include "app/editor/authoring.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/optim/write_back.h"

namespace adj::editor {

using scene::ObjectKind;
using scene::V3;

scene::Scene starter_scene() {
  scene::Scene s;
  s.name = "untitled";
  scene::Object ground;
  ground.name = "ground";
  ground.kind = ObjectKind::collider;
  ground.collider.kind = scene::ColliderKind::ground;
  // a 0.96 m cloth, 1 m over the ground. Semi-implicit Euler is stable while the substep
  // h = dt / substeps stays under 2 / omega, omega = sqrt(k / m) of the stiffest membrane
  // mode (k: the summed triangle stiffness at a vertex, set by tri_ke and tri_ka = 1e3 and
  // independent of the cell size). Measured at 8 substeps of 1/60 s: 10 g particles diverge
  // in frame 1 ("particle 6 position is not finite"), 20 g in frame 3, 30 g run, so the limit
  // is near 25 g (k ~ 2.3e4 N/m). 50 g particles (as the reference cloth, default.json) give
  // h omega ~ 1.4, a margin of sqrt(2); 10 g ran only from 16 substeps.
  scene::Object cloth;
  cloth.name = "cloth";
  cloth.kind = ObjectKind::cloth;
  cloth.cloth.nx = cloth.cloth.ny = 16;
  cloth.cloth.cell = 0.06;
  cloth.cloth.position = {-0.48, 1.0, -0.48};
  cloth.cloth.rotation = {90, 0, 0};
  cloth.cloth.particle_mass = 0.05;
  cloth.cloth.radius = 0.03;
  cloth.cloth.material.edge_ke = 0.5;
  s.settings.damping = 0.1;
  s.objects = {ground, cloth};
  return s;
}

namespace {

constexpr const char* k_obj = ".obj";
constexpr const char* k_mesh = ".obj,.stl";
constexpr const char* k_urdf = ".urdf";
constexpr const char* k_mjcf = ".xml";

const std::array k_entries = {
    AddEntry{AddKind::particle, "particle", "Particle", "Particles"},
    AddEntry{AddKind::particle_lattice, "lattice", "Lattice (springs)", "Particles"},
    AddEntry{AddKind::cloth_grid, "cloth", "Cloth grid", "Cloth"},
    AddEntry{AddKind::cloth_obj, "cloth-obj", "Cloth from OBJ...", "Cloth", k_obj},
    AddEntry{AddKind::soft_grid, "soft", "Soft body grid", "Soft body"},
    AddEntry{AddKind::soft_obj, "soft-obj", "Soft body from OBJ...", "Soft body", k_obj},
    AddEntry{AddKind::ground, "ground", "Ground", "Collider"},
    AddEntry{AddKind::plane, "plane", "Plane", "Collider"},
    AddEntry{AddKind::sphere, "sphere", "Sphere", "Collider"},
    AddEntry{AddKind::box, "box", "Box", "Collider"},
    AddEntry{AddKind::capsule, "capsule", "Capsule", "Collider"},
    AddEntry{AddKind::mesh_collider, "mesh", "Mesh from OBJ...", "Collider", k_obj},
    AddEntry{AddKind::target, "target", "Target", ""},
    AddEntry{AddKind::body_box, "body-box", "Box", "Rigid body"},
    AddEntry{AddKind::body_sphere, "body-sphere", "Sphere", "Rigid body"},
    AddEntry{AddKind::body_capsule, "body-capsule", "Capsule", "Rigid body"},
    AddEntry{AddKind::body_mesh, "body-mesh", "Mesh from OBJ/STL...", "Rigid body", k_mesh},
    AddEntry{AddKind::urdf, "urdf", "URDF robot...", "Robot", k_urdf},
    AddEntry{AddKind::mjcf, "mjcf", "MJCF robot...", "Robot", k_mjcf},
};

const std::array k_templates = {
    TemplateEntry{"Cloth throw", "cloth_throw.json"},          TemplateEntry{"Cloth onto a target", "default.json"},
    TemplateEntry{"Soft block pushed", "push_block.json"},     TemplateEntry{"Arm reach", "robot_arm_reach.json"},
    TemplateEntry{"Arm push", "robot_arm_push.json"},          TemplateEntry{"Quadruped walk", "robot_walker.json"},
    TemplateEntry{"Cartpole swing-up", "robot_cartpole.json"},
};

V3 add(const V3& a, const V3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }

// a cube of 3 x 3 x 3 particles, 0.1 m apart, springs to every neighbour within a cell
scene::ParticlesObject lattice(const V3& corner) {
  scene::ParticlesObject p;
  constexpr int n = 3;
  constexpr double d = 0.1;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        scene::Particle q;
        q.position = add(corner, {i * d, j * d, k * d});
        q.mass = 0.1;
        q.radius = 0.03;
        p.particles.push_back(q);
      }
  auto at = [](int i, int j, int k) { return (i * n + j) * n + k; };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        for (int di = 0; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dk = -1; dk <= 1; ++dk) {
              // each pair once: the neighbour later in (i, j, k) order
              if (di == 0 && (dj < 0 || (dj == 0 && dk <= 0))) continue;
              const int a = i + di, b = j + dj, c = k + dk;
              if (a >= n || b < 0 || b >= n || c < 0 || c >= n) continue;
              scene::Spring s;
              s.i = at(i, j, k);
              s.j = at(a, b, c);
              s.ke = 200.0;
              s.kd = 1.0;
              p.springs.push_back(s);
            }
  return p;
}

// a one-body robot with a free joint: a rigid body that falls and tumbles
scene::RobotObject free_body(scene::RobotShapeKind kind, const V3& centre, const std::string& file) {
  scene::RobotObject r;
  r.position = centre;
  scene::RobotBody b;
  b.name = "body";
  b.joint = scene::RobotJointKind::free;
  scene::RobotShape shape;
  shape.kind = kind;
  shape.density = 500;
  shape.size = kind == scene::RobotShapeKind::capsule ? V3{0.08, 0.12, 0.08} : V3{0.1, 0.1, 0.1};
  if (kind == scene::RobotShapeKind::mesh) {
    shape.file = file;
    shape.scale = {0.1, 0.1, 0.1};
  }
  b.shapes.push_back(shape);
  r.bodies.push_back(b);
  return r;
}

}  // namespace

std::span<const AddEntry> add_entries() { return k_entries; }

const AddEntry* find_add_entry(std::string_view id) {
  for (const AddEntry& e : k_entries)
    if (id == e.id) return &e;
  return nullptr;
}

std::span<const TemplateEntry> templates() { return k_templates; }

Result<scene::Object> make_object(AddKind kind, const std::string& name, const V3& at, const std::string& file,
                                  const std::string& up) {
  for (const AddEntry& e : k_entries)
    if (e.kind == kind && e.file_filter && file.empty())
      return Status::error(std::string("add ") + e.id + ": needs a file (" + e.file_filter + ")");
  scene::Object o;
  o.name = name;
  using C = scene::ColliderKind;
  const bool z_up = up == "z";
  // `at` moved by an offset given as (along x, along up, across): the offsets below are y-up's
  auto add = [&](const V3& a, const V3& d) -> V3 {
    const V3 w = z_up ? V3{d[0], d[2], d[1]} : d;
    return {a[0] + w[0], a[1] + w[1], a[2] + w[2]};
  };
  auto collider = [&](C c, const V3& size, double lift) {
    o.kind = ObjectKind::collider;
    o.collider.kind = c;
    o.collider.size = size;
    o.collider.position = add(at, {0, lift, 0});
  };
  switch (kind) {
    case AddKind::particle:
      o.kind = ObjectKind::particles;
      o.particles.particles.push_back({add(at, {0, 0.5, 0}), {0, 0, 0}, 1.0, 0.05});
      break;
    case AddKind::particle_lattice:
      o.kind = ObjectKind::particles;
      o.particles = lattice(add(at, {-0.1, 0.3, -0.1}));
      break;
    case AddKind::cloth_grid:
    case AddKind::cloth_obj: {
      o.kind = ObjectKind::cloth;
      const scene::Scene starter = starter_scene();
      o.cloth = starter.objects[1].cloth;  // the starter's stable material
      if (kind == AddKind::cloth_obj) {
        o.cloth.mesh = file;
        o.cloth.rotation = {0, 0, 0};
        o.cloth.position = add(at, {0, 1.0, 0});
      } else {
        const double half = 0.5 * o.cloth.nx * o.cloth.cell;
        o.cloth.position = add(at, {-half, 1.0, -half});
        if (z_up) o.cloth.rotation = {0, 0, 0};  // the grid's own plane (xy) is level in a z-up scene
      }
      break;
    }
    case AddKind::soft_grid:
    case AddKind::soft_obj:
      // 0.3 m cube of 0.1 m cells, light foam (as push_block's block)
      o.kind = ObjectKind::soft;
      o.soft.nx = o.soft.ny = o.soft.nz = 3;
      o.soft.cell = 0.1;
      o.soft.material = {300, 5e3, 1e4, 5};
      if (kind == AddKind::soft_obj) {
        o.soft.mesh = file;
        o.soft.scale = 0.2;
        o.soft.position = add(at, {0, 0.3, 0});
      } else {
        o.soft.position = add(at, {-0.15, 0.05, -0.15});
      }
      break;
    case AddKind::ground:
      o.kind = ObjectKind::collider;
      o.collider.kind = C::ground;
      o.collider.position = {0, at[z_up ? 2 : 1], 0};  // a ground's height is position[1], along up
      break;
    case AddKind::plane:  // level with the ground at `at`: an infinite plane tilted here would cut
                          // through whatever stands on its high side; tilt it with its normal
      collider(C::plane, {1, 1, 1}, 0);
      break;
    case AddKind::sphere:
      collider(C::sphere, {0.25, 0.25, 0.25}, 0.25);
      break;
    case AddKind::box:
      collider(C::box, {0.25, 0.25, 0.25}, 0.25);
      break;
    case AddKind::capsule:
      collider(C::capsule, {0.1, 0.25, 0.1}, 0.35);
      break;
    case AddKind::mesh_collider:
      collider(C::mesh, {1, 1, 1}, 0);
      o.collider.mesh = file;
      o.collider.scale = 0.25;
      break;
    case AddKind::target:
      o.kind = ObjectKind::target;
      o.target.position = add(at, {0, 0.1, 0});
      o.target.radius = 0.1;
      break;
    case AddKind::body_box:
    case AddKind::body_sphere:
    case AddKind::body_capsule:
    case AddKind::body_mesh: {
      using R = scene::RobotShapeKind;
      const R shape = kind == AddKind::body_box       ? R::box
                      : kind == AddKind::body_sphere  ? R::sphere
                      : kind == AddKind::body_capsule ? R::capsule
                                                      : R::mesh;
      o.kind = ObjectKind::robot;
      o.robot = free_body(shape, add(at, {0, 0.5, 0}), file);
      break;
    }
    case AddKind::urdf:
      o.kind = ObjectKind::robot;
      o.robot.urdf = file;
      o.robot.position = add(at, {0, 0.0, 0});
      o.robot.fixed_base = true;
      break;
    case AddKind::mjcf:  // MJCF is z-up: in a y-up scene stood up by -90 deg about x, in a z-up one as it is
      o.kind = ObjectKind::robot;
      o.robot.urdf = file;
      o.robot.mjcf = true;
      o.robot.position = add(at, {0, 0.0, 0});
      if (!z_up) o.robot.rotation = {-90, 0, 0};
      break;
  }
  return o;
}

namespace {

// an object's place on the ground plane: centre (x, and z, or y in a z-up scene: `across`) and
// the radius it covers there [m]; false for those that span the scene (ground, plane)
struct Footprint {
  double x = 0, z = 0, r = 0;
};

bool footprint(const scene::Object& o, Footprint* f, int across = 2) {
  auto at = [&](const V3& p, double r) { return *f = {p[0], p[size_t(across)], r}, true; };
  switch (o.kind) {
    case ObjectKind::particles: {
      if (o.particles.particles.empty()) return false;
      V3 c{0, 0, 0};
      for (const scene::Particle& p : o.particles.particles) c = add(c, p.position);
      const double n = double(o.particles.particles.size());
      c = {c[0] / n, 0, c[2] / n};
      double r = 0;
      for (const scene::Particle& p : o.particles.particles)
        r = std::max(r, std::hypot(p.position[0] - c[0], p.position[2] - c[2]) + p.radius);
      return at(c, r);
    }
    case ObjectKind::cloth: {
      const scene::ClothObject& c = o.cloth;
      if (!c.mesh.empty()) return at(c.position, 0.5 * c.scale);
      const double hx = 0.5 * c.nx * c.cell, hz = 0.5 * c.ny * c.cell;
      return at(add(c.position, {hx, 0, hz}), std::hypot(hx, hz));
    }
    case ObjectKind::soft: {
      const scene::SoftObject& so = o.soft;
      if (!so.mesh.empty()) return at(so.position, 0.5 * so.scale);
      const double hx = 0.5 * so.nx * so.cell, hz = 0.5 * so.nz * so.cell;
      return at(add(so.position, {hx, 0, hz}), std::hypot(hx, hz));
    }
    case ObjectKind::collider: {
      const scene::Collider& c = o.collider;
      if (c.kind == scene::ColliderKind::ground || c.kind == scene::ColliderKind::plane) return false;
      if (c.kind == scene::ColliderKind::mesh) return at(c.position, c.scale);
      return at(c.position, c.kind == scene::ColliderKind::box ? std::hypot(c.size[0], c.size[2]) : c.size[0]);
    }
    case ObjectKind::target:
      return at(o.target.position, o.target.radius);
    case ObjectKind::robot:
      return at(o.robot.position, o.robot.urdf.empty() ? 0.2 : 0.6);
  }
  return false;
}

}  // namespace

V3 free_spot(const scene::Scene& s, const V3& at, double radius) {
  constexpr double margin = 0.1, spacing = 0.5;           // [m]
  const int across = s.settings.up_index() == 2 ? 1 : 2;  // the ground's second axis
  auto free = [&](double x, double z) {
    for (const scene::Object& o : s.objects) {
      Footprint f;
      if (footprint(o, &f, across) && std::hypot(f.x - x, f.z - z) < f.r + radius + margin) return false;
    }
    return true;
  };
  // rings of grid cells around `at`, nearest first within a ring
  for (int ring = 0; ring < 64; ++ring) {
    double best = 1e300;
    V3 spot{};
    for (int i = -ring; i <= ring; ++i)
      for (int k = -ring; k <= ring; ++k) {
        if (std::max(std::abs(i), std::abs(k)) != ring) continue;
        const double x = at[0] + i * spacing, z = at[size_t(across)] + k * spacing,
                     d = std::hypot(x - at[0], z - at[size_t(across)]);
        if (d < best && free(x, z)) best = d, spot = at, spot[0] = x, spot[size_t(across)] = z;
      }
    if (best < 1e300) return spot;
  }
  return at;
}

double footprint_radius(const scene::Object& o) {
  Footprint f;
  return footprint(o, &f) ? f.r : 0.0;
}

std::optional<scene::Settings> settings_for_added(const scene::Scene& s, const scene::Object& o) {
  auto robot = [](const scene::Object& x) { return x.kind == ObjectKind::robot; };
  if (!robot(o) || std::any_of(s.objects.begin(), s.objects.end(), robot) ||
      !(s.settings.robot_contact == scene::RobotContactSettings{}))
    return std::nullopt;
  scene::Settings out = s.settings;
  out.robot_contact.ke = 1e4;
  out.robot_contact.kd = 1e2;
  out.robot_contact.kf = 1e2;
  out.robot_contact.mu = 0.8;
  return out;
}

std::optional<std::vector<double>> parse_number_list(std::string_view text) {
  std::vector<double> out;
  const std::string t(text);
  std::size_t p = 0;
  while (p < t.size()) {
    const std::size_t comma = std::min(t.find(',', p), t.size());
    const std::string item = t.substr(p, comma - p);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end == item.c_str() || *end != 0 || !std::isfinite(v)) return std::nullopt;
    out.push_back(v);
    p = comma + 1;
  }
  if (!t.empty() && t.back() == ',') return std::nullopt;
  return out;
}

std::string number_list_text(const std::vector<double>& v, const char* format) {
  std::string s;
  char buf[32];
  for (std::size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buf, sizeof buf, format, v[k]);
    if (k) s += ',';
    s += buf;
  }
  return s;
}

std::string unique_task_name(const scene::Scene& s, const std::string& base_in) {
  const std::string base = base_in.empty() ? "task" : base_in;
  auto taken = [&](const std::string& n) {
    return std::any_of(s.tasks.begin(), s.tasks.end(), [&](const scene::Task& t) { return t.name == n; });
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ".%03d", i);
    if (!taken(base + suffix)) return base + suffix;
  }
}

scene::Task make_task(const scene::Scene& s, const std::string& name, int horizon) {
  scene::Task t;
  t.name = unique_task_name(s, name);
  t.horizon = std::max(1, horizon);
  t.optimizer.iterations = 20;
  t.optimizer.lr = 0.1;  // Adam: about 0.1 (m/s, N, ...) per iteration
  // the first moving object onto the first target, when there are both
  std::string mover, target;
  for (const scene::Object& o : s.objects) {
    const bool moves = o.kind == ObjectKind::cloth || o.kind == ObjectKind::soft || o.kind == ObjectKind::particles;
    if (moves && mover.empty()) mover = o.name;
    if (o.kind == ObjectKind::target && target.empty()) target = o.name;
  }
  if (!mover.empty() && !target.empty()) {
    scene::LossTerm l;
    l.kind = scene::LossKind::position;
    l.object = mover;
    l.target = target;
    t.loss.push_back(l);
  }
  return t;
}

std::vector<std::string> apply_optimization(const Snapshot& snap, const std::vector<float>& theta,
                                            const scene::CompiledScene& cs, scene::Scene& doc) {
  const scene::Task* task = doc.find_task(snap.opt_task);
  if (!task) return {"no task named \"" + snap.opt_task + "\" to apply"};
  // each block to its side (robots, particles), as the task applied it
  std::vector<std::string> notes = optim::write_back_task(snap.blocks, theta, cs, doc);
  for (scene::Task& t : doc.tasks)
    if (t.name == snap.opt_task) optim::store_values(snap.blocks, theta, t);
  return notes;
}

}  // namespace adj::editor
