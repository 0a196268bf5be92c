// The editor's authoring actions and their widgets: the Add menu (menu bar, the outliner's
// context menu, Shift+A), a collider's shape, and the tasks of the Optimization panel.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"
#include "engine/scene/compile.h"

namespace adj::editor {

// ---- Add

scene::V3 Editor::add_point() const {
  double ground = 0;
  for (const scene::Object& o : doc.scene().objects)
    if (o.kind == scene::ObjectKind::collider && o.collider.kind == scene::ColliderKind::ground) {
      ground = o.collider.position[1];
      break;
    }
  // the camera orbits its target: the ground under it is in front of the camera
  if (doc.scene().settings.up == "z") return {double(camera.target.x), double(camera.target.y), ground};
  return {double(camera.target.x), ground, double(camera.target.z)};
}

bool Editor::add_object(const std::string& entry_id, const std::string& name, const std::string& file) {
  const AddEntry* entry = find_add_entry(entry_id);
  if (!entry) {
    std::string ids;
    for (const AddEntry& e : add_entries()) ids += std::string(ids.empty() ? "" : " ") + e.id;
    message(Severity::warning, "add: no object type \"" + entry_id + "\" (" + ids + ")");
    return false;
  }
  // the file relative to the scene's folder when the scene has one, so the folder can move
  namespace fs = std::filesystem;
  std::string stored = file;
  if (!file.empty() && !doc.path().empty()) {
    std::error_code ec;
    fs::path rel = fs::relative(fs::absolute(file), doc.base_dir(), ec);
    if (!ec && !rel.empty()) stored = rel.string();
  } else if (!file.empty()) {
    stored = fs::absolute(file).string();
  }
  // ground and plane span the scene; everything else goes to a free spot in front of the camera
  const bool spans = entry->kind == AddKind::ground || entry->kind == AddKind::plane;
  const std::string& up = doc.scene().settings.up;
  auto made = make_object(entry->kind, name.empty() ? entry->id : name, add_point(), stored, up);
  if (!made) {
    message(Severity::warning, made.status().message());
    return false;
  }
  if (!spans) {  // made at the camera's target, then moved to the nearest free spot (same height)
    const scene::V3 at = free_spot(doc.scene(), add_point(), footprint_radius(*made));
    made = make_object(entry->kind, made->name, at, stored, up);
  }
  scene::Scene trial = doc.scene();
  trial.objects.push_back(*made);
  if (auto cs = scene::compile<float>(trial, doc.base_dir()); !cs) {  // a bad mesh: refused, nothing added
    message(Severity::error, "add " + std::string(entry->id) + ": " + cs.status().message());
    return false;
  }
  const std::optional<scene::Settings> settings = settings_for_added(doc.scene(), *made);
  selected_ = doc.add_object(std::move(*made), std::string("Add ") + entry->label, settings ? &*settings : nullptr);
  if (settings) message(Severity::info, robot_contact_note());
  message(Severity::info, "added " + std::string(scene::to_string(doc.scene().objects[size_t(selected_)].kind)) +
                              " \"" + doc.scene().objects[size_t(selected_)].name + "\"");
  return true;
}

void Editor::draw_add_menu() {
  const char* group = "";
  bool open = true;  // whether the current submenu is open
  auto close_group = [&] {
    if (*group && open) ImGui::EndMenu();
  };
  for (const AddEntry& e : add_entries()) {
    if (std::string_view(e.group) != group) {
      close_group();
      group = e.group;
      open = !*group || ImGui::BeginMenu(group);
    }
    if (!open) continue;
    if (ImGui::MenuItem(e.label)) {
      if (e.file_filter) {
        add_pending_ = e.id;
        add_file_[0] = 0;
      } else {
        add_object(e.id);
      }
    }
  }
  close_group();
}

void Editor::draw_menu_items_add() { draw_add_menu(); }

void Editor::draw_add_file_prompt() {
  if (add_pending_ && !ImGui::IsPopupOpen("Add from file")) ImGui::OpenPopup("Add from file");
  if (!ImGui::BeginPopupModal("Add from file", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const AddEntry* e = add_pending_ ? find_add_entry(add_pending_) : nullptr;
  if (!e) {
    ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    return;
  }
  ImGui::Text("%s  (%s)", e->label, e->file_filter);
  ImGui::SetNextItemWidth(420);
  const bool enter = ImGui::InputText("path", add_file_, sizeof add_file_, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::Button("Add") || enter) {
    if (add_object(e->id, "", add_file_)) add_pending_ = nullptr, ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) add_pending_ = nullptr, ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

// ---- a collider's shape

bool Editor::set_collider_kind(int index, scene::ColliderKind kind) {
  if (index < 0 || index >= int(doc.scene().objects.size()) ||
      doc.scene().objects[size_t(index)].kind != scene::ObjectKind::collider)
    return false;
  scene::Object o = doc.scene().objects[size_t(index)];
  if (o.collider.kind == kind) return false;
  if (kind == scene::ColliderKind::mesh && o.collider.mesh.empty()) {
    message(Severity::warning, o.name + ": a mesh collider needs its OBJ file; set \"mesh\" first");
    return false;
  }
  o.collider.kind = kind;
  // sizes as the new shape reads them: a sphere's radius and a capsule's half height from the box
  if (kind == scene::ColliderKind::sphere)
    o.collider.size = {o.collider.size[0], o.collider.size[0], o.collider.size[0]};
  doc.end_merge();
  doc.set_object(index, o, o.name + " shape " + scene::to_string(kind));
  return true;
}

void Editor::draw_collider_shape(int index) {
  const scene::Object& o = doc.scene().objects[size_t(index)];
  if (o.kind != scene::ObjectKind::collider) return;
  int kind = int(o.collider.kind);
  const char* names[] = {"ground", "plane", "sphere", "box", "capsule", "mesh"};
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::Combo("##shape", &kind, names, 6)) set_collider_kind(index, scene::ColliderKind(kind));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the collider's shape (one undo step)");
}

// ---- the iterate Apply applies

void Editor::pick_on_loss_plot(int hovered, float x0, float x1, float y0, float y1) {
  const int n = int(snap.loss.size());
  if (n == 0) return;
  auto x_of = [&](int i) { return n > 1 ? x0 + (x1 - x0) * float(i) / float(n - 1) : 0.5f * (x0 + x1); };
  if (hovered >= 0 && hovered < n) {
    ImGui::SetTooltip("iteration %d: loss %.6g\nclick: Apply (and Replay) takes it; right click: the best", hovered,
                      snap.loss[size_t(hovered)]);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) apply_iteration = hovered;
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) apply_iteration = -1;
  }
  const int shown = apply_iteration >= 0 && apply_iteration < n ? apply_iteration : snap.best_iteration;
  if (shown < 0 || shown >= n) return;
  const ImU32 colour = apply_iteration >= 0 ? IM_COL32(255, 191, 51, 255) : IM_COL32(120, 220, 120, 255);
  ImGui::GetWindowDrawList()->AddLine(ImVec2(x_of(shown), y0), ImVec2(x_of(shown), y1), colour, 1.5f);
  ImGui::TextDisabled("Apply: iteration %d (%s), loss %.6g", shown, apply_iteration >= 0 ? "picked" : "the best",
                      snap.loss[size_t(shown)]);
}

// ---- tasks

int Editor::find_task(const std::string& name) const {
  const auto& t = doc.scene().tasks;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return int(i);
  return -1;
}

bool Editor::add_task(const std::string& name, int horizon) {
  if (horizon < 1) {
    message(Severity::warning, "new task: the horizon must be at least 1 frame");
    return false;
  }
  scene::Scene s = doc.scene();
  s.tasks.push_back(make_task(s, name, horizon));
  const std::string made = s.tasks.back().name;
  doc.end_merge();
  doc.replace(std::move(s), "New task " + made);
  task_index = int(doc.scene().tasks.size()) - 1;
  return true;
}

bool Editor::remove_task(int index) {
  if (index < 0 || index >= int(doc.scene().tasks.size())) return false;
  scene::Scene s = doc.scene();
  const std::string name = s.tasks[size_t(index)].name;
  s.tasks.erase(s.tasks.begin() + index);
  doc.end_merge();
  doc.replace(std::move(s), "Delete task " + name);
  task_index = std::clamp(task_index, 0, std::max(0, int(doc.scene().tasks.size()) - 1));
  return true;
}

bool Editor::rename_task(int index, const std::string& name) {
  if (index < 0 || index >= int(doc.scene().tasks.size())) return false;
  if (name.empty() || (find_task(name) >= 0 && find_task(name) != index)) {
    message(Severity::warning, "rename task: \"" + name + "\" is taken or empty");
    return false;
  }
  scene::Task t = doc.scene().tasks[size_t(index)];
  const std::string old = t.name;
  t.name = name;
  doc.end_merge();
  doc.set_task(index, t, "Rename task " + old);
  return true;
}

bool Editor::set_task_horizon(int index, int horizon, uint64_t merge_key) {
  if (index < 0 || index >= int(doc.scene().tasks.size())) return false;
  if (horizon < 1) {
    message(Severity::warning, "horizon: at least 1 frame");
    return false;
  }
  scene::Task t = doc.scene().tasks[size_t(index)];
  if (t.horizon == horizon) return false;
  t.horizon = horizon;
  doc.set_task(index, t, "Horizon of " + t.name, merge_key);
  return true;
}

bool Editor::duplicate_task(int index) {
  if (index < 0 || index >= int(doc.scene().tasks.size())) return false;
  scene::Scene s = doc.scene();
  scene::Task copy = s.tasks[size_t(index)];
  copy.name = unique_task_name(s, copy.name);
  s.tasks.insert(s.tasks.begin() + index + 1, copy);
  doc.end_merge();
  doc.replace(std::move(s), "Duplicate task " + copy.name);
  task_index = index + 1;
  return true;
}

void Editor::draw_task_tools() {
  const int n = int(doc.scene().tasks.size());
  if (ImGui::SmallButton("New")) ImGui::OpenPopup("New task");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("a new task (a name and a horizon in frames)");
  if (n > 0) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Rename")) {
      std::snprintf(task_name_, sizeof task_name_, "%s", doc.scene().tasks[size_t(task_index)].name.c_str());
      ImGui::OpenPopup("Rename task");
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("Duplicate")) duplicate_task(task_index);
    ImGui::SameLine();
    if (ImGui::SmallButton("Delete")) remove_task(task_index);
  }
  if (ImGui::BeginPopup("New task")) {
    ImGui::SetNextItemWidth(160);
    ImGui::InputText("name", task_name_, sizeof task_name_);
    ImGui::SetNextItemWidth(160);
    ImGui::DragInt("horizon", &task_horizon_, 0.5f, 1, 100000, "%d frames");
    if (ImGui::Button("Create")) {
      add_task(task_name_, task_horizon_);
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopup("Rename task")) {
    ImGui::SetNextItemWidth(160);
    if (ImGui::InputText("name", task_name_, sizeof task_name_, ImGuiInputTextFlags_EnterReturnsTrue) ||
        ImGui::Button("Rename")) {
      rename_task(task_index, task_name_);
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace adj::editor

namespace adj::editor {

// ---- a task's controls: per-frame inputs, or a policy of one of the scene's robots

void Editor::draw_task_policy(int index) {
  const scene::Scene& s = doc.scene();
  const scene::Task& t = s.tasks[size_t(index)];
  std::vector<std::string> robots;
  for (const scene::Object& o : s.objects)
    if (o.kind == scene::ObjectKind::robot) robots.push_back(o.name);
  if (robots.empty() && !t.has_policy) return;
  std::string current;
  for (const scene::ParamSpec& p : t.parameters)
    if (p.kind == scene::ParamKind::policy) current = p.object;
  const std::string preview = t.has_policy ? "policy of " + current : std::string("per-frame inputs");
  ImGui::SetNextItemWidth(-60);
  if (ImGui::BeginCombo("controls", preview.c_str())) {
    if (ImGui::Selectable("per-frame inputs", !t.has_policy)) set_task_policy(index, "");
    for (const std::string& r : robots)
      if (ImGui::Selectable(("policy of " + r).c_str(), t.has_policy && current == r)) set_task_policy(index, r);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "per-frame inputs: the optimizer sets each frame's actuator inputs of this one rollout\n"
        "a policy: a network from the robot's joint state (and sine phases) to its actuator\n"
        "inputs, trained over the horizon (the episode) by BPTT, SHAC or PODS");
  draw_policy_terms(index);
  // the policy's network and starts, folded away (the plots below keep their room at 1280x720)
  if (!t.has_policy || !ImGui::TreeNode("policy network and starts")) return;
  scene::Task e = t;
  bool changed = false;
  const uint64_t key = std::hash<std::string>{}(t.name + "/policy");
  // the network: hidden layer widths, "32,32"
  char hidden[64] = "";
  for (size_t i = 0; i < e.policy.hidden.size(); ++i)
    std::snprintf(hidden + std::strlen(hidden), sizeof hidden - std::strlen(hidden), "%s%d", i ? "," : "",
                  e.policy.hidden[i]);
  ImGui::SetNextItemWidth(90);
  ImGui::InputText("##hidden", hidden, sizeof hidden);
  if (ImGui::IsItemDeactivatedAfterEdit()) {
    std::vector<int> widths;
    for (const char* p = hidden; *p;) {
      char* end = nullptr;
      const long w = std::strtol(p, &end, 10);
      if (end == p || w < 1 || w > 4096) break;
      widths.push_back(int(w));
      p = *end == ',' ? end + 1 : end;
      if (end == p && *p) break;
    }
    if (!widths.empty() && widths != e.policy.hidden) e.policy.hidden = widths, changed = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("hidden layer widths (tanh), comma-separated: 32,32");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(80);
  changed |= ImGui::DragInt("##phases", &e.policy.phases, 0.1f, 0, 16, "%d phases");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("sine phase observations (a gait's clock); 0: none");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  changed |= ImGui::DragScalar("##period", ImGuiDataType_Double, &e.policy.phase_period, 0.01f, nullptr, nullptr,
                               "period %.2f s");
  ImGui::SetNextItemWidth(90);
  changed |=
      ImGui::DragScalar("##scale", ImGuiDataType_Double, &e.policy.output_scale, 0.01f, nullptr, nullptr, "scale %.2f");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("actions = scale * tanh(the last layer)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  changed |= ImGui::DragScalar("##startq", ImGuiDataType_Double, &e.policy.start_q_range, 0.01f, nullptr, nullptr,
                               "q0 +-%.2f");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  changed |= ImGui::DragScalar("##startqd", ImGuiDataType_Double, &e.policy.start_qd_range, 0.01f, nullptr, nullptr,
                               "qd0 +-%.2f");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("randomized starts (SHAC, PODS): each joint moved by up to q0, each dof's velocity by qd0");
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  // each action's control = offset + scale x action, one number per action ("" for 1 and 0)
  for (int m = 0; m < 2; ++m) {
    std::vector<double>& v = m == 0 ? e.policy.action_scale : e.policy.action_offset;
    char text[256];
    std::snprintf(text, sizeof text, "%s", number_list_text(v, "%.6g").c_str());
    if (m == 1) ImGui::SameLine();
    ImGui::SetNextItemWidth(m == 0 ? ImGui::GetContentRegionAvail().x * 0.5f : -FLT_MIN);
    ImGui::InputTextWithHint(m == 0 ? "##ascale" : "##aoffset", m == 0 ? "action scale" : "action offset", text,
                             sizeof text);
    if (ImGui::IsItemDeactivatedAfterEdit())
      if (std::optional<std::vector<double>> list = parse_number_list(text); list && *list != v)
        v = *list, changed = true;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "each action's input to its actuator = offset + scale x action, one number per\n"
          "actuator, comma-separated (a gripper: 0.25,0.002,0.002); empty: scale 1, offset 0");
  }
  if (changed) {
    e.policy.phase_period = std::max(e.policy.phase_period, 1e-3);
    e.policy.start_q_range = std::max(e.policy.start_q_range, 0.0);
    e.policy.start_qd_range = std::max(e.policy.start_qd_range, 0.0);
    doc.set_task(index, e, "Policy", key);
  }
  ImGui::TreePop();
}

// ---- a policy's observation terms (what the network reads of its robot) and its termination
// (an episode ends when a body's centre of mass falls below a height), folded away

void Editor::draw_policy_terms(int index) {
  using K = scene::ObservationKind;
  const scene::Task& t = doc.scene().tasks[size_t(index)];
  if (!t.has_policy || !ImGui::TreeNode("policy observation and termination")) return;
  std::string robot;
  for (const scene::ParamSpec& p : t.parameters)
    if (p.kind == scene::ParamKind::policy) robot = p.object;
  const std::vector<std::string> bodies = robot_bodies(robot);
  const std::string first = bodies.empty() ? std::string() : bodies.front();
  const std::vector<std::string> objects = particle_objects();
  auto body_combo = [&](const char* id, std::string& body) {
    bool changed = false;
    ImGui::SetNextItemWidth(90);
    if (ImGui::BeginCombo(id, body.empty() ? "(body)" : body.c_str())) {
      for (const std::string& b : bodies)
        if (ImGui::Selectable(b.c_str(), body == b)) body = b, changed = true;
      ImGui::EndCombo();
    }
    return changed;
  };
  scene::Task e = t;
  bool changed = false;
  uint64_t key = 0;
  int remove = -1;
  for (int i = 0; i < int(e.policy.observation.size()); ++i) {
    ImGui::PushID(i);
    scene::ObservationTerm& o = e.policy.observation[size_t(i)];
    ImGui::SetNextItemWidth(112);
    if (ImGui::BeginCombo("##obskind", scene::to_string(o.kind))) {
      for (int k = 0; k <= int(scene::last_observation_kind); ++k)
        if (ImGui::Selectable(scene::to_string(K(k)), o.kind == K(k))) {
          o.kind = K(k), changed = true;
          if (o.body.empty() && !scene::reads_object(o.kind)) o.body = first;
          if (o.object.empty() && scene::reads_object(o.kind) && !objects.empty()) o.object = objects.front();
        }
      ImGui::EndCombo();
    }
    const bool joints = o.kind == K::joint_positions || o.kind == K::joint_velocities || o.kind == K::previous_action;
    if (scene::reads_object(o.kind)) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(90);
      if (ImGui::BeginCombo("##obsobject", o.object.empty() ? "(object)" : o.object.c_str())) {
        for (const std::string& n : objects)
          if (ImGui::Selectable(n.c_str(), o.object == n)) o.object = n, changed = true;
        ImGui::EndCombo();
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the particle object whose centre of mass the term reads");
    } else if (!joints) {
      ImGui::SameLine();
      changed |= body_combo("##obsbody", o.body);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the body the term reads");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - 30, 30.0f));
    if (ImGui::DragScalar("##obsscale", ImGuiDataType_Double, &o.scale, 0.01f, nullptr, nullptr, "x %.3g"))
      changed = true, key = std::hash<std::string>{}(t.name + "/obs/scale") ^ uint64_t(i);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("every entry of the term times this");
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) remove = i;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("remove this observation term");
    if (o.kind == K::up_projection || o.kind == K::heading_projection) {
      ImGui::SetNextItemWidth(o.kind == K::heading_projection ? ImGui::GetContentRegionAvail().x * 0.5f : -FLT_MIN);
      if (ImGui::DragScalarN("##obsaxis", ImGuiDataType_Double, o.axis.data(), 3, 0.01f, nullptr, nullptr, "%.2f"))
        changed = true, key = std::hash<std::string>{}(t.name + "/obs/axis") ^ uint64_t(i);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the body-frame axis projected");
    }
    if (o.kind == K::heading_projection) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-FLT_MIN);
      if (ImGui::DragScalarN("##obsdir", ImGuiDataType_Double, o.direction.data(), 3, 0.01f, nullptr, nullptr, "%.2f"))
        changed = true, key = std::hash<std::string>{}(t.name + "/obs/dir") ^ uint64_t(i);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the world direction to face (laid in the ground plane)");
    }
    if (ImGui::IsItemDeactivated()) doc.end_merge();
    ImGui::PopID();
  }
  if (remove >= 0) e.policy.observation.erase(e.policy.observation.begin() + remove), changed = true, key = 0;
  if (ImGui::SmallButton("+ add observation")) {
    e.policy.observation.push_back({scene::ObservationKind::height, first});
    changed = true, key = 0;
  }
  ui_items.note("optimization/add-observation");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("a named observation term (none: each joint's angle and every velocity, then the phases)");
  // the termination: off (empty object) by default
  bool ends = !e.termination.object.empty();
  if (ImGui::Checkbox("end when", &ends)) {
    e.termination = ends ? scene::Task::Termination{robot, first, e.termination.height} : scene::Task::Termination{};
    changed = true, key = 0;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("an episode ends early when the body's centre of mass is below the height (SHAC, PODS)");
  if (ends) {
    ImGui::SameLine();
    changed |= body_combo("##termbody", e.termination.body);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (ImGui::DragScalar("##termheight", ImGuiDataType_Double, &e.termination.height, 0.01f, nullptr, nullptr,
                          "below %.3f m"))
      changed = true, key = std::hash<std::string>{}(t.name + "/termination");
    if (ImGui::IsItemDeactivated()) doc.end_merge();
  }
  if (changed) {
    if (key == 0) doc.end_merge();
    doc.set_task(index, e, "Policy terms", key);
  }
  ImGui::TreePop();
}

}  // namespace adj::editor
