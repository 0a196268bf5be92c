// internals of the scene JSON reader and writer, shared by scene_read.cpp (values ->
// Scene, with JSON-path errors), scene_write.cpp (Scene -> ordered JSON) and
// scene_robot_json.cpp (robot objects). Not part of the public API.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "engine/scene/scene.h"
#include "engine/scene/scene_json.h"

namespace adj::scene::json_detail {

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
  const std::string& source() const { return source_; }
  // another reader's errors (a sidecar file's), already prefixed with their source
  void add_errors(const std::vector<std::string>& errors) {
    errors_.insert(errors_.end(), errors.begin(), errors.end());
  }
  const std::vector<std::string>& errors() const { return errors_; }

  void error(const std::string& path, const std::string& message) {
    errors_.push_back(source_ + ": " + (path.empty() ? "(top level)" : path) + ": " + message);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

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

  void number(Fields& f, const char* key, double& out, double lo = -k_inf, double hi = k_inf, bool required = false) {
    const json* v = field(f, key, required);
    if (!v) return;
    if (!v->is_number()) return error(join(f.path, key), "expected a number");
    double x = v->get<double>();
    if (!std::isfinite(x)) return error(join(f.path, key), "expected a finite number");
    if (x < lo || x > hi) return error(join(f.path, key), range_message(x, lo, hi));
    out = x;
  }

  void integer(Fields& f, const char* key, int& out, long long lo, long long hi, bool required = false) {
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

  // a list of [x, y, z] entries (at most limits().max_list)
  void vec3_list(Fields& f, const char* key, std::vector<V3>& out) {
    const json* a = array(f, key);
    if (!a) return;
    const std::string p = join(f.path, key);
    out.clear();
    for (size_t i = 0; i < a->size(); ++i) {
      const json& e = (*a)[i];
      V3 v{};
      bool ok = e.is_array() && e.size() == 3;
      for (size_t c = 0; ok && c < 3; ++c) {
        ok = e[c].is_number() && std::isfinite(e[c].get<double>());
        if (ok) v[c] = e[c].get<double>();
      }
      if (!ok) return error(index(p, i), "expected [x, y, z] of finite numbers");
      out.push_back(v);
    }
  }

  // a list of finite numbers (at most limits().max_list)
  void number_list(Fields& f, const char* key, std::vector<double>& out, bool required = false) {
    const json* a = array(f, key, required);
    if (!a) return;
    out.clear();
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_number() || !std::isfinite((*a)[i].get<double>()))
        return error(index(join(f.path, key), i), "expected a finite number");
      out.push_back((*a)[i].get<double>());
    }
  }

  // one of the names; returns its index or -1
  int choice(Fields& f, const char* key, std::initializer_list<const char*> names, bool required) {
    return choice(f, key, std::vector<const char*>(names), required);
  }
  int choice(Fields& f, const char* key, const std::vector<const char*>& names, bool required) {
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

ojson v3(const V3& v);

// a task's stored values (Task::values) from a JSON array: inline in the scene, or in the
// sidecar file a task names with "values_file" (scene_read.cpp)
void read_values(Reader& r, const json& a, const std::string& path, std::vector<ParamValues>& out);

// the sidecar: tasks whose stored values hold more than k_inline_values numbers keep them in
// "<scene file>.values.json" next to the scene, written with it (save_scene)
inline constexpr size_t k_inline_values = 4096;
inline constexpr long long k_max_sidecar_values = 64'000'000;
inline std::string sidecar_name(const std::string& scene_filename) { return scene_filename + ".values.json"; }

// robot objects ("robot" with bodies, "urdf" with a file): read into o.robot, write back
void read_robot(Reader& r, Fields& f, RobotObject& robot, bool urdf);
ojson write_robot(const Object& o);

}  // namespace adj::scene::json_detail
