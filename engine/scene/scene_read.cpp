// scene files -> Scene: every error with the file and the JSON path
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "engine/scene/scene_json.h"
#include "engine/scene/scene_json_detail.h"

namespace adj::scene {

using namespace json_detail;

namespace {

// ---------------------------------------------------------------- reading

void read_contact(Reader& r, const json& j, const std::string& path, ContactSettings& c) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "ke", c.ke, 0);
  r.number(f, "kd", c.kd, 0);
  r.number(f, "kf", c.kf, 0);
  r.number(f, "mu", c.mu, 0);
  r.number(f, "eps", c.eps, 1e-9);
  r.boolean(f, "particle_contact", c.particle_contact);
  r.finish(f);
}

// a term's "particles": indices within its object (checked against the object when the task is made)
void read_particle_indices(Reader& r, Fields& f, std::vector<int>& out) {
  const json* ps = r.array(f, "particles");
  if (!ps) return;
  for (size_t k = 0; k < ps->size(); ++k) {
    const json& e = (*ps)[k];
    if (!e.is_number_integer() || e.get<long long>() < 0 || e.get<long long>() > (1LL << 30))
      r.error(Reader::index(Reader::join(f.path, "particles"), k), "expected a particle index (an integer >= 0)");
    else
      out.push_back(e.get<int>());
  }
}

void read_observation(Reader& r, const json& a, const std::string& path, PolicySpec& p) {
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string op = Reader::index(path, i);
    if (!r.is_object(a[i], op)) continue;
    Fields of{a[i], op, {}};
    ObservationTerm o;
    int k = r.choice(of, "kind",
                     {"height", "orientation", "velocity", "angular_velocity", "joint_positions", "joint_velocities",
                      "up_projection", "heading_projection", "previous_action", "object_position", "object_velocity"},
                     true);
    if (k >= 0) o.kind = static_cast<ObservationKind>(k);
    r.string(of, "body", o.body);
    r.string(of, "object", o.object);
    read_particle_indices(r, of, o.particles);
    r.vec3(of, "axis", o.axis);
    r.vec3(of, "direction", o.direction);
    r.number(of, "scale", o.scale);
    if (const json* x = r.array(of, "exclude")) {
      for (size_t e = 0; e < x->size(); ++e) {
        if (!(*x)[e].is_string())
          r.error(Reader::index(Reader::join(op, "exclude"), e), "expected a body name (its joint is left out)");
        else
          o.exclude.push_back((*x)[e].get<std::string>());
      }
    }
    const bool joints = o.kind == ObservationKind::joint_positions || o.kind == ObservationKind::joint_velocities ||
                        o.kind == ObservationKind::previous_action;
    if (k >= 0 && reads_object(o.kind) && o.object.empty())
      r.error(Reader::join(op, "object"), "missing: which particle object does it read?");
    else if (k >= 0 && !reads_object(o.kind) && !o.particles.empty())
      r.error(Reader::join(op, "particles"), "only object_position and object_velocity read particles");
    else if (k >= 0 && !joints && !reads_object(o.kind) && o.body.empty())
      r.error(Reader::join(op, "body"), "missing: which body does it read?");
    r.finish(of);
    p.observation.push_back(o);
  }
}

// "quantity": [lo, hi] (uniform) or {"range": [lo, hi], "distribution": "uniform" | "log_uniform"}
void read_random_range(Reader& r, const json& v, const std::string& path, RandomRange& out) {
  const json* range = &v;
  if (v.is_object()) {
    Fields f{v, path, {}};
    range = r.field(f, "range", true);
    int d = r.choice(f, "distribution", {"uniform", "log_uniform"}, false);
    if (d >= 0) out.log_uniform = d == 1;
    r.finish(f);
    if (!range) return;
  }
  const std::string rp = v.is_object() ? Reader::join(path, "range") : path;
  if (!range->is_array() || range->size() != 2 || !(*range)[0].is_number() || !(*range)[1].is_number())
    return r.error(rp, "expected [lo, hi]: the range of the factor on the scene's value");
  const double lo = (*range)[0].get<double>(), hi = (*range)[1].get<double>();
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi))
    return r.error(rp, "expected 0 < lo <= hi (finite): factors on the scene's value");
  out.lo = lo;
  out.hi = hi;
}

void read_randomize(Reader& r, const json& j, const std::string& path, Randomization& out) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  for (const RandomQuantity& q : random_quantities())
    if (const json* v = r.field(f, q.name, false)) read_random_range(r, *v, Reader::join(path, q.name), out.*q.range);
  r.finish(f);
}

void read_settings(Reader& r, const json& j, const std::string& path, Settings& s) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "dt", s.dt, 1e-7, 1.0);
  r.integer(f, "substeps", s.substeps, 1, r.limits().max_substeps);
  int up = r.choice(f, "up", {"y", "z"}, false);
  if (up >= 0) s.up = up == 0 ? "y" : "z";
  if (s.up == "z") s.gravity = {0, 0, -9.81};  // the default along -up; a given gravity wins
  r.vec3(f, "gravity", s.gravity);
  r.number(f, "damping", s.damping, 0);
  int b = r.choice(f, "backend", {"cpu", "cuda"}, false);
  if (b >= 0) s.backend = b == 0 ? "cpu" : "cuda";
  int ig = r.choice(f, "integrator", {"explicit", "implicit"}, false);
  if (ig >= 0) s.integrator = ig == 0 ? "explicit" : "implicit";
  if (const json* c = r.field(f, "contact", false)) read_contact(r, *c, Reader::join(path, "contact"), s.contact);
  if (const json* c = r.field(f, "robot_contact", false)) {
    std::string cp = Reader::join(path, "robot_contact");
    if (r.is_object(*c, cp)) {
      Fields cf{*c, cp, {}};
      RobotContactSettings& rc = s.robot_contact;
      r.number(cf, "ke", rc.ke, 0);
      r.number(cf, "kd", rc.kd, 0);
      r.number(cf, "kf", rc.kf, 0);
      r.number(cf, "mu", rc.mu, 0);
      r.number(cf, "eps", rc.eps, 1e-9);
      int law = r.choice(cf, "law", {"smooth", "depth_damped"}, false);
      if (law >= 0) rc.law = law == 0 ? "smooth" : "depth_damped";
      r.finish(cf);
    }
  }
  if (const json* c = r.field(f, "randomize", false))
    read_randomize(r, *c, Reader::join(path, "randomize"), s.randomize);
  r.finish(f);
}

void read_particles(Reader& r, Fields& f, ParticlesObject& p) {
  if (const json* a = r.array(f, "particles", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string ip = Reader::index(Reader::join(f.path, "particles"), i);
      if (!r.is_object((*a)[i], ip)) continue;
      Fields pf{(*a)[i], ip, {}};
      Particle q;
      r.vec3(pf, "position", q.position, true);
      r.vec3(pf, "velocity", q.velocity);
      r.number(pf, "mass", q.mass, 0);
      r.number(pf, "radius", q.radius, 0);
      r.finish(pf);
      p.particles.push_back(q);
    }
  }
  const long long n = static_cast<long long>(p.particles.size());
  if (const json* a = r.array(f, "springs")) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string sp = Reader::index(Reader::join(f.path, "springs"), i);
      if (!r.is_object((*a)[i], sp)) continue;
      Fields sf{(*a)[i], sp, {}};
      Spring s;
      r.integer(sf, "i", s.i, 0, n > 0 ? n - 1 : 0, true);
      r.integer(sf, "j", s.j, 0, n > 0 ? n - 1 : 0, true);
      if (s.i == s.j && sf.j.contains("i") && sf.j.contains("j")) r.error(sp, "a spring needs two different particles");
      r.number(sf, "ke", s.ke, 0);
      r.number(sf, "kd", s.kd, 0);
      r.number(sf, "rest", s.rest);
      r.boolean(sf, "actuated", s.actuated);
      r.finish(sf);
      p.springs.push_back(s);
    }
  }
}

void read_cloth_material(Reader& r, const json& j, const std::string& path, ClothMaterialSpec& m) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "tri_ke", m.tri_ke, 0);
  r.number(f, "tri_ka", m.tri_ka, 0);
  r.number(f, "tri_kd", m.tri_kd, 0);
  r.number(f, "edge_ke", m.edge_ke, 0);
  r.number(f, "edge_kd", m.edge_kd, 0);
  r.number(f, "lift", m.lift, 0);
  r.number(f, "drag", m.drag, 0);
  r.finish(f);
}

void read_soft_material(Reader& r, const json& j, const std::string& path, SoftMaterialSpec& m) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "density", m.density, 1e-6);
  r.number(f, "mu", m.mu, 0);
  r.number(f, "lambda", m.lambda, 0);
  r.number(f, "kd", m.kd, 0);
  r.finish(f);
}

// the "grid" block of cloth and soft bodies, with a cell-count limit
void read_grid(Reader& r, Fields& f, int* nx, int* ny, int* nz, double& cell) {
  const json* g = r.field(f, "grid", false);
  if (!g) return;
  std::string gp = Reader::join(f.path, "grid");
  if (!r.is_object(*g, gp)) return;
  Fields gf{*g, gp, {}};
  const long long lim = r.limits().max_grid_cells;
  r.integer(gf, "nx", *nx, 1, lim);
  r.integer(gf, "ny", *ny, 1, lim);
  if (nz) r.integer(gf, "nz", *nz, 1, lim);
  r.number(gf, "cell", cell, 1e-6, 1e6);
  r.finish(gf);
  long long cells = (long long)*nx * *ny * (nz ? *nz : 1);
  if (cells > lim)
    r.error(gp, std::to_string(cells) + " cells is too many (at most " + std::to_string(lim) + "); use a coarser grid");
}

void read_object(Reader& r, const json& j, const std::string& path, Object& o) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", o.name, true);
  r.boolean(f, "visible", o.visible);
  int type = r.choice(f, "type",
                      {"particles", "cloth", "soft", "ground", "plane", "sphere", "box", "capsule", "mesh_collider",
                       "target", "robot", "urdf", "mjcf"},
                      true);
  switch (type) {
    case 0:
      o.kind = ObjectKind::particles;
      read_particles(r, f, o.particles);
      break;
    case 1: {
      o.kind = ObjectKind::cloth;
      ClothObject& c = o.cloth;
      r.string(f, "mesh", c.mesh);
      read_grid(r, f, &c.nx, &c.ny, nullptr, c.cell);
      r.vec3(f, "position", c.position);
      r.vec3(f, "rotation", c.rotation);
      r.number(f, "scale", c.scale, 1e-9);
      r.vec3(f, "velocity", c.velocity);
      r.number(f, "particle_mass", c.particle_mass, 0);
      r.number(f, "radius", c.radius, 0);
      r.boolean(f, "pin_left", c.pin_left);
      r.boolean(f, "pin_right", c.pin_right);
      if (const json* m = r.field(f, "material", false))
        read_cloth_material(r, *m, Reader::join(path, "material"), c.material);
      r.vec3_list(f, "particle_positions", c.particle_positions);
      r.vec3_list(f, "particle_velocities", c.particle_velocities);
      break;
    }
    case 2: {
      o.kind = ObjectKind::soft;
      SoftObject& s = o.soft;
      r.string(f, "mesh", s.mesh);
      read_grid(r, f, &s.nx, &s.ny, &s.nz, s.cell);
      if (!s.mesh.empty()) r.number(f, "cell", s.cell, 1e-6, 1e6);  // voxel size for meshes
      r.vec3(f, "position", s.position);
      r.vec3(f, "rotation", s.rotation);
      r.number(f, "scale", s.scale, 1e-9);
      r.vec3(f, "velocity", s.velocity);
      r.number(f, "radius", s.radius, 0);
      r.boolean(f, "pin_left", s.pin_left);
      r.boolean(f, "actuated", s.actuated);
      if (const json* m = r.field(f, "material", false))
        read_soft_material(r, *m, Reader::join(path, "material"), s.material);
      r.vec3_list(f, "particle_positions", s.particle_positions);
      r.vec3_list(f, "particle_velocities", s.particle_velocities);
      break;
    }
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8: {
      o.kind = ObjectKind::collider;
      Collider& c = o.collider;
      c.kind = static_cast<ColliderKind>(type - 3);
      r.vec3(f, "position", c.position);
      if (c.kind == ColliderKind::ground) {
        double h = c.position[1];
        r.number(f, "height", h);
        c.position = {0, h, 0};
      }
      if (c.kind == ColliderKind::plane) r.vec3(f, "normal", c.normal, true);
      if (c.kind == ColliderKind::box || c.kind == ColliderKind::sphere || c.kind == ColliderKind::capsule)
        r.vec3(f, "size", c.size, true);
      if (c.kind != ColliderKind::ground && c.kind != ColliderKind::plane) r.vec3(f, "rotation", c.rotation);
      if (c.kind == ColliderKind::mesh) {
        r.string(f, "mesh", c.mesh, true);
        r.number(f, "scale", c.scale, 1e-9);
      }
      if (c.kind == ColliderKind::plane) {
        double len = std::sqrt(c.normal[0] * c.normal[0] + c.normal[1] * c.normal[1] + c.normal[2] * c.normal[2]);
        if (len < 1e-9) r.error(Reader::join(path, "normal"), "must not be zero");
      }
      for (int k = 0; k < 3 && (c.kind == ColliderKind::box || c.kind == ColliderKind::sphere); ++k)
        if (c.size[k] <= 0 && (k == 0 || c.kind == ColliderKind::box))
          r.error(Reader::join(path, "size"), "sizes must be positive");
      break;
    }
    case 9:
      o.kind = ObjectKind::target;
      r.vec3(f, "position", o.target.position, true);
      r.number(f, "radius", o.target.radius, 0);
      if (const json* a = r.array(f, "points")) {
        std::string pp = Reader::join(path, "points");
        if ((long long)a->size() > r.limits().max_grid_cells)
          r.error(pp, std::to_string(a->size()) + " points is too many");
        else
          for (size_t i = 0; i < a->size(); ++i) {
            const json& q = (*a)[i];
            bool ok = q.is_array() && q.size() == 3;
            for (size_t c = 0; ok && c < 3; ++c) ok = q[c].is_number() && std::isfinite(q[c].get<double>());
            if (!ok) {
              r.error(Reader::index(pp, i), "expected [x, y, z] of finite numbers");
              break;
            }
            o.target.points.push_back({q[0].get<double>(), q[1].get<double>(), q[2].get<double>()});
          }
      }
      break;
    case 10:
    case 11:
    case 12:
      o.kind = ObjectKind::robot;
      o.robot.mjcf = type == 12;
      read_robot(r, f, o.robot, type >= 11);
      break;
    default:
      break;  // type error already reported; skip the object's other keys
  }
  if (type >= 0) r.finish(f);
}

// the task's entry of the sidecar file `file` (relative to the scene's folder)
void read_values_file(Reader& r, const std::string& path, const std::string& file, Task& t) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(r.source()).parent_path() / file;
  std::ifstream in(p, std::ios::binary);
  if (!in) return r.error(path, "cannot read the values file " + p.string());
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    return r.error(path, p.string() + ": not valid JSON: " + e.what());
  }
  LoadLimits big = r.limits();
  big.max_list = k_max_sidecar_values;
  Reader side(p.string(), big);
  if (!side.is_object(root, "")) return r.add_errors(side.errors());
  Fields f{root, "", {}};
  std::string format;
  side.string(f, "format", format, true);
  if (root.contains("format") && format != "adjoint-values") side.error("format", "expected \"adjoint-values\"");
  const json* tasks = side.field(f, "tasks", true);
  f.used.insert("version");
  side.finish(f);
  if (tasks && !tasks->is_object())
    side.error("tasks", "expected an object {task name: [...]}");
  else if (tasks && !tasks->contains(t.name))
    side.error("tasks", "no entry for the task \"" + t.name + "\"");
  else if (tasks && !(*tasks)[t.name].is_array())
    side.error("tasks." + t.name, "expected an array [...]");
  else if (tasks)
    read_values(side, (*tasks)[t.name], "tasks." + t.name, t.values);
  r.add_errors(side.errors());
}

// "shac": {...}: each key present overrides the trainer's default
void read_shac(Reader& r, const json& j, const std::string& path, ShacSpec& s) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  auto integer = [&](const char* key, std::optional<int>& out, long long lo, long long hi) {
    if (!f.j.contains(key)) return;
    int v = 0;
    r.integer(f, key, v, lo, hi);
    out = v;
  };
  auto number = [&](const char* key, std::optional<double>& out, double lo, double hi) {
    if (!f.j.contains(key)) return;
    double v = 0;
    r.number(f, key, v, lo, hi);
    out = v;
  };
  auto boolean = [&](const char* key, std::optional<bool>& out) {
    if (!f.j.contains(key)) return;
    bool v = false;
    r.boolean(f, key, v);
    out = v;
  };
  integer("window", s.window, 1, r.limits().max_horizon);
  integer("envs", s.envs, 1, 4096);
  number("actor_lr", s.actor_lr, 1e-12, 10);
  number("critic_lr", s.critic_lr, 1e-12, 10);
  boolean("lr_decay", s.lr_decay);
  number("lr_end", s.lr_end, 0, 10);
  if (f.j.contains("betas")) {
    std::vector<double> b;
    r.number_list(f, "betas", b);
    if (b.size() != 2 || !(b[0] >= 0 && b[0] < 1 && b[1] >= 0 && b[1] < 1))
      r.error(Reader::join(path, "betas"), "expected [beta1, beta2], each in [0, 1)");
    else
      s.betas = std::array<double, 2>{b[0], b[1]};
  }
  number("clip", s.clip, 0, k_inf);
  number("critic_clip", s.critic_clip, 0, k_inf);
  number("grad_bound", s.grad_bound, 0, k_inf);
  number("gamma", s.gamma, 1e-6, 1 - 1e-9);
  number("lambda", s.lambda, 0, 1);
  if (const json* h = r.array(f, "critic_hidden")) {
    std::vector<int> widths;
    for (size_t i = 0; i < h->size(); ++i) {
      if (!(*h)[i].is_number_integer() || (*h)[i].get<long long>() < 1 || (*h)[i].get<long long>() > 4096)
        r.error(Reader::index(Reader::join(path, "critic_hidden"), i), "expected a layer width in [1, 4096]");
      else
        widths.push_back((*h)[i].get<int>());
    }
    s.critic_hidden = widths;
  }
  if (f.j.contains("activation")) {
    const int k = r.choice(f, "activation", {"tanh", "elu"}, false);
    if (k >= 0) s.activation = k == 0 ? "tanh" : "elu";
  }
  boolean("layer_norm", s.layer_norm);
  if (f.j.contains("init")) {
    const int k = r.choice(f, "init", {"glorot", "orthogonal"}, false);
    if (k >= 0) s.init = k == 0 ? "glorot" : "orthogonal";
  }
  integer("critic_iterations", s.critic_iterations, 1, 10000);
  integer("critic_minibatches", s.critic_minibatches, 1, 10000);
  number("target_alpha", s.target_alpha, 0, 1 - 1e-12);
  number("action_noise", s.action_noise, 0, 100);
  number("log_std_init", s.log_std_init, -20, 5);
  boolean("normalize_observations", s.normalize_observations);
  r.finish(f);
}

// "ahac": {...}: each key present overrides AhacOptions' default
void read_ahac(Reader& r, const json& j, const std::string& path, AhacSpec& s) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  if (f.j.contains("contact_threshold")) {
    double v = 0;
    r.number(f, "contact_threshold", v, 1e-9, k_inf);
    s.contact_threshold = v;
  }
  if (f.j.contains("horizon_min")) {
    int v = 0;
    r.integer(f, "horizon_min", v, 1, r.limits().max_horizon);
    s.horizon_min = v;
  }
  if (f.j.contains("dual_lr")) {
    double v = 0;
    r.number(f, "dual_lr", v, 0, k_inf);
    s.dual_lr = v;
  }
  if (f.j.contains("double_critic")) {
    bool v = true;
    r.boolean(f, "double_critic", v);
    s.double_critic = v;
  }
  r.finish(f);
}

void read_task(Reader& r, const json& j, const std::string& path, Task& t) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", t.name, true);
  r.integer(f, "horizon", t.horizon, 1, r.limits().max_horizon, true);
  r.integer(f, "checkpoint_every", t.checkpoint_every, 0, r.limits().max_horizon);
  if (const json* e = r.field(f, "termination", false)) {
    const std::string ep = Reader::join(path, "termination");
    if (r.is_object(*e, ep)) {
      Fields ef{*e, ep, {}};
      r.string(ef, "object", t.termination.object, true);
      r.string(ef, "body", t.termination.body, true);
      r.number(ef, "height", t.termination.height, -k_inf, k_inf, true);
      r.finish(ef);
    }
  }
  double seed = double(t.seed);
  r.number(f, "seed", seed, 0, 9.0e15);
  t.seed = static_cast<uint64_t>(seed);

  if (const json* a = r.array(f, "parameters")) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string pp = Reader::index(Reader::join(path, "parameters"), i);
      if (!r.is_object((*a)[i], pp)) continue;
      Fields pf{(*a)[i], pp, {}};
      ParamSpec p;
      std::vector<const char*> kinds;
      for (int q = 0; q < k_param_kind_count; ++q) kinds.push_back(to_string(static_cast<ParamKind>(q)));
      int k = r.choice(pf, "kind", kinds, true);
      if (k >= 0) p.kind = static_cast<ParamKind>(k);
      r.string(pf, "object", p.object);
      // a number bounds every entry; a list bounds each element (an actuator, a joint...)
      for (auto [key, one, each] : {std::tuple{"lower", &p.lower, &p.lower_each}, {"upper", &p.upper, &p.upper_each}}) {
        auto it = pf.j.find(key);
        if (it != pf.j.end() && it->is_array())
          r.number_list(pf, key, *each);
        else
          r.number(pf, key, *one);
      }
      if (pf.j.contains("knots")) {
        const std::string kp = Reader::join(pp, "knots");
        int knots = 0;
        r.integer(pf, "knots", knots, -1000000000LL, 1000000000LL);
        if (!is_per_frame(p.kind))
          r.error(kp, std::string("only per-frame parameters (control_force, spring_activation, tet_activation, "
                                  "actuator_control) take knots; ") +
                          to_string(p.kind) + " has one value for the whole run");
        else if (pf.j.at("knots").is_number_integer() && (knots < 2 || knots > t.horizon))
          r.error(kp, "expected 2 .. " + std::to_string(t.horizon) + " (the horizon): knots sit on the first and " +
                          "the last frame and at most one on each frame, got " + std::to_string(knots));
        else
          p.knots = knots;
      }
      if (p.lower > p.upper) r.error(pp, "lower bound is above the upper bound");
      if (!p.lower_each.empty() && !p.upper_each.empty() && p.lower_each.size() != p.upper_each.size())
        r.error(Reader::join(pp, "upper"), "lists " + std::to_string(p.upper_each.size()) + " bounds, \"lower\" " +
                                               std::to_string(p.lower_each.size()) + " (one per element each)");
      for (size_t e = 0; e < std::min(p.lower_each.size(), p.upper_each.size()); ++e)
        if (p.lower_each[e] > p.upper_each[e])
          r.error(Reader::index(Reader::join(pp, "lower"), e), "lower bound is above the upper bound");
      r.finish(pf);
      t.parameters.push_back(p);
    }
  }
  if (const json* a = r.array(f, "values")) read_values(r, *a, Reader::join(path, "values"), t.values);
  std::string values_file;
  r.string(f, "values_file", values_file);
  if (!values_file.empty()) read_values_file(r, Reader::join(path, "values_file"), values_file, t);
  if (const json* a = r.array(f, "loss", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string lp = Reader::index(Reader::join(path, "loss"), i);
      if (!r.is_object((*a)[i], lp)) continue;
      Fields lf{(*a)[i], lp, {}};
      LossTerm l;
      int k = r.choice(lf, "kind",
                       {"position", "distance", "shape", "velocity", "effort", "joint", "cartpole", "height", "upright",
                        "speed", "reach", "forward_velocity", "up_projection", "heading", "height_reward", "alive"},
                       true);
      if (k >= 0) l.kind = static_cast<LossKind>(k);
      r.string(lf, "object", l.object);
      r.string(lf, "target", l.target);
      r.integer(lf, "step", l.step, -1, r.limits().max_horizon);
      r.vec3(lf, "axis", l.axis);
      r.number(lf, "weight", l.weight);
      r.string(lf, "body", l.body);
      r.number(lf, "value", l.value);
      r.vec3(lf, "direction", l.direction);
      r.number(lf, "lower", l.lower);
      r.number(lf, "upper", l.upper);
      r.number(lf, "above", l.above);
      r.number(lf, "below", l.below);
      r.number(lf, "quadratic", l.quadratic);
      read_particle_indices(r, lf, l.particles);
      if (!(l.lower <= l.upper)) r.error(Reader::join(lp, "upper"), "must not be below lower");
      r.finish(lf);
      t.loss.push_back(l);
    }
  }
  if (const json* o = r.field(f, "optimizer", false)) {
    std::string op = Reader::join(path, "optimizer");
    if (r.is_object(*o, op)) {
      Fields of{*o, op, {}};
      int k = r.choice(of, "kind", {"sgd", "adam"}, false);
      if (k >= 0) t.optimizer.kind = static_cast<OptimizerKind>(k);
      r.number(of, "lr", t.optimizer.lr, 0);
      r.number(of, "clip", t.optimizer.clip, 0);
      r.integer(of, "iterations", t.optimizer.iterations, 0, 10'000'000);
      r.boolean(of, "backtrack", t.optimizer.backtrack);
      r.finish(of);
    }
  }
  if (const json* sh = r.field(f, "shac", false)) read_shac(r, *sh, Reader::join(path, "shac"), t.shac);
  if (const json* ah = r.field(f, "ahac", false)) read_ahac(r, *ah, Reader::join(path, "ahac"), t.ahac);
  if (const json* p = r.field(f, "policy", false)) {
    std::string pp = Reader::join(path, "policy");
    if (r.is_object(*p, pp)) {
      t.has_policy = true;
      Fields pf{*p, pp, {}};
      if (const json* h = r.array(pf, "hidden")) {
        t.policy.hidden.clear();
        for (size_t i = 0; i < h->size(); ++i) {
          if (!(*h)[i].is_number_integer() || (*h)[i].get<long long>() < 1 || (*h)[i].get<long long>() > 4096)
            r.error(Reader::index(Reader::join(pp, "hidden"), i), "expected a layer width in [1, 4096]");
          else
            t.policy.hidden.push_back((*h)[i].get<int>());
        }
      }
      r.integer(pf, "phases", t.policy.phases, 0, 64);
      r.number(pf, "phase_period", t.policy.phase_period, 1e-6);
      r.number(pf, "output_scale", t.policy.output_scale, 0);
      r.number_list(pf, "action_scale", t.policy.action_scale);
      r.number_list(pf, "action_offset", t.policy.action_offset);
      r.number(pf, "start_q_range", t.policy.start_q_range, 0, 100);
      r.number(pf, "start_root_position_range", t.policy.start_root_position_range, 0, 100);
      r.number(pf, "start_root_angle_range", t.policy.start_root_angle_range, 0, 3.14159265358979);
      if (const json* a = r.array(pf, "observation"))
        read_observation(r, *a, Reader::join(pp, "observation"), t.policy);
      r.number(pf, "start_qd_range", t.policy.start_qd_range, 0, 1000);
      r.finish(pf);
    }
  }
  r.finish(f);
}

// names must be unique and references must resolve
void check_references(Reader& r, const Scene& s) {
  std::set<std::string> names;
  for (size_t i = 0; i < s.objects.size(); ++i) {
    const std::string& n = s.objects[i].name;
    if (!n.empty() && !names.insert(n).second)
      r.error(Reader::index("objects", i) + ".name", "\"" + n + "\" is used by an earlier object");
  }
  auto kind_of = [&](const std::string& n) -> const Object* { return s.find(n); };
  for (size_t ti = 0; ti < s.tasks.size(); ++ti) {
    const Task& t = s.tasks[ti];
    std::string tp = Reader::index("tasks", ti);
    for (size_t i = 0; i < t.parameters.size(); ++i) {
      const ParamSpec& p = t.parameters[i];
      bool scene_wide = is_scene_wide(p.kind);
      std::string pp = Reader::index(tp + ".parameters", i) + ".object";
      if (scene_wide) continue;
      const Object* o = kind_of(p.object);
      if (p.object.empty())
        r.error(pp, "missing: which object does this parameter belong to?");
      else if (!o)
        r.error(pp, "no object named \"" + p.object + "\"");
      else if (o->kind == ObjectKind::collider || o->kind == ObjectKind::target)
        r.error(pp, "\"" + p.object + "\" is a " + to_string(o->kind) + ": it has no particles");
      else if (is_robot_param(p.kind) != (o->kind == ObjectKind::robot))
        r.error(pp, std::string(to_string(p.kind)) + " does not apply to \"" + p.object + "\" (a " +
                        to_string(o->kind) + ")");
    }
    for (size_t i = 0; i < t.loss.size(); ++i) {
      const LossTerm& l = t.loss[i];
      std::string lp = Reader::index(tp + ".loss", i);
      if (l.kind != LossKind::effort) {
        const Object* o = kind_of(l.object);
        if (!o) r.error(lp + ".object", "no object named \"" + l.object + "\"");
      }
      if (l.kind == LossKind::position || l.kind == LossKind::shape || l.kind == LossKind::reach) {
        const Object* o = kind_of(l.target);
        if (!o || o->kind != ObjectKind::target) r.error(lp + ".target", "\"" + l.target + "\" is not a target object");
      }
      const Object* lo = kind_of(l.object);
      bool robot = lo && lo->kind == ObjectKind::robot;
      const bool reward = l.kind == LossKind::forward_velocity || l.kind == LossKind::up_projection ||
                          l.kind == LossKind::heading || l.kind == LossKind::height_reward;
      bool robot_only = l.kind == LossKind::joint || l.kind == LossKind::cartpole || l.kind == LossKind::height ||
                        l.kind == LossKind::upright || l.kind == LossKind::speed || l.kind == LossKind::reach ||
                        reward || l.kind == LossKind::alive;
      bool needs_body = (robot_only && l.kind != LossKind::cartpole && l.kind != LossKind::alive) ||
                        (robot && (l.kind == LossKind::position || l.kind == LossKind::distance));
      if (needs_body && l.body.empty()) r.error(lp + ".body", "missing: which body of the robot does this term read?");
      if (robot_only && lo && !robot) r.error(lp + ".object", "\"" + l.object + "\" is not a robot");
      if ((l.kind == LossKind::upright || l.kind == LossKind::speed || (reward && l.kind != LossKind::height_reward)) &&
          std::abs(l.axis[0]) + std::abs(l.axis[1]) + std::abs(l.axis[2]) < 1e-12)
        r.error(lp + ".axis", "must not be zero");
      if (robot && (l.kind == LossKind::shape || l.kind == LossKind::velocity))
        r.error(lp + ".kind", std::string(to_string(l.kind)) + " is not defined for robots");
      if (!l.particles.empty() && (robot || robot_only || l.kind == LossKind::effort))
        r.error(lp + ".particles", "only particle terms (position, distance, shape, velocity) read particles");
      if (l.step > t.horizon) r.error(lp + ".step", "is past the task's horizon (" + std::to_string(t.horizon) + ")");
    }
  }
}

}  // namespace

namespace json_detail {

void read_values(Reader& r, const json& a, const std::string& path, std::vector<ParamValues>& out) {
  for (size_t i = 0; i < a.size(); ++i) {
    std::string vp = Reader::index(path, i);
    if (!r.is_object(a[i], vp)) continue;
    Fields vf{a[i], vp, {}};
    ParamValues v;
    int k = r.choice(vf, "kind", {"control_force", "spring_activation", "policy", "tet_activation", "actuator_control"},
                     true);
    const ParamKind kinds[] = {ParamKind::control_force, ParamKind::spring_activation, ParamKind::policy,
                               ParamKind::tet_activation, ParamKind::actuator_control};
    if (k >= 0) v.kind = kinds[k];
    r.string(vf, "object", v.object);
    r.number_list(vf, "values", v.values, true);
    r.finish(vf);
    out.push_back(std::move(v));
  }
}

}  // namespace json_detail

Result<Scene> parse_scene(const std::string& text, const std::string& source, const LoadLimits& limits) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // byte offset -> line:column
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    auto cut = what.find("parse error");
    return Status::error(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                         ": not valid JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  } catch (const json::exception& e) {
    // e.g. a number too large for a double (1e999)
    std::string what = e.what();
    auto cut = what.find(']');
    return Status::error(source + ": not valid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
  }

  Reader r(source, limits);
  Scene s;
  if (!r.is_object(root, "")) return Status::error(r.errors().front());
  Fields f{root, "", {}};
  std::string format;
  r.string(f, "format", format, true);
  if (f.j.contains("format") && format != "adjoint-scene")
    r.error("format", "expected \"adjoint-scene\", found \"" + format + "\"");
  int version = 0;
  r.integer(f, "version", version, 0, 1'000'000, true);
  if (version > k_format_version)
    r.error("version", "version " + std::to_string(version) + " is newer than this program reads (" +
                           std::to_string(k_format_version) + "); update Adjoint");
  r.string(f, "name", s.name);
  if (const json* st = r.field(f, "settings", false)) read_settings(r, *st, "settings", s.settings);
  if (const json* a = r.array(f, "objects")) {
    s.objects.resize(a->size());
    for (size_t i = 0; i < a->size(); ++i) read_object(r, (*a)[i], Reader::index("objects", i), s.objects[i]);
  }
  if (const json* a = r.array(f, "tasks")) {
    s.tasks.resize(a->size());
    for (size_t i = 0; i < a->size(); ++i) read_task(r, (*a)[i], Reader::index("tasks", i), s.tasks[i]);
  }
  r.finish(f);
  if (r.errors().empty()) check_references(r, s);

  if (!r.errors().empty()) {
    std::string msg;
    for (const std::string& e : r.errors()) msg += (msg.empty() ? "" : "\n") + e;
    return Status::error(msg);
  }
  return s;
}

Result<Scene> load_scene(const std::string& path, const LoadLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Status::error(path + ": no such file");
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::error(path + ": cannot read: " + ec.message());
  if (size > 256ull << 20)
    return Status::error(path + ": " + std::to_string(size >> 20) + " MiB is too large for a scene file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scene(ss.str(), path, limits);
}

}  // namespace adj::scene
