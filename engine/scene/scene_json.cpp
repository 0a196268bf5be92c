#include "engine/scene/scene_json.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

namespace adj::scene {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr double k_inf = std::numeric_limits<double>::infinity();

// one JSON object being read: its path for messages and the keys that were used
struct Fields {
  const json& j;
  std::string path;
  std::set<std::string> used;
};

// reads values, collecting every error as "source: json.path: message"
class Reader {
 public:
  Reader(std::string source, const LoadLimits& limits) : source_(std::move(source)), limits_(limits) {}

  const LoadLimits& limits() const { return limits_; }
  const std::vector<std::string>& errors() const { return errors_; }

  void error(const std::string& path, const std::string& message) {
    errors_.push_back(source_ + ": " + (path.empty() ? "(top level)" : path) + ": " + message);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  bool is_object(const json& j, const std::string& path) {
    if (j.is_object()) return true;
    error(path, "expected an object {...}");
    return false;
  }

  // the value of key, or null when absent (an error when required)
  const json* field(Fields& f, const char* key, bool required) {
    f.used.insert(key);
    auto it = f.j.find(key);
    if (it == f.j.end()) {
      if (required) error(join(f.path, key), "missing (required)");
      return nullptr;
    }
    return &*it;
  }

  void number(Fields& f, const char* key, double& out, double lo = -k_inf, double hi = k_inf,
              bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return;
    if (!v->is_number()) return error(join(f.path, key), "expected a number");
    double x = v->get<double>();
    if (!std::isfinite(x)) return error(join(f.path, key), "expected a finite number");
    if (x < lo || x > hi) return error(join(f.path, key), range_message(x, lo, hi));
    out = x;
  }

  void integer(Fields& f, const char* key, int& out, long long lo, long long hi,
               bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return;
    if (!v->is_number_integer()) return error(join(f.path, key), "expected an integer");
    long long x = v->get<long long>();
    if (x < lo || x > hi) return error(join(f.path, key), range_message(double(x), double(lo), double(hi)));
    out = int(x);
  }

  void boolean(Fields& f, const char* key, bool& out) {
    const json* v = field(f, key, false);
    if (!v) return;
    if (!v->is_boolean()) return error(join(f.path, key), "expected true or false");
    out = v->get<bool>();
  }

  void string(Fields& f, const char* key, std::string& out, bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return;
    if (!v->is_string()) return error(join(f.path, key), "expected a string");
    out = v->get<std::string>();
  }

  void vec3(Fields& f, const char* key, V3& out, bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return;
    std::string p = join(f.path, key);
    if (!v->is_array() || v->size() != 3) return error(p, "expected [x, y, z]");
    V3 r;
    for (size_t i = 0; i < 3; ++i) {
      if (!(*v)[i].is_number() || !std::isfinite((*v)[i].get<double>()))
        return error(index(p, i), "expected a finite number");
      r[i] = (*v)[i].get<double>();
    }
    out = r;
  }

  // one of the names; returns its index or -1
  int choice(Fields& f, const char* key, std::initializer_list<const char*> names, bool required) {
    std::string s;
    const json* v = field(f, key, required);
    if (!v) return -1;
    if (!v->is_string()) {
      error(join(f.path, key), "expected a string");
      return -1;
    }
    s = v->get<std::string>();
    int i = 0;
    std::string list;
    for (const char* n : names) {
      if (s == n) return i;
      list += (i ? ", " : "") + std::string(n);
      ++i;
    }
    error(join(f.path, key), "unknown value \"" + s + "\" (expected one of: " + list + ")");
    return -1;
  }

  // keys the format does not know are errors: a typo must not be silently ignored
  void finish(const Fields& f) {
    for (auto it = f.j.begin(); it != f.j.end(); ++it)
      if (!f.used.count(it.key())) error(join(f.path, it.key()), "unknown key");
  }

  // an array field; returns null if absent or not an array (error then)
  const json* array(Fields& f, const char* key, bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return nullptr;
    if (!v->is_array()) {
      error(join(f.path, key), "expected an array [...]");
      return nullptr;
    }
    if (static_cast<long long>(v->size()) > limits_.max_list) {
      error(join(f.path, key), "has " + std::to_string(v->size()) + " entries; at most " +
                                   std::to_string(limits_.max_list) + " are allowed");
      return nullptr;
    }
    return v;
  }

 private:
  static std::string range_message(double x, double lo, double hi) {
    char buf[160];
    if (hi == k_inf)
      std::snprintf(buf, sizeof buf, "%g is out of range (must be >= %g)", x, lo);
    else if (lo == -k_inf)
      std::snprintf(buf, sizeof buf, "%g is out of range (must be <= %g)", x, hi);
    else
      std::snprintf(buf, sizeof buf, "%g is out of range [%g, %g]", x, lo, hi);
    return buf;
  }

  std::string source_;
  LoadLimits limits_;
  std::vector<std::string> errors_;
};

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

void read_settings(Reader& r, const json& j, const std::string& path, Settings& s) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.number(f, "dt", s.dt, 1e-7, 1.0);
  r.integer(f, "substeps", s.substeps, 1, r.limits().max_substeps);
  r.vec3(f, "gravity", s.gravity);
  r.number(f, "damping", s.damping, 0);
  int b = r.choice(f, "backend", {"cpu", "cuda"}, false);
  if (b >= 0) s.backend = b == 0 ? "cpu" : "cuda";
  if (const json* c = r.field(f, "contact", false)) read_contact(r, *c, Reader::join(path, "contact"), s.contact);
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
      if (s.i == s.j && sf.j.contains("i") && sf.j.contains("j"))
        r.error(sp, "a spring needs two different particles");
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
    r.error(gp, std::to_string(cells) + " cells is too many (at most " + std::to_string(lim) +
                    "); use a coarser grid");
}

void read_object(Reader& r, const json& j, const std::string& path, Object& o) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", o.name, true);
  r.boolean(f, "visible", o.visible);
  int type = r.choice(f, "type",
                      {"particles", "cloth", "soft", "ground", "plane", "sphere", "box", "capsule",
                       "mesh_collider", "target"},
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
      if (const json* m = r.field(f, "material", false))
        read_cloth_material(r, *m, Reader::join(path, "material"), c.material);
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
      break;
    }
    case 3: case 4: case 5: case 6: case 7: case 8: {
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
    default:
      break;  // type error already reported; skip the object's other keys
  }
  if (type >= 0) r.finish(f);
}

void read_task(Reader& r, const json& j, const std::string& path, Task& t) {
  if (!r.is_object(j, path)) return;
  Fields f{j, path, {}};
  r.string(f, "name", t.name, true);
  r.integer(f, "horizon", t.horizon, 1, r.limits().max_horizon, true);
  r.integer(f, "checkpoint_every", t.checkpoint_every, 0, r.limits().max_horizon);
  double seed = double(t.seed);
  r.number(f, "seed", seed, 0, 9.0e15);
  t.seed = static_cast<uint64_t>(seed);

  if (const json* a = r.array(f, "parameters")) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string pp = Reader::index(Reader::join(path, "parameters"), i);
      if (!r.is_object((*a)[i], pp)) continue;
      Fields pf{(*a)[i], pp, {}};
      ParamSpec p;
      int k = r.choice(pf, "kind",
                       {"initial_position", "initial_velocity", "control_force", "spring_activation",
                        "spring_rest", "spring_ke", "tet_mu", "tet_lambda", "contact_ke", "contact_kd",
                        "contact_mu", "policy", "tet_activation"},
                       true);
      if (k >= 0) p.kind = static_cast<ParamKind>(k);
      r.string(pf, "object", p.object);
      r.number(pf, "lower", p.lower);
      r.number(pf, "upper", p.upper);
      if (p.lower > p.upper) r.error(pp, "lower bound is above the upper bound");
      r.finish(pf);
      t.parameters.push_back(p);
    }
  }
  if (const json* a = r.array(f, "loss", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      std::string lp = Reader::index(Reader::join(path, "loss"), i);
      if (!r.is_object((*a)[i], lp)) continue;
      Fields lf{(*a)[i], lp, {}};
      LossTerm l;
      int k = r.choice(lf, "kind", {"position", "distance", "shape", "velocity", "effort"}, true);
      if (k >= 0) l.kind = static_cast<LossKind>(k);
      r.string(lf, "object", l.object);
      r.string(lf, "target", l.target);
      r.integer(lf, "step", l.step, -1, r.limits().max_horizon);
      r.vec3(lf, "axis", l.axis);
      r.number(lf, "weight", l.weight);
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
      r.finish(of);
    }
  }
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
      bool scene_wide = p.kind == ParamKind::contact_ke || p.kind == ParamKind::contact_kd ||
                        p.kind == ParamKind::contact_mu || p.kind == ParamKind::policy;
      std::string pp = Reader::index(tp + ".parameters", i) + ".object";
      if (scene_wide) continue;
      const Object* o = kind_of(p.object);
      if (p.object.empty()) r.error(pp, "missing: which object does this parameter belong to?");
      else if (!o) r.error(pp, "no object named \"" + p.object + "\"");
      else if (o->kind == ObjectKind::collider || o->kind == ObjectKind::target)
        r.error(pp, "\"" + p.object + "\" is a " + to_string(o->kind) + ": it has no particles");
    }
    for (size_t i = 0; i < t.loss.size(); ++i) {
      const LossTerm& l = t.loss[i];
      std::string lp = Reader::index(tp + ".loss", i);
      if (l.kind != LossKind::effort) {
        const Object* o = kind_of(l.object);
        if (!o) r.error(lp + ".object", "no object named \"" + l.object + "\"");
      }
      if (l.kind == LossKind::position || l.kind == LossKind::shape) {
        const Object* o = kind_of(l.target);
        if (!o || o->kind != ObjectKind::target)
          r.error(lp + ".target", "\"" + l.target + "\" is not a target object");
      }
      if (l.step > t.horizon) r.error(lp + ".step", "is past the task's horizon (" + std::to_string(t.horizon) + ")");
    }
  }
}

// ---------------------------------------------------------------- writing

ojson v3(const V3& v) { return ojson::array({v[0], v[1], v[2]}); }

ojson write_object(const Object& o) {
  ojson j;
  j["name"] = o.name;
  if (!o.visible) j["visible"] = false;
  switch (o.kind) {
    case ObjectKind::particles: {
      j["type"] = "particles";
      ojson ps = ojson::array();
      for (const Particle& p : o.particles.particles)
        ps.push_back({{"position", v3(p.position)}, {"velocity", v3(p.velocity)}, {"mass", p.mass}, {"radius", p.radius}});
      j["particles"] = ps;
      ojson ss = ojson::array();
      for (const Spring& s : o.particles.springs)
        ss.push_back({{"i", s.i}, {"j", s.j}, {"ke", s.ke}, {"kd", s.kd}, {"rest", s.rest}, {"actuated", s.actuated}});
      j["springs"] = ss;
      break;
    }
    case ObjectKind::cloth: {
      const ClothObject& c = o.cloth;
      j["type"] = "cloth";
      if (!c.mesh.empty()) j["mesh"] = c.mesh;
      j["grid"] = {{"nx", c.nx}, {"ny", c.ny}, {"cell", c.cell}};
      j["position"] = v3(c.position);
      j["rotation"] = v3(c.rotation);
      j["scale"] = c.scale;
      j["velocity"] = v3(c.velocity);
      j["particle_mass"] = c.particle_mass;
      j["radius"] = c.radius;
      j["pin_left"] = c.pin_left;
      const ClothMaterialSpec& m = c.material;
      j["material"] = {{"tri_ke", m.tri_ke}, {"tri_ka", m.tri_ka}, {"tri_kd", m.tri_kd}, {"edge_ke", m.edge_ke},
                       {"edge_kd", m.edge_kd}, {"lift", m.lift}, {"drag", m.drag}};
      break;
    }
    case ObjectKind::soft: {
      const SoftObject& s = o.soft;
      j["type"] = "soft";
      if (!s.mesh.empty()) {
        j["mesh"] = s.mesh;
        j["cell"] = s.cell;
      }
      j["grid"] = {{"nx", s.nx}, {"ny", s.ny}, {"nz", s.nz}, {"cell", s.cell}};
      j["position"] = v3(s.position);
      j["rotation"] = v3(s.rotation);
      j["scale"] = s.scale;
      j["velocity"] = v3(s.velocity);
      j["radius"] = s.radius;
      j["pin_left"] = s.pin_left;
      if (s.actuated) j["actuated"] = true;
      const SoftMaterialSpec& m = s.material;
      j["material"] = {{"density", m.density}, {"mu", m.mu}, {"lambda", m.lambda}, {"kd", m.kd}};
      break;
    }
    case ObjectKind::collider: {
      const Collider& c = o.collider;
      j["type"] = c.kind == ColliderKind::mesh ? "mesh_collider" : to_string(c.kind);
      if (c.kind == ColliderKind::ground) {
        j["height"] = c.position[1];
        break;
      }
      j["position"] = v3(c.position);
      if (c.kind == ColliderKind::plane) j["normal"] = v3(c.normal);
      if (c.kind == ColliderKind::box || c.kind == ColliderKind::sphere || c.kind == ColliderKind::capsule)
        j["size"] = v3(c.size);
      if (c.kind != ColliderKind::plane) j["rotation"] = v3(c.rotation);
      if (c.kind == ColliderKind::mesh) {
        j["mesh"] = c.mesh;
        j["scale"] = c.scale;
      }
      break;
    }
    case ObjectKind::target:
      j["type"] = "target";
      j["position"] = v3(o.target.position);
      j["radius"] = o.target.radius;
      if (!o.target.points.empty()) {
        ojson ps = ojson::array();
        for (const V3& q : o.target.points) ps.push_back(v3(q));
        j["points"] = ps;
      }
      break;
  }
  return j;
}

ojson write_task(const Task& t) {
  ojson j;
  j["name"] = t.name;
  j["horizon"] = t.horizon;
  j["checkpoint_every"] = t.checkpoint_every;
  j["seed"] = t.seed;
  ojson ps = ojson::array();
  for (const ParamSpec& p : t.parameters) {
    ojson pj{{"kind", to_string(p.kind)}};
    if (!p.object.empty()) pj["object"] = p.object;
    if (std::isfinite(p.lower)) pj["lower"] = p.lower;
    if (std::isfinite(p.upper)) pj["upper"] = p.upper;
    ps.push_back(pj);
  }
  j["parameters"] = ps;
  ojson ls = ojson::array();
  for (const LossTerm& l : t.loss) {
    ojson lj{{"kind", to_string(l.kind)}};
    if (!l.object.empty()) lj["object"] = l.object;
    if (!l.target.empty()) lj["target"] = l.target;
    lj["step"] = l.step;
    lj["axis"] = v3(l.axis);
    lj["weight"] = l.weight;
    ls.push_back(lj);
  }
  j["loss"] = ls;
  j["optimizer"] = {{"kind", to_string(t.optimizer.kind)}, {"lr", t.optimizer.lr}, {"clip", t.optimizer.clip},
                    {"iterations", t.optimizer.iterations}};
  if (t.has_policy)
    j["policy"] = {{"hidden", t.policy.hidden}, {"phases", t.policy.phases},
                   {"phase_period", t.policy.phase_period}, {"output_scale", t.policy.output_scale}};
  return j;
}

}  // namespace

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
    return Status::error(source + ": not valid JSON: " +
                         (cut == std::string::npos ? what : what.substr(cut + 2)));
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
  if (size > 256ull << 20) return Status::error(path + ": " + std::to_string(size >> 20) + " MiB is too large for a scene file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scene(ss.str(), path, limits);
}

std::string to_json(const Scene& s) {
  ojson j;
  j["format"] = "adjoint-scene";
  j["version"] = k_format_version;
  j["name"] = s.name;
  const Settings& st = s.settings;
  const ContactSettings& c = st.contact;
  j["settings"] = {{"dt", st.dt}, {"substeps", st.substeps}, {"gravity", v3(st.gravity)}, {"damping", st.damping},
                   {"backend", st.backend},
                   {"contact", {{"ke", c.ke}, {"kd", c.kd}, {"kf", c.kf}, {"mu", c.mu}, {"eps", c.eps},
                                {"particle_contact", c.particle_contact}}}};
  ojson objs = ojson::array();
  for (const Object& o : s.objects) objs.push_back(write_object(o));
  j["objects"] = objs;
  ojson tasks = ojson::array();
  for (const Task& t : s.tasks) tasks.push_back(write_task(t));
  j["tasks"] = tasks;
  return j.dump(2) + "\n";
}

Status save_scene(const Scene& scene, const std::string& path) {
  namespace fs = std::filesystem;
  std::string text = to_json(scene);
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  fs::path tmp = dir / (target.filename().string() + ".tmp-" + std::to_string(rd() % 1000000));
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return Status::error(path + ": cannot write (" + std::strerror(errno) + ")");
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fflush(f) == 0 && ok;
    ok = ::fsync(fileno(f)) == 0 && ok;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Status::error(path + ": writing failed (disk full?); the previous file is untouched");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::error(path + ": cannot replace the file: " + ec.message());
  }
  return Status::ok();
}

}  // namespace adj::scene
