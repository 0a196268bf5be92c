#include "app/editor/document.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "engine/scene/scene_paths.h"

namespace adj::editor {

namespace {

using M3 = std::array<std::array<double, 3>, 3>;  // [row][col]

// XYZ Euler angles in degrees, R = Rz Ry Rx (as engine/scene/compile.cpp)
M3 euler(const scene::V3& deg) {
  const double k = 3.14159265358979323846 / 180.0;
  const double cx = std::cos(deg[0] * k), sx = std::sin(deg[0] * k), cy = std::cos(deg[1] * k),
               sy = std::sin(deg[1] * k), cz = std::cos(deg[2] * k), sz = std::sin(deg[2] * k);
  return {{{cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx},
           {sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx},
           {-sy, cy * sx, cy * cx}}};
}

// the optimized initial state of a cloth or soft body follows an edit of its placement
// (position, rotation, cell or mesh scale): p' = o' + k R' R^T (p - o), v' = R' R^T v
void move_particle_state(std::vector<scene::V3>& q, std::vector<scene::V3>& qd, const scene::V3& o0, const M3& r0,
                         const scene::V3& o1, const M3& r1, double k) {
  M3 r{};  // r1 r0^T
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < 3; ++l) r[i][j] += r1[i][l] * r0[j][l];
  auto turn = [&](const scene::V3& v) {
    scene::V3 out{};
    for (int i = 0; i < 3; ++i) out[i] = r[i][0] * v[0] + r[i][1] * v[1] + r[i][2] * v[2];
    return out;
  };
  for (scene::V3& p : q) {
    scene::V3 d = turn({p[0] - o0[0], p[1] - o0[1], p[2] - o0[2]});
    p = {o1[0] + k * d[0], o1[1] + k * d[1], o1[2] + k * d[2]};
  }
  for (scene::V3& v : qd) v = turn(v);
}

// an edit of a cloth or soft body keeps its optimized initial state consistent: it moves with
// the placement, and goes when the particles change (grid size, mesh, a mesh's voxel cell)
void follow_placement(const scene::Object& before, scene::Object& after) {
  if (before.kind != after.kind || before.name != after.name) return;
  const bool cloth = after.kind == scene::ObjectKind::cloth;
  if (!cloth && after.kind != scene::ObjectKind::soft) return;
  auto& q = cloth ? after.cloth.particle_positions : after.soft.particle_positions;
  auto& qd = cloth ? after.cloth.particle_velocities : after.soft.particle_velocities;
  const auto& q0 = cloth ? before.cloth.particle_positions : before.soft.particle_positions;
  const auto& qd0 = cloth ? before.cloth.particle_velocities : before.soft.particle_velocities;
  if ((q.empty() && qd.empty()) || q != q0 || qd != qd0) return;  // none, or this edit sets them (Apply)
  const scene::V3 identity{0, 0, 0};
  if (cloth) {
    const scene::ClothObject &b = before.cloth, &a = after.cloth;
    if (a.mesh != b.mesh || a.nx != b.nx || a.ny != b.ny) return q.clear(), qd.clear();
    const double k = a.mesh.empty() ? a.cell / b.cell : a.scale / b.scale;
    if (a.position != b.position || a.rotation != b.rotation || k != 1.0)
      move_particle_state(q, qd, b.position, euler(b.rotation), a.position, euler(a.rotation), k);
  } else {
    const scene::SoftObject &b = before.soft, &a = after.soft;
    const bool mesh = !a.mesh.empty();
    if (a.mesh != b.mesh || a.nx != b.nx || a.ny != b.ny || a.nz != b.nz || (mesh && a.cell != b.cell))
      return q.clear(), qd.clear();
    const double k = mesh ? a.scale / b.scale : a.cell / b.cell;  // a grid does not turn
    const scene::V3 &r0 = mesh ? b.rotation : identity, &r1 = mesh ? a.rotation : identity;
    if (a.position != b.position || r0 != r1 || k != 1.0)
      move_particle_state(q, qd, b.position, euler(r0), a.position, euler(r1), k);
  }
}

}  // namespace

Document::Document(scene::Scene scene, std::string path) : scene_(std::move(scene)), path_(std::move(path)) {}

std::string Document::base_dir() const {
  if (path_.empty()) return std::filesystem::current_path().string();
  return std::filesystem::path(path_).parent_path().string();
}

void Document::rebase_paths(const std::string& dir) {
  const std::string from = base_dir();
  scene::rebase_paths(scene_, from, dir);
  for (auto* stack : {&undo_, &redo_})
    for (Command& c : *stack) {
      scene::rebase_paths(c.before, from, dir);
      scene::rebase_paths(c.after, from, dir);
    }
}

void Document::mark_saved(const std::string& path) {
  path_ = path;
  saved_id_ = top_id();
  merge_open_ = false;
}

void Document::commit(scene::Scene after, const std::string& label, uint64_t merge_key) {
  if (after.objects.size() == scene_.objects.size())
    for (size_t i = 0; i < after.objects.size(); ++i) follow_placement(scene_.objects[i], after.objects[i]);
  if (after == scene_) return;
  // continue the open merge: same key, top of the stack, nothing redone in between
  if (merge_key != 0 && merge_open_ && !undo_.empty() && undo_.back().merge_key == merge_key) {
    Command& top = undo_.back();
    top.after = after;
    top.id = next_id_++;  // a different state than the one that may have been saved
    scene_ = std::move(after);
    ++revision_;
    return;
  }
  Command c{label, scene_, after, merge_key, next_id_++};
  undo_.push_back(std::move(c));
  if (undo_.size() > k_history_limit) undo_.erase(undo_.begin());
  redo_.clear();
  scene_ = std::move(after);
  merge_open_ = merge_key != 0;
  ++revision_;
}

void Document::set_object(int index, scene::Object object, const std::string& label, uint64_t merge_key) {
  if (index < 0 || index >= int(scene_.objects.size())) return;
  scene::Scene s = scene_;
  s.objects[size_t(index)] = std::move(object);
  commit(std::move(s), label, merge_key);
}

void Document::set_settings(scene::Settings settings, const std::string& label, uint64_t merge_key) {
  scene::Scene s = scene_;
  s.settings = std::move(settings);
  commit(std::move(s), label, merge_key);
}

void Document::set_task(int index, scene::Task task, const std::string& label, uint64_t merge_key) {
  if (index < 0 || index >= int(scene_.tasks.size())) return;
  scene::Scene s = scene_;
  s.tasks[size_t(index)] = std::move(task);
  commit(std::move(s), label, merge_key);
}

int Document::add_object(scene::Object object, const std::string& label, const scene::Settings* settings) {
  scene::Scene s = scene_;
  if (settings) s.settings = *settings;
  object.name = unique_name(s, object.name.empty() ? "object" : object.name);
  s.objects.push_back(std::move(object));
  int index = int(s.objects.size()) - 1;
  end_merge();
  commit(std::move(s), label, 0);
  return index;
}

int Document::duplicate_object(int index) {
  if (index < 0 || index >= int(scene_.objects.size())) return -1;
  scene::Scene s = scene_;
  scene::Object copy = s.objects[size_t(index)];
  copy.name = unique_name(s, copy.name);
  s.objects.insert(s.objects.begin() + index + 1, std::move(copy));
  end_merge();
  commit(std::move(s), "Duplicate " + scene_.objects[size_t(index)].name, 0);
  return index + 1;
}

void Document::delete_object(int index) {
  if (index < 0 || index >= int(scene_.objects.size())) return;
  scene::Scene s = scene_;
  const std::string name = s.objects[size_t(index)].name;
  s.objects.erase(s.objects.begin() + index);
  for (scene::Task& t : s.tasks) {
    std::erase_if(t.parameters, [&](const scene::ParamSpec& p) { return p.object == name; });
    std::erase_if(t.loss, [&](const scene::LossTerm& l) { return l.object == name || l.target == name; });
  }
  end_merge();
  commit(std::move(s), "Delete " + name, 0);
}

bool Document::rename_object(int index, const std::string& name) {
  if (index < 0 || index >= int(scene_.objects.size()) || name.empty()) return false;
  const std::string old = scene_.objects[size_t(index)].name;
  if (name == old) return true;
  if (scene_.find(name)) return false;
  scene::Scene s = scene_;
  s.objects[size_t(index)].name = name;
  for (scene::Task& t : s.tasks) {
    for (auto& p : t.parameters)
      if (p.object == old) p.object = name;
    for (auto& l : t.loss) {
      if (l.object == old) l.object = name;
      if (l.target == old) l.target = name;
    }
  }
  end_merge();
  commit(std::move(s), "Rename " + old + " to " + name, 0);
  return true;
}

void Document::replace(scene::Scene scene, const std::string& label, uint64_t merge_key) {
  commit(std::move(scene), label, merge_key);
}

int Document::add_loss_term(int task, scene::LossTerm term) {
  if (task < 0 || task >= int(scene_.tasks.size())) return -1;
  scene::Scene s = scene_;
  auto& loss = s.tasks[size_t(task)].loss;
  const std::string label = std::string("Add loss term ") + scene::to_string(term.kind);
  loss.push_back(std::move(term));
  const int index = int(loss.size()) - 1;
  end_merge();
  commit(std::move(s), label, 0);
  return index;
}

bool Document::remove_loss_term(int task, int term) {
  if (task < 0 || task >= int(scene_.tasks.size())) return false;
  scene::Scene s = scene_;
  auto& loss = s.tasks[size_t(task)].loss;
  if (term < 0 || term >= int(loss.size())) return false;
  const std::string label = std::string("Remove loss term ") + scene::to_string(loss[size_t(term)].kind);
  loss.erase(loss.begin() + term);
  end_merge();
  commit(std::move(s), label, 0);
  return true;
}

bool Document::set_loss_term(int task, int term, scene::LossTerm value, const std::string& label, uint64_t merge_key) {
  if (task < 0 || task >= int(scene_.tasks.size())) return false;
  if (term < 0 || term >= int(scene_.tasks[size_t(task)].loss.size())) return false;
  scene::Scene s = scene_;
  s.tasks[size_t(task)].loss[size_t(term)] = std::move(value);
  commit(std::move(s), label, merge_key);
  return true;
}

bool Document::undo() {
  if (undo_.empty()) return false;
  Command c = std::move(undo_.back());
  undo_.pop_back();
  scene_ = c.before;
  redo_.push_back(std::move(c));
  merge_open_ = false;
  ++revision_;
  return true;
}

bool Document::redo() {
  if (redo_.empty()) return false;
  Command c = std::move(redo_.back());
  redo_.pop_back();
  scene_ = c.after;
  undo_.push_back(std::move(c));
  merge_open_ = false;
  ++revision_;
  return true;
}

bool same_simulation(const scene::Scene& a, const scene::Scene& b) {
  if (a.settings != b.settings || a.objects.size() != b.objects.size()) return false;
  for (size_t i = 0; i < a.objects.size(); ++i) {
    scene::Object x = a.objects[i], y = b.objects[i];
    if (x.kind != y.kind) return false;
    if (x.kind == scene::ObjectKind::target) continue;  // markers that losses read; the solver never does
    x.name.clear(), y.name.clear();
    x.visible = y.visible = true;
    if (!(x == y)) return false;
  }
  return true;
}

std::string unique_name(const scene::Scene& scene, const std::string& base) {
  if (!scene.find(base)) return base;
  // strip an existing ".NNN" suffix so copies of copies count on
  std::string stem = base;
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot + 4 == base.size() &&
      std::all_of(base.begin() + long(dot) + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    stem = base.substr(0, dot);
  for (int k = 1;; ++k) {
    char buf[16];
    std::snprintf(buf, sizeof buf, ".%03d", k);
    std::string candidate = stem + buf;
    if (!scene.find(candidate)) return candidate;
  }
}

}  // namespace adj::editor
