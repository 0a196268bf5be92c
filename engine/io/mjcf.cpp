#include "engine/io/mjcf.h"

#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <numbers>
#include <set>

#include "engine/model/builder.h"
#include "engine/model/rigid_cylinder.h"
#include "engine/model/rigid_mesh.h"

namespace adj {

namespace {

namespace fs = std::filesystem;
using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;
using Q = rigid::quat<double>;
using V = vec3<double>;
using M3 = mat33<double>;
using Attrs = std::map<std::string, std::string>;

// an import error, thrown inside the reader and returned as a Status by rigid_import_mjcf
struct MjcfError {
  std::string message;
};

constexpr double kPi = std::numbers::pi;

Q axis_quat(const V& axis, double angle) {
  double n = length(axis);
  V a = axis / n;
  double s = std::sin(angle / 2);
  return {std::cos(angle / 2), a.x * s, a.y * s, a.z * s};
}

// the smallest rotation taking +z onto the direction d (unit)
Q z_to(const V& d) {
  V z{0, 0, 1};
  double c = dot(z, d);
  V ax = cross(z, d);
  double s = length(ax);
  if (s < 1e-12) return c > 0 ? Q{} : Q{0, 1, 0, 0};
  return axis_quat(ax, std::atan2(s, c));
}

M3 diag(double a, double b, double c) {
  M3 I{};
  I.m[0][0] = a, I.m[1][1] = b, I.m[2][2] = c;
  return I;
}

M3 scaled(const M3& a, double s) {
  M3 r = a;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] *= s;
  return r;
}

// mass, centre and inertia about it of one part, all in one frame
struct MassPart {
  double mass = 0;
  V com{};
  M3 inertia{};
};

// parts summed: mass, centre, inertia about the joint centre (parallel axes)
MassPart combine(const std::vector<MassPart>& parts) {
  MassPart r;
  V moment{};
  for (const MassPart& p : parts) r.mass += p.mass, moment += p.com * p.mass;
  if (r.mass > 0) r.com = moment / r.mass;
  for (const MassPart& p : parts) {
    V d = p.com - r.com;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.inertia.m[i][j] += p.inertia.m[i][j] + p.mass * ((i == j ? dot(d, d) : 0.0) - d[i] * d[j]);
  }
  return r;
}

bool is_actuator_tag(const std::string& t) {
  return t == "motor" || t == "position" || t == "velocity" || t == "general" || t == "intvelocity" || t == "damper" ||
         t == "cylinder" || t == "muscle" || t == "adhesion";
}

// what a top-level element the reader skips would have done
const char* top_level_why(const std::string& t) {
  if (t == "visual" || t == "statistic" || t == "size" || t == "custom" || t == "extension")
    return "not used by the dynamics";
  if (t == "tendon") return "tendons are not simulated (the joints they couple move independently)";
  if (t == "equality") return "equality constraints are not simulated (what they tie together moves freely)";
  if (t == "sensor") return "sensors are not simulated (they do not change the dynamics)";
  if (t == "contact")
    return "contact pairs and exclusions are not read (shapes of different bodies touch by contype/conaffinity)";
  return "not supported";
}

// the attributes the reader reads (or warns about itself) of each element it reads
bool reads_attribute(const std::string& tag, const std::string& a) {
  static const char* const orient[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  for (const char* o : orient)
    if (a == o && tag != "option" && tag != "mesh" && tag != "joint" && !is_actuator_tag(tag)) return true;
  if (a == "name" || a == "class") return true;
  if (tag == "option") return a == "timestep" || a == "gravity" || a == "integrator";
  if (tag == "body") return a == "childclass" || a == "pos";
  if (tag == "joint")
    return a == "type" || a == "pos" || a == "axis" || a == "range" || a == "limited" || a == "ref" ||
           a == "springref" || a == "stiffness" || a == "damping" || a == "armature" || a == "frictionloss";
  if (tag == "geom")
    return a == "type" || a == "size" || a == "pos" || a == "fromto" || a == "density" || a == "mass" ||
           a == "contype" || a == "conaffinity" || a == "mesh";
  if (tag == "inertial") return a == "mass" || a == "pos" || a == "diaginertia" || a == "fullinertia";
  if (tag == "mesh") return a == "file" || a == "scale";
  if (tag == "motor" || tag == "position" || tag == "velocity" || tag == "actuator")
    return a == "joint" || a == "gear" || a == "ctrlrange" || a == "ctrllimited" || a == "forcerange" ||
           a == "forcelimited" || a == "kp" || a == "kv";
  return tag == "freejoint";  // <freejoint> has nothing else that matters
}

// why an attribute the reader does not read changes nothing (nullptr: drawing only, no
// warning), or what the simulation lacks
const char* ignored_why(const std::string& tag, const std::string& a, const std::string& value) {
  if (a == "rgba" || a == "material" || a == "group" || a == "user" || a == "texture" || a == "hfield") return nullptr;
  if (a == "density" || a == "viscosity" || a == "wind" || a == "fluidshape" || a == "fluidcoef") {
    char* end = nullptr;
    const bool zero = std::strtod(value.c_str(), &end) == 0 && end != value.c_str() &&
                      value.find_first_not_of("0. \t") == std::string::npos;
    if (zero || value == "none") return nullptr;  // MuJoCo's defaults: no fluid
    return "ignored: fluid forces (drag, viscosity, wind) are not simulated, so motion through the fluid differs from "
           "MuJoCo's";
  }
  if (tag == "option")
    return a == "magnetic" ? "ignored: magnetic fields are not simulated"
                           : "ignored: a solver setting of MuJoCo's (Adjoint's semi-implicit solver has none)";
  if (a == "solreflimit" || a == "solimplimit" || (tag == "joint" && a == "margin"))
    return "ignored: joint limits are a penalty spring (limit_ke, limit_kd)";
  if (a == "friction" || a == "solref" || a == "solimp" || a == "condim" || a == "margin" || a == "gap" ||
      a == "priority" || a == "solmix")
    return "ignored: per-geom contact parameters are not read; the scene's robot contact law (ke, kd, kf, mu) "
           "applies to every shape";
  if (a == "gravcomp" || a == "mocap") return "ignored: not simulated (the body moves under gravity and its joints)";
  return "ignored (not supported)";
}

class Reader {
 public:
  Reader(const std::string& path, RigidBuilder& b, const MjcfOptions& opt, MjcfImport& out)
      : main_(path), dir_(fs::path(path).parent_path()), b_(b), opt_(opt), out_(out) {}

  void run();

 private:
  // where an element is: "file:line: <tag name=...>"
  std::string where(const XMLElement* e) const {
    std::string s = file_of(e) + ":" + std::to_string(e->GetLineNum()) + ": <" + e->Name();
    if (const char* n = e->Attribute("name")) s += std::string(" name=\"") + n + "\"";
    return s + ">";
  }
  std::string file_of(const XMLElement* e) const {
    auto it = files_.find(e->GetDocument());
    return it == files_.end() ? main_ : it->second;
  }
  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const {
    throw MjcfError{where(e) + ": " + what};
  }
  void warn(const XMLElement* e, const std::string& what) { out_.warnings.push_back(where(e) + ": " + what); }
  // an element skipped: one warning per tag (first place, how many)
  void skip(const XMLElement* e, const char* why) {
    auto [it, fresh] = skipped_.try_emplace(e->Name(), Skipped{where(e), why, 0});
    ++it->second.count;
  }

  // attributes of e (read as `tag`) that the reader does not read: one warning per tag and
  // attribute (first place, how many), unless they only change the drawing (ignored_why)
  void check_attributes(const XMLElement* e, const std::string& tag) {
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      if (reads_attribute(tag, a->Name())) continue;
      const char* why = ignored_why(tag, a->Name(), a->Value());
      if (!why) continue;
      auto [it, fresh] = ignored_.try_emplace(tag + " " + a->Name(), Skipped{where(e), why, 0});
      if (fresh) it->second.where += ": " + std::string(a->Name()) + "=\"" + a->Value() + "\"";
      ++it->second.count;
    }
  }

  XMLDocument& load(const std::string& path, const XMLElement* from);
  // the children of e, with <include> elements replaced by the included file's elements
  std::vector<const XMLElement*> children(const XMLElement* e);

  // attribute of e, else of its class defaults for `tag`
  const char* attr(const XMLElement* e, const Attrs* d, const char* name) const {
    if (const char* v = e->Attribute(name)) return v;
    if (d)
      if (auto it = d->find(name); it != d->end()) return it->second.c_str();
    return nullptr;
  }
  std::vector<double> nums(const XMLElement* e, const char* name, const char* text) const;
  double num(const XMLElement* e, const Attrs* d, const char* name, double fallback) const {
    const char* t = attr(e, d, name);
    if (!t) return fallback;
    std::vector<double> v = nums(e, name, t);
    if (v.empty()) fail(e, std::string(name) + " has no number");
    return v[0];
  }
  V vec(const XMLElement* e, const Attrs* d, const char* name, const V& fallback) const {
    const char* t = attr(e, d, name);
    if (!t) return fallback;
    std::vector<double> v = nums(e, name, t);
    if (v.size() != 3) fail(e, std::string(name) + " needs 3 numbers");
    return {v[0], v[1], v[2]};
  }
  // "true"/"false"/"auto" (auto = -1)
  int tristate(const XMLElement* e, const Attrs* d, const char* name) const;
  double angle(double a) const { return degree_ ? a * kPi / 180 : a; }
  Q orientation(const XMLElement* e, const Attrs* d) const;
  const Attrs* defaults(const XMLElement* e, const std::string& cls, const std::string& tag) const;

  void compiler(const XMLElement* e);
  void option(const XMLElement* e);
  void parse_default(const XMLElement* e, const std::string& parent);
  void asset(const XMLElement* e);
  void world(const XMLElement* e);
  void world_geom(const XMLElement* e);
  void body(const XMLElement* e, int parent, const V& parent_offset, const std::string& cls);
  int add_joints(const XMLElement* body, const std::vector<const XMLElement*>& joints, const std::string& cls,
                 int parent, const V& parent_offset, V& offset);
  MassPart geom(const XMLElement* e, const std::string& cls, int engine_body, const V& offset);
  MassPart inertial(const XMLElement* e) const;
  void actuator(const XMLElement* e, const std::string& cls);

  std::string main_;
  fs::path dir_;
  RigidBuilder& b_;
  const MjcfOptions& opt_;
  MjcfImport& out_;
  std::list<XMLDocument> docs_;
  static constexpr std::size_t kMaxIncludeDepth = 32, kMaxDocuments = 4096;
  std::set<std::string> including_;  // the files whose <include>s are being expanded (canonical)
  std::map<const XMLDocument*, std::string> files_;
  struct Skipped {
    std::string where;
    std::string why;
    int count;
  };
  std::map<std::string, Skipped> skipped_;
  std::map<std::string, Skipped> ignored_;  // "tag attribute" -> where first, why, how many
  // compiler
  bool degree_ = true;
  std::string eulerseq_ = "xyz";
  int inertiafromgeom_ = -1;  // 1 true, 0 false, -1 auto
  bool balanceinertia_ = false;
  fs::path meshdir_;
  double settotalmass_ = -1;
  bool autolimits_ = true;
  // classes: name -> tag -> attributes
  std::map<std::string, std::map<std::string, Attrs>> classes_;
  struct Mesh {
    std::string file;
    V scale{1, 1, 1};
    const XMLElement* e;
  };
  std::map<std::string, Mesh> meshes_;
  // joints by name: layout index, MJCF type, ref
  struct Joint {
    std::size_t index;
    std::string type;
    double ref;
  };
  std::map<std::string, Joint> joints_;
  // body masses set after the walk (settotalmass scales them)
  std::vector<std::pair<int, MassPart>> masses_;
  int unnamed_ = 0;
};

XMLDocument& Reader::load(const std::string& path, const XMLElement* from) {
  if (docs_.size() >= kMaxDocuments)  // includes read again wherever they stand, so a bound on the total
    fail(from, "more than " + std::to_string(kMaxDocuments) + " files read through <include>");
  docs_.emplace_back();
  XMLDocument& d = docs_.back();
  if (tinyxml2::XMLError err = d.LoadFile(path.c_str()); err != tinyxml2::XML_SUCCESS) {
    const bool unread =
        err == tinyxml2::XML_ERROR_FILE_NOT_FOUND || err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED;
    const std::string msg =
        unread ? path + ": cannot be read"
               : path + ":" + std::to_string(d.ErrorLineNum()) + ": not well-formed XML (" + d.ErrorStr() + ")";
    if (from) fail(from, msg);
    throw MjcfError{msg};
  }
  files_[&d] = path;
  return d;
}

std::vector<const XMLElement*> Reader::children(const XMLElement* e) {
  std::vector<const XMLElement*> r;
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    if (std::strcmp(c->Name(), "include") != 0) {
      r.push_back(c);
      continue;
    }
    const char* f = c->Attribute("file");
    if (!f) fail(c, "needs a file");
    fs::path p(f);
    const std::string path = p.is_absolute() ? p.string() : (dir_ / p).string();
    std::error_code ec;
    const std::string key = fs::weakly_canonical(path, ec).string();
    if (including_.count(key)) fail(c, "\"" + path + "\" includes itself (an include loop)");
    if (including_.size() >= kMaxIncludeDepth)
      fail(c, "includes nest deeper than " + std::to_string(kMaxIncludeDepth) + " files");
    XMLDocument& d = load(path, c);
    const XMLElement* root = d.RootElement();
    if (!root || std::strcmp(root->Name(), "mujoco") != 0) fail(c, std::string("\"") + f + "\" has no <mujoco> root");
    including_.insert(key);
    for (const XMLElement* k : children(root)) r.push_back(k);
    including_.erase(key);
  }
  return r;
}

std::vector<double> Reader::nums(const XMLElement* e, const char* name, const char* text) const {
  std::vector<double> v;
  const char* s = text;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') ++s;
    if (!*s) break;
    char* end = nullptr;
    double x = std::strtod(s, &end);
    if (end == s) fail(e, std::string(name) + "=\"" + text + "\" is not a list of numbers");
    if (!std::isfinite(x)) fail(e, std::string(name) + "=\"" + text + "\" is not finite");
    v.push_back(x);
    s = end;
  }
  return v;
}

int Reader::tristate(const XMLElement* e, const Attrs* d, const char* name) const {
  const char* t = attr(e, d, name);
  if (!t || std::strcmp(t, "auto") == 0) return -1;
  if (std::strcmp(t, "true") == 0) return 1;
  if (std::strcmp(t, "false") == 0) return 0;
  fail(e, std::string(name) + "=\"" + t + "\" must be true, false or auto");
}

Q Reader::orientation(const XMLElement* e, const Attrs* d) const {
  const char* keys[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  // the element's own orientation (at most one), else its defaults' first
  int which = -1, own = 0;
  const char* text = nullptr;
  for (int k = 0; k < 5; ++k)
    if (const char* t = e->Attribute(keys[k])) which = k, text = t, ++own;
  if (own > 1) fail(e, "more than one orientation (quat, axisangle, euler, xyaxes, zaxis)");
  for (int k = 0; k < 5 && which < 0; ++k)
    if (const char* t = attr(e, d, keys[k])) which = k, text = t;
  if (which < 0) return {};
  std::vector<double> v = nums(e, keys[which], text);
  const std::size_t need[] = {4, 4, 3, 6, 3};
  if (v.size() != need[which]) fail(e, std::string(keys[which]) + " needs " + std::to_string(need[which]) + " numbers");
  switch (which) {
    case 0: {
      double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
      if (!(n > 1e-10)) fail(e, "quat is zero (a quaternion needs a nonzero norm)");
      return {v[0] / n, v[1] / n, v[2] / n, v[3] / n};
    }
    case 1: {
      V a{v[0], v[1], v[2]};
      if (!(length(a) > 1e-10)) fail(e, "axisangle axis is zero");
      return axis_quat(a, angle(v[3]));
    }
    case 2: {
      if (eulerseq_.size() != 3) fail(e, "compiler eulerseq must have 3 letters");
      Q q;
      for (int k = 0; k < 3; ++k) {
        char c = eulerseq_[std::size_t(k)];
        char l = char(std::tolower(c));
        V ax{l == 'x' ? 1.0 : 0.0, l == 'y' ? 1.0 : 0.0, l == 'z' ? 1.0 : 0.0};
        if (l != 'x' && l != 'y' && l != 'z') fail(e, "compiler eulerseq letters must be x, y or z");
        Q r = axis_quat(ax, angle(v[std::size_t(k)]));
        q = c == l ? rigid::qmul(q, r) : rigid::qmul(r, q);  // lowercase: moving axes
      }
      return q;
    }
    case 3: {
      V x{v[0], v[1], v[2]}, y{v[3], v[4], v[5]};
      if (!(length(x) > 1e-10)) fail(e, "xyaxes x axis is zero");
      x = x / length(x);
      y = y - x * dot(x, y);
      if (!(length(y) > 1e-10)) fail(e, "xyaxes y axis is parallel to x");
      y = y / length(y);
      V z = cross(x, y);
      return rigid_matrix_quat(M3::from_cols(x, y, z));
    }
    default: {
      V z{v[0], v[1], v[2]};
      if (!(length(z) > 1e-10)) fail(e, "zaxis is zero");
      return z_to(z / length(z));
    }
  }
}

// the defaults of tag (actuator shortcuts share one set, as in MuJoCo) for class cls, or
// the element's own `class`
const Attrs* Reader::defaults(const XMLElement* e, const std::string& cls, const std::string& tag) const {
  std::string c = cls;
  if (const char* own = e->Attribute("class")) c = own;
  auto it = classes_.find(c);
  if (it == classes_.end()) {
    if (c != "main") fail(e, "class \"" + c + "\" is not defined");
    return nullptr;
  }
  auto t = it->second.find(tag);
  return t == it->second.end() ? nullptr : &t->second;
}

void Reader::compiler(const XMLElement* e) {
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    std::string n = a->Name(), v = a->Value();
    if (n == "angle") {
      if (v != "degree" && v != "radian") fail(e, "angle must be degree or radian");
      degree_ = v == "degree";
    } else if (n == "coordinate") {
      if (v != "local") fail(e, "coordinate=\"" + v + "\" is not supported (local only, as MuJoCo 3)");
    } else if (n == "inertiafromgeom") {
      inertiafromgeom_ = tristate(e, nullptr, "inertiafromgeom");
    } else if (n == "balanceinertia") {
      balanceinertia_ = tristate(e, nullptr, "balanceinertia") == 1;
    } else if (n == "meshdir") {
      meshdir_ = v;
    } else if (n == "eulerseq") {
      eulerseq_ = v;
    } else if (n == "autolimits") {
      autolimits_ = v == "true";
    } else if (n == "settotalmass") {
      settotalmass_ = num(e, nullptr, "settotalmass", -1);
    } else {
      warn(e, "attribute " + n + " ignored (not supported)");
    }
  }
}

void Reader::option(const XMLElement* e) {
  check_attributes(e, "option");
  out_.timestep = num(e, nullptr, "timestep", out_.timestep);
  if (!(out_.timestep > 0)) fail(e, "timestep must be > 0");
  out_.gravity = vec(e, nullptr, "gravity", out_.gravity);
  if (const char* i = e->Attribute("integrator"); i && std::strcmp(i, "Euler") != 0)
    warn(e, std::string("integrator ") + i + " ignored (Adjoint steps semi-implicit Euler)");
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) skip(c, "not supported");
}

void Reader::parse_default(const XMLElement* e, const std::string& parent) {
  std::string name = "main";
  if (const char* c = e->Attribute("class")) name = c;
  if (!parent.empty() && name == "main") fail(e, "a nested default needs a class");
  if (classes_.count(name) && !(parent.empty() && name == "main")) fail(e, "class \"" + name + "\" is defined twice");
  std::map<std::string, Attrs> set = parent.empty() ? std::map<std::string, Attrs>{} : classes_[parent];
  std::vector<const XMLElement*> nested;
  for (const XMLElement* c : children(e)) {
    std::string tag = c->Name();
    if (tag == "default") {
      nested.push_back(c);
      continue;
    }
    if (tag == "joint" || tag == "geom" || tag == "mesh" || tag == "motor" || tag == "position" || tag == "velocity")
      check_attributes(c, tag);
    Attrs& a = set[is_actuator_tag(tag) ? "actuator" : tag];
    for (const tinyxml2::XMLAttribute* at = c->FirstAttribute(); at; at = at->Next()) a[at->Name()] = at->Value();
  }
  classes_[name] = std::move(set);
  for (const XMLElement* c : nested) parse_default(c, name);
}

void Reader::asset(const XMLElement* e) {
  for (const XMLElement* c : children(e)) {
    if (std::strcmp(c->Name(), "mesh") != 0) {
      skip(c, "not used by the dynamics (visual only)");
      continue;
    }
    const char* f = c->Attribute("file");
    if (!f) fail(c, "needs a file (only file meshes are supported)");
    check_attributes(c, "mesh");
    std::string name = c->Attribute("name") ? c->Attribute("name") : fs::path(f).stem().string();
    fs::path p = fs::path(f).is_absolute() ? fs::path(f) : dir_ / meshdir_ / f;
    meshes_[name] = Mesh{p.string(), vec(c, defaults(c, "main", "mesh"), "scale", {1, 1, 1}), c};
  }
}

// one geom: its contact shape added to engine_body (a static collider for the worldbody,
// engine_body < 0), its mass part returned in the MuJoCo body frame
MassPart Reader::geom(const XMLElement* e, const std::string& cls, int engine_body, const V& offset) {
  const Attrs* d = defaults(e, cls, "geom");
  check_attributes(e, "geom");
  std::string type = attr(e, d, "type") ? attr(e, d, "type") : (attr(e, d, "mesh") ? "mesh" : "sphere");
  std::vector<double> size;
  if (const char* s = attr(e, d, "size")) size = nums(e, "size", s);
  V pos = vec(e, d, "pos", {});
  Q rot = orientation(e, d);
  if (const char* ft = e->Attribute("fromto")) {
    std::vector<double> f = nums(e, "fromto", ft);
    if (f.size() != 6) fail(e, "fromto needs 6 numbers");
    V a{f[0], f[1], f[2]}, c{f[3], f[4], f[5]};
    double len = length(c - a);
    if (!(len > 1e-12)) fail(e, "fromto has zero length");
    if (type != "capsule" && type != "cylinder" && type != "box" && type != "ellipsoid")
      fail(e, "fromto needs a capsule, cylinder, box or ellipsoid");
    pos = (a + c) * 0.5;
    rot = z_to((c - a) / len);
    if (size.empty()) fail(e, "size needs the radius");
    if (type == "box" || type == "ellipsoid") {
      if (size.size() < 2) fail(e, "size needs 2 numbers with fromto");
      size = {size[0], size[1], len / 2};
    } else {
      size = {size[0], len / 2};
    }
  }
  auto need = [&](std::size_t n) {
    if (size.size() < n) fail(e, type + " needs " + std::to_string(n) + " size numbers");
    for (std::size_t i = 0; i < n; ++i)
      if (!(size[i] > 0)) fail(e, "sizes must be > 0");
  };
  double density = opt_.density > 0 ? opt_.density : num(e, d, "density", 1000);
  const char* mass_text = attr(e, d, "mass");
  double ct = num(e, d, "contype", 1), ca = num(e, d, "conaffinity", 1);
  for (double bits : {ct, ca})  // bit masks: whole numbers that fit 32 bits
    if (!(bits >= -2147483648.0 && bits <= 4294967295.0) || bits != std::floor(bits))
      fail(e, "contype and conaffinity must be whole numbers (32-bit masks)");
  RigidShapeDesc s;
  s.pos = pos - offset;
  s.rot = rot;
  s.group = int(uint32_t(int64_t(ct))), s.mask = int(uint32_t(int64_t(ca)));
  const Q y_to_z{std::sqrt(0.5), std::sqrt(0.5), 0, 0};  // engine capsules lie along y
  double volume = 0;
  M3 unit{};  // inertia per unit density about the centre, geom axes
  bool shape = true;
  if (type == "plane") {
    if (engine_body >= 0) {
      warn(e, "a plane in a body is not supported (skipped; planes belong in the worldbody)");
    } else if (!(ct == 0 && ca == 0)) {
      RigidColliderDesc cd;
      cd.type = GEOM_PLANE;
      cd.pos = opt_.position + rigid::qmat(opt_.rotation) * pos;
      cd.size = rigid::qmat(rigid::qmul(opt_.rotation, rot)) * V{0, 0, 1};
      b_.colliders.push_back(cd);
    }
    return {};
  } else if (type == "sphere") {
    need(1);
    double r = size[0];
    volume = 4 * kPi * r * r * r / 3;
    unit = scaled(diag(1, 1, 1), volume * 2 * r * r / 5);
    s.type = GEOM_SPHERE, s.size = {r, 0, 0};
  } else if (type == "capsule" || type == "cylinder") {
    need(2);
    double r = size[0], h = 2 * size[1];
    double vc = kPi * r * r * h, vs = type == "capsule" ? 4 * kPi * r * r * r / 3 : 0;
    volume = vc + vs;
    double ix = vc * (3 * r * r + h * h) / 12 + vs * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8);
    unit = diag(ix, ix, vc * r * r / 2 + vs * 2 * r * r / 5);
    if (type == "capsule" || engine_body < 0) {
      s.type = GEOM_CAPSULE;
      s.size = {r, type == "capsule" ? size[1] : std::max(size[1] - r, 1e-4), 0};
      s.rot = rigid::qmul(rot, y_to_z);
      if (type == "cylinder" && !(ct == 0 && ca == 0))
        warn(e, "a worldbody cylinder is a collider capsule of the same radius and overall length");
    } else {
      rigid_cylinder_mesh(r, size[1], s, where(e));  // a prism: touches as a cylinder
    }
  } else if (type == "box") {
    need(3);
    double a = size[0], bb = size[1], c = size[2];
    volume = 8 * a * bb * c;
    unit = scaled(diag(bb * bb + c * c, a * a + c * c, a * a + bb * bb), volume / 3);
    s.type = GEOM_BOX, s.size = {a, bb, c};
  } else if (type == "ellipsoid") {
    need(3);
    double a = size[0], bb = size[1], c = size[2];
    volume = 4 * kPi * a * bb * c / 3;
    unit = scaled(diag(bb * bb + c * c, a * a + c * c, a * a + bb * bb), volume / 5);
    s.type = GEOM_SPHERE, s.size = {std::max({a, bb, c}), 0, 0};
    warn(e, "an ellipsoid touches as a sphere of its largest radius (mass and inertia are the ellipsoid's)");
  } else if (type == "mesh") {
    const char* mn = attr(e, d, "mesh");
    if (!mn) fail(e, "a mesh geom needs mesh=");
    auto it = meshes_.find(mn);
    if (it == meshes_.end()) fail(e, std::string("mesh \"") + mn + "\" is not in <asset>");
    auto tm = load_mesh<double>(it->second.file);
    if (!tm) fail(it->second.e, tm.status().message());
    s.type = GEOM_MESH;
    s.mesh_vertices.assign(tm->vertices.begin(), tm->vertices.end());
    s.mesh_tris.assign(tm->tris.begin(), tm->tris.end());
    s.scale = it->second.scale;
    s.mesh_name = it->second.file;
    auto g = rigid_mesh_geometry(s.mesh_vertices, s.mesh_tris, s.scale, where(e));
    if (!g) fail(e, g.status().message());
    double m1 = 0;
    V com{};
    M3 I{};
    if (!rigid_mesh_mass(g->vertices, g->tris, 1.0, m1, com, I, where(e))) {
      warn(e, "mesh is not closed: its mass and inertia are those of its convex hull");
      if (Status st = rigid_mesh_mass(g->hull_vertices, g->hull_tris, 1.0, m1, com, I, where(e)); !st)
        fail(e, st.message());
    }
    // a mesh's centre is not its origin: mass part in the body frame directly
    double mass = mass_text ? num(e, d, "mass", 0) : density * m1;
    double scale = m1 > 0 ? mass / m1 : 0;
    M3 R = rigid::qmat(rot);
    if (engine_body >= 0 && !(ct == 0 && ca == 0)) b_.add_shape(engine_body, s);
    if (engine_body < 0) warn(e, "a mesh in the worldbody is not a collider (skipped)");
    return {mass, pos + R * com, scaled(R * I * transpose(R), scale)};
  } else {
    fail(e, "geom type \"" + type + "\" is not supported");
  }
  if (ct == 0 && ca == 0) shape = false;  // visual only in MuJoCo: no contact
  if (shape && engine_body >= 0) b_.add_shape(engine_body, s);
  if (shape && engine_body < 0) {
    RigidColliderDesc cd;
    cd.type = s.type;  // sphere, box or capsule: one GeomType for colliders and body shapes
    cd.pos = opt_.position + rigid::qmat(opt_.rotation) * s.pos;
    cd.rot = rigid::qmul(opt_.rotation, s.rot);
    cd.size = s.size;
    b_.colliders.push_back(cd);
  }
  double mass = mass_text ? num(e, d, "mass", 0) : density * volume;
  if (!(mass >= 0)) fail(e, "mass and density must be >= 0");
  M3 R = rigid::qmat(rot);
  double per = volume > 0 ? mass / volume : 0;
  return {mass, pos, scaled(R * unit * transpose(R), per)};
}

MassPart Reader::inertial(const XMLElement* e) const {
  MassPart p;
  p.mass = num(e, nullptr, "mass", -1);
  if (!(p.mass >= 0)) fail(e, "needs a mass >= 0");
  p.com = vec(e, nullptr, "pos", {});
  Q rot = orientation(e, nullptr);
  M3 I{};
  if (const char* t = e->Attribute("diaginertia")) {
    std::vector<double> v = nums(e, "diaginertia", t);
    if (v.size() != 3) fail(e, "diaginertia needs 3 numbers");
    I = diag(v[0], v[1], v[2]);
  } else if (const char* f = e->Attribute("fullinertia")) {
    std::vector<double> v = nums(e, "fullinertia", f);
    if (v.size() != 6) fail(e, "fullinertia needs 6 numbers (xx yy zz xy xz yz)");
    I = diag(v[0], v[1], v[2]);
    I.m[0][1] = I.m[1][0] = v[3];
    I.m[0][2] = I.m[2][0] = v[4];
    I.m[1][2] = I.m[2][1] = v[5];
  } else {
    fail(e, "needs diaginertia or fullinertia");
  }
  M3 R = rigid::qmat(rot);
  p.inertia = R * I * transpose(R);
  return p;
}

void Reader::world(const XMLElement* e) {
  for (const XMLElement* c : children(e)) {
    std::string tag = c->Name();
    if (tag == "geom") {
      if (opt_.world_geoms) geom(c, "main", -1, {});
    } else if (tag == "body") {
      body(c, -1, {}, "main");
    } else if (tag == "site" || tag == "camera" || tag == "light") {
      skip(c, "not simulated");
    } else {
      skip(c, "not supported");
    }
  }
}

int Reader::add_joints(const XMLElement* e, const std::vector<const XMLElement*>& joints, const std::string& cls,
                       int parent, const V& parent_offset, V& offset) {
  const std::string name = e->Attribute("name") ? e->Attribute("name") : "body" + std::to_string(++unnamed_);
  const V bpos = vec(e, nullptr, "pos", {});
  const Q bq = orientation(e, nullptr);
  // the body's frame before its joints move it, in the parent engine body's frame (the
  // placed world for bodies of the worldbody)
  V base_p = bpos - parent_offset;
  Q base_q = bq;
  if (parent < 0) base_p = opt_.position + rigid::qmat(opt_.rotation) * bpos, base_q = rigid::qmul(opt_.rotation, bq);
  offset = {};
  auto added = [&](int id, const std::string& n) {
    out_.bodies.push_back(id);
    out_.names.push_back(n);
    return id;
  };
  if (joints.empty()) {
    RigidJointDesc jd{.type = RIGID_JOINT_FIXED, .parent = parent, .pos = base_p, .rot = base_q};
    return added(b_.add_body(name, jd), name);
  }
  int prev = parent;
  V prev_offset{};
  for (std::size_t k = 0; k < joints.size(); ++k) {
    const XMLElement* je = joints[k];
    const bool free = std::strcmp(je->Name(), "freejoint") == 0;
    const Attrs* d = free ? nullptr : defaults(je, cls, "joint");  // <freejoint> takes no defaults
    check_attributes(je, free ? "freejoint" : "joint");
    const std::string type = free ? "free" : attr(je, d, "type") ? attr(je, d, "type") : "hinge";
    const std::string jname = je->Attribute("name") ? je->Attribute("name") : name + "_joint" + std::to_string(k);
    RigidJointDesc jd;
    jd.parent = prev;
    if (type == "hinge")
      jd.type = RIGID_JOINT_REVOLUTE;
    else if (type == "slide")
      jd.type = RIGID_JOINT_PRISMATIC;
    else if (type == "ball")
      jd.type = RIGID_JOINT_BALL;
    else if (type == "free")
      jd.type = RIGID_JOINT_FREE;
    else
      fail(je, "joint type \"" + type + "\" is not supported");
    const bool one_dof = type == "hinge" || type == "slide";
    if (type == "free" && (joints.size() != 1 || parent != -1))
      fail(je, "a free joint must be the only joint of a body in the worldbody");
    const V axis = vec(je, d, "axis", {0, 0, 1});
    if (one_dof && !(length(axis) > 1e-10)) fail(je, "axis is zero");
    if (one_dof) jd.axis = axis / length(axis);
    const V anchor = type == "hinge" || type == "ball" ? vec(je, d, "pos", {}) : V{};
    if (k == 0) {
      jd.pos = base_p + rigid::qmat(base_q) * anchor;
      jd.rot = base_q;
    } else {
      jd.pos = anchor - prev_offset;
    }
    auto coord = [&](double x) { return type == "hinge" ? angle(x) : x; };
    const double ref = one_dof ? coord(num(je, d, "ref", 0)) : 0;
    // a reading option replaces the <default> classes: the element's own attribute, else the option
    auto dyn = [&](const char* key, const std::optional<double>& option) {
      return option && !je->Attribute(key) ? *option : num(je, option ? nullptr : d, key, 0);
    };
    jd.stiffness = one_dof ? dyn("stiffness", opt_.joint_stiffness) : num(je, d, "stiffness", 0);
    jd.spring_q = one_dof ? coord(num(je, d, "springref", 0)) - ref : 0;
    jd.damping = dyn("damping", opt_.joint_damping);
    jd.armature = dyn("armature", opt_.joint_armature);
    if (!(jd.stiffness >= 0) || !(jd.damping >= 0) || !(jd.armature >= 0))
      fail(je, "stiffness, damping and armature must be >= 0");
    if (jd.stiffness > 0 && !one_dof) {
      warn(je, "stiffness on a " + type + " joint ignored (hinge and slide only)");
      jd.stiffness = 0;
    }
    if (num(je, d, "frictionloss", 0) > 0) warn(je, "frictionloss ignored (not supported)");
    const int lim = tristate(je, d, "limited");
    const char* range = attr(je, d, "range");
    const bool limited = lim == 1 || (lim == -1 && autolimits_ && range);
    if (limited && !one_dof) warn(je, "range of a " + type + " joint ignored (hinge and slide only)");
    if (limited && one_dof && opt_.limit_ke > 0) {
      if (!range) fail(je, "limited=\"true\" needs a range");
      std::vector<double> r = nums(je, "range", range);
      if (r.size() != 2) fail(je, "range needs 2 numbers");
      if (!(r[0] < r[1])) fail(je, "range lower end must be below the upper end");
      jd.lower = coord(r[0]) - ref, jd.upper = coord(r[1]) - ref;
      jd.limit_ke = opt_.limit_ke, jd.limit_kd = opt_.limit_kd;
    } else if (!limited && type == "hinge" && opt_.hinge_range && opt_.limit_ke > 0) {
      jd.lower = (*opt_.hinge_range)[0] - ref, jd.upper = (*opt_.hinge_range)[1] - ref;
      jd.limit_ke = opt_.limit_ke, jd.limit_kd = opt_.limit_kd;
    }
    const bool last = k + 1 == joints.size();
    const std::string bname = last ? name : name + "/" + jname;
    const int id = added(b_.add_body(bname, jd), bname);
    if (!last) b_.set_mass(id, 0, {}, M3{});
    if (!joints_.emplace(jname, Joint{out_.layout.joints.size(), type, ref}).second)
      fail(je, "joint name \"" + jname + "\" is used twice");
    out_.layout.joints.push_back({jname, id, ref});
    prev = id;
    prev_offset = anchor;
  }
  offset = prev_offset;
  return prev;
}

void Reader::body(const XMLElement* e, int parent, const V& parent_offset, const std::string& cls_in) {
  std::string cls = cls_in;
  if (const char* c = e->Attribute("childclass")) {
    cls = c;
    if (!classes_.count(cls)) fail(e, "childclass \"" + cls + "\" is not defined");
  }
  check_attributes(e, "body");
  std::vector<const XMLElement*> joints, geoms, bodies;
  const XMLElement* inert = nullptr;
  for (const XMLElement* c : children(e)) {
    std::string tag = c->Name();
    if (tag == "joint" || tag == "freejoint")
      joints.push_back(c);
    else if (tag == "geom")
      geoms.push_back(c);
    else if (tag == "body")
      bodies.push_back(c);
    else if (tag == "inertial") {
      if (inert) fail(c, "a body has at most one <inertial>");
      inert = c;
    } else if (tag == "site" || tag == "camera" || tag == "light")
      skip(c, "not simulated");
    else
      skip(c, "not supported");
  }
  V offset;
  const int eb = add_joints(e, joints, cls, parent, parent_offset, offset);
  std::vector<MassPart> parts;
  for (const XMLElement* g : geoms) parts.push_back(geom(g, cls, eb, offset));
  MassPart mp;
  const bool from_geoms = inertiafromgeom_ == 1 || (inertiafromgeom_ == -1 && !inert);
  if (from_geoms) {
    mp = combine(parts);
    if (inert) warn(inert, "ignored: compiler inertiafromgeom=\"true\" takes the inertia from the geoms");
  } else if (inert) {
    check_attributes(inert, "inertial");
    mp = inertial(inert);
    if (std::string why = rigid_inertia_problem(mp.inertia); !why.empty()) {
      if (!balanceinertia_ && !opt_.balance_inertia)
        fail(inert, why + " (<compiler balanceinertia=\"true\"> or the scene's \"balance_inertia\" repairs it)");
      mp.inertia = rigid_balance_inertia(mp.inertia);
      warn(inert, why + "; balanced to " + std::to_string(mp.inertia.m[0][0]) + " kg m^2 about each axis");
    }
  }
  mp.com = mp.com - offset;
  masses_.push_back({eb, mp});
  for (const XMLElement* c : bodies) body(c, eb, offset, cls);
}

void Reader::actuator(const XMLElement* e, const std::string& cls) {
  for (const XMLElement* c : children(e)) {
    const std::string tag = c->Name();
    if (tag != "motor" && tag != "position" && tag != "velocity") {
      skip(c, "actuator type not supported (motor, position and velocity are)");
      continue;
    }
    const Attrs* d = defaults(c, cls, "actuator");
    check_attributes(c, tag);
    const char* jn = c->Attribute("joint");
    if (!jn) {
      skip(c, "actuators on tendons, sites or bodies are not supported");
      continue;
    }
    auto it = joints_.find(jn);
    if (it == joints_.end()) fail(c, std::string("no joint named \"") + jn + "\"");
    const Joint& j = it->second;
    if (j.type != "hinge" && j.type != "slide") fail(c, "actuators need a hinge or slide joint");
    std::vector<double> gear{1};
    if (const char* g = attr(c, d, "gear")) gear = nums(c, "gear", g);
    if (gear.empty()) fail(c, "gear has no number");
    const double g = gear[0];
    MujocoActuatorMap am;
    am.name = c->Attribute("name") ? c->Attribute("name") : tag + " " + std::to_string(out_.layout.actuators.size());
    const char* cr = attr(c, d, "ctrlrange");
    const int cl = tristate(c, d, "ctrllimited");
    am.ctrl_limited = cl == 1 || (cl == -1 && autolimits_ && cr);
    if (am.ctrl_limited) {
      if (!cr) fail(c, "ctrllimited=\"true\" needs a ctrlrange");
      std::vector<double> r = nums(c, "ctrlrange", cr);
      if (r.size() != 2 || !(r[0] <= r[1])) fail(c, "ctrlrange needs 2 numbers, lower first");
      am.ctrl_lower = r[0], am.ctrl_upper = r[1];
    }
    const int fl = tristate(c, d, "forcelimited");
    if (fl == 1 || (fl == -1 && autolimits_ && attr(c, d, "forcerange"))) warn(c, "forcerange ignored (not supported)");
    RigidActuatorDesc ad;
    ad.gear = g;
    if (tag == "motor") {
      ad.type = RIGID_ACTUATOR_TORQUE;
    } else {
      if (!(std::abs(g) > 0)) fail(c, "gear must be nonzero for a servo");
      const double kp = tag == "position" ? num(c, d, "kp", 1) : 0;
      const double kv = num(c, d, "kv", tag == "velocity" ? 1 : 0);
      if (!(kp >= 0) || !(kv >= 0)) fail(c, "gains kp and kv must be >= 0");
      ad.type = tag == "position" ? RIGID_ACTUATOR_PD : RIGID_ACTUATOR_VELOCITY;
      ad.kp = g * g * kp, ad.kd = g * g * kv;
      am.scale = 1 / g;
      am.offset = tag == "position" ? -j.ref : 0;
    }
    if (!opt_.actuators) continue;
    am.actuator = b_.add_actuator(out_.layout.joints[j.index].body, ad);
    out_.actuators.push_back(am.actuator);
    out_.layout.actuators.push_back(am);
  }
}

void Reader::run() {
  XMLDocument& doc = load(main_, nullptr);
  const XMLElement* root = doc.RootElement();
  if (!root || std::strcmp(root->Name(), "mujoco") != 0)
    throw MjcfError{main_ + ": not MJCF (no <mujoco> root element)"};
  std::error_code ec;
  including_.insert(fs::weakly_canonical(main_, ec).string());
  const std::vector<const XMLElement*> top = children(root);
  auto each = [&](const char* tag, auto&& f) {
    for (const XMLElement* c : top)
      if (std::strcmp(c->Name(), tag) == 0) f(c);
  };
  each("compiler", [&](const XMLElement* c) { compiler(c); });
  each("option", [&](const XMLElement* c) { option(c); });
  classes_["main"];
  each("default", [&](const XMLElement* c) { parse_default(c, ""); });
  each("asset", [&](const XMLElement* c) { asset(c); });
  each("worldbody", [&](const XMLElement* c) { world(c); });
  each("actuator", [&](const XMLElement* c) { actuator(c, "main"); });
  // the initial qpos: the first keyframe's, else a custom init_qpos
  std::vector<double> init_qpos;
  each("keyframe", [&](const XMLElement* c) {
    const XMLElement* key = c->FirstChildElement("key");
    if (out_.qpos0.empty() && key && key->Attribute("qpos")) out_.qpos0 = nums(key, "qpos", key->Attribute("qpos"));
  });
  each("custom", [&](const XMLElement* c) {
    for (const XMLElement* n = c->FirstChildElement("numeric"); n; n = n->NextSiblingElement("numeric"))
      if (n->Attribute("name", "init_qpos") && n->Attribute("data")) init_qpos = nums(n, "data", n->Attribute("data"));
  });
  if (out_.qpos0.empty()) out_.qpos0 = init_qpos;
  for (const XMLElement* c : top) {
    const std::string t = c->Name();
    if (t == "compiler" || t == "option" || t == "default" || t == "asset" || t == "worldbody" || t == "actuator" ||
        t == "keyframe")
      continue;
    skip(c, top_level_why(t));
  }
  // masses last: compiler settotalmass scales every mass and inertia, unless the import's
  // density decides them (dflex reads DiffRL's HalfCheetah, settotalmass 14, at density 1000)
  double total = 0;
  for (const auto& [id, mp] : masses_) total += mp.mass;
  const double s = opt_.density <= 0 && settotalmass_ > 0 && total > 0 ? settotalmass_ / total : 1;
  for (const auto& [id, mp] : masses_) b_.set_mass(id, mp.mass * s, mp.com, scaled(mp.inertia, s));
  for (const auto& [tag, sk] : skipped_)
    out_.warnings.push_back(sk.where + ": " + sk.why + "; skipped (" + std::to_string(sk.count) +
                            (sk.count == 1 ? " element)" : " elements)"));
  for (const auto& [key, ig] : ignored_)
    out_.warnings.push_back(ig.where + ": " + ig.why + " (" + std::to_string(ig.count) +
                            (ig.count == 1 ? " element)" : " elements)"));
}

}  // namespace

Result<MjcfImport> rigid_import_mjcf(const std::string& path, RigidBuilder& builder, const MjcfOptions& options) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::error(path + ": no such file");
  MjcfImport out;
  try {
    Reader r(path, builder, options, out);
    r.run();
  } catch (const MjcfError& e) {
    return Status::error(e.message);
  }
  return out;
}

}  // namespace adj
