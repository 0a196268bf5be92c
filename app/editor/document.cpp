#include "app/editor/document.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "engine/scene/scene_paths.h"

namespace adj::editor {

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

int Document::add_object(scene::Object object, const std::string& label) {
  scene::Scene s = scene_;
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
