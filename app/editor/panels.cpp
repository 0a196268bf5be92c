// The editor's panels: outliner, inspector, simulation, optimization, visualization,
// stats, messages, the File/Edit/View menu items and the file prompts. Without docking
// (ImGui 1.86) the panels sit in two side columns that follow the window size.
#include <GLFW/glfw3.h>  // key codes: ImGui 1.86 indexes keys by the GLFW backend's codes
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <utility>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"

#include "app/editor/fields.h"
#include "app/editor/plot.h"
#include "engine/scene/compile.h"
#include "engine/vis/rigid_vis.h"

namespace adj::editor {

namespace {

const ImVec4 k_opt_color(0.95f, 0.75f, 0.3f, 1.0f);
const ImVec4 k_error_color(1.0f, 0.45f, 0.4f, 1.0f);
const ImVec4 k_warning_color(1.0f, 0.8f, 0.4f, 1.0f);

uint64_t merge_key(const void* a, const char* b) {
  // one drag of one field: the id of the widget, stable while it is held
  return uint64_t(ImGui::GetID(b)) ^ (uint64_t(reinterpret_cast<uintptr_t>(a)) << 1) ^ 0x9e3779b97f4a7c15ull;
}

// a text input over a std::string (imgui_stdlib is not in Debian's libimgui.a)
bool input_string(const char* label, std::string& s, ImGuiInputTextFlags flags = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s", s.c_str());
  bool changed = ImGui::InputText(label, buf, sizeof buf, flags);
  if (changed) s = buf;
  return changed;
}

// one field of the inspector; returns true while it changed the value this frame
bool draw_field(const Field& f, void* value) {
  ImGui::SetNextItemWidth(-FLT_MIN);
  bool changed = false;
  const char* id = f.name;
  ImGui::PushID(id);
  switch (f.type) {
    case FieldType::number: {
      double* v = static_cast<double*>(value);
      float speed = f.speed > 0 ? f.speed : float(std::max(std::abs(*v), 1e-3) * 0.005);
      changed = ImGui::DragScalar("##v", ImGuiDataType_Double, v, speed, &f.min, &f.max, "%.6g");
      break;
    }
    case FieldType::integer: {
      int* v = static_cast<int*>(value);
      changed = ImGui::DragInt("##v", v, f.speed, int(f.min), int(f.max));
      break;
    }
    case FieldType::boolean:
      changed = ImGui::Checkbox("##v", static_cast<bool*>(value));
      break;
    case FieldType::vec3:
      changed =
          ImGui::DragScalarN("##v", ImGuiDataType_Double, static_cast<double*>(value), 3, f.speed,
                             std::isfinite(f.min) ? &f.min : nullptr, std::isfinite(f.max) ? &f.max : nullptr, "%.4g");
      break;
    case FieldType::text:
      changed = input_string("##v", *static_cast<std::string*>(value), ImGuiInputTextFlags_EnterReturnsTrue);
      break;
  }
  if (f.unit[0] && ImGui::IsItemHovered()) ImGui::SetTooltip("%s [%s]\nCtrl+click to type a value", f.name, f.unit);
  ImGui::PopID();
  return changed;
}

// label column + value column
void row_label(const char* name, bool optimized) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::AlignTextToFramePadding();
  if (optimized)
    ImGui::TextColored(k_opt_color, "%s *", name);
  else
    ImGui::TextUnformatted(name);
  ImGui::TableSetColumnIndex(1);
}

// is the parameter kind optimized for this object in the task?
scene::ParamSpec* find_param(scene::Task& t, scene::ParamKind k, const std::string& object) {
  for (auto& p : t.parameters)
    if (p.kind == k && p.object == object) return &p;
  return nullptr;
}

bool object_optimized(const scene::Scene& s, int task_index, const std::string& name) {
  if (task_index < 0 || task_index >= int(s.tasks.size())) return false;
  for (const auto& p : s.tasks[size_t(task_index)].parameters)
    if (p.object == name) return true;
  return false;
}

// the viridis map at a few stops, for the legend
ImU32 viridis(float t) {
  static const float c[5][3] = {{0.267f, 0.005f, 0.329f},
                                {0.229f, 0.322f, 0.546f},
                                {0.128f, 0.567f, 0.551f},
                                {0.369f, 0.789f, 0.383f},
                                {0.993f, 0.906f, 0.144f}};
  t = std::clamp(t, 0.0f, 1.0f) * 4.0f;
  int i = std::min(int(t), 3);
  float f = t - float(i);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[i][0] + (c[i + 1][0] - c[i][0]) * f,
                                               c[i][1] + (c[i + 1][1] - c[i][1]) * f,
                                               c[i][2] + (c[i + 1][2] - c[i][2]) * f, 1.0f));
}

long resident_mb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, rss = 0;
  f >> pages >> rss;
  return rss * 4096 / (1024 * 1024);
}

// height_reward's shape on a row of its own: d = clip(height - value, lower, upper) is rewarded
// `above` d for d >= 0 and `below` d - `quadratic` d^2 for d < 0 (the locomotion suite's form)
// returns 1 when a value changed, 2 when a drag or typed value ended (the undo step closes)
int height_reward_shape(scene::LossTerm& l, int term, UiItems& ui_items) {
  struct Part {
    const char* id;
    double* value;
    const char* format;
    const char* tip;
  };
  const Part parts[] = {
      {"lower", &l.lower, "d >= %.3g m", "d is clipped below at this [m] (-inf: not clipped)"},
      {"upper", &l.upper, "d <= %.3g m", "d is clipped above at this [m] (inf: not clipped)"},
      {"above", &l.above, "above %.3g", "reward per metre of d above 0"},
      {"below", &l.below, "below %.3g", "reward per metre of d below 0 (d < 0 is negative)"},
      {"quadratic", &l.quadratic, "d^2 %.3g", "penalty per square metre of d below 0"},
  };
  int out = 0;
  // two rows: the clip bounds, then the slopes and the penalty
  const float avail = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  for (size_t k = 0; k < std::size(parts); ++k) {
    if (k != 0 && k != 2) ImGui::SameLine();
    ImGui::SetNextItemWidth(k < 2 ? (avail - gap) / 2 : (avail - 2 * gap) / 3);
    if (ImGui::DragScalar((std::string("##") + parts[k].id).c_str(), ImGuiDataType_Double, parts[k].value, 0.01f,
                          nullptr, nullptr, parts[k].format))
      out |= 1;
    if (ImGui::IsItemDeactivated()) out |= 2;
    ui_items.note("optimization/term/" + std::to_string(term) + "/" + parts[k].id);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", parts[k].tip);
  }
  if (l.lower > l.upper) l.upper = l.lower;  // the reader refuses lower above upper
  return out;
}

}  // namespace

// ---- layout

void Editor::draw_panels(float menu_height) {
  ui_items.clear();
  report_worker_errors();
  // Tab is the panels' key (MuJoCo's): ImGui's Tab focusing into the focused panel's next field
  // would capture the keyboard and swallow the next Tab / Shift+Tab
  ImGui::PushAllowKeyboardFocus(false);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float W = vp->Size.x, H = vp->Size.y - menu_height;
  const float left = std::clamp(W * 0.22f, 200.0f, 320.0f), right = std::clamp(W * 0.26f, 240.0f, 380.0f);
  const float top = vp->Pos.y + menu_height;
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings;

  // a panel that sizes to its content: what it drew last frame, within reason
  auto fit = [&](float content) { return std::clamp(content, 80.0f, std::max(80.0f, H * 0.6f)); };
  // and records it: the cursor after the last row, in the window's coordinates (title bar
  // and any scroll included), plus the bottom padding
  auto measure = [](float& content) { content = ImGui::GetCursorPosY() + ImGui::GetStyle().WindowPadding.y; };

  // left column: outliner over inspector, the visualization settings docked below them
  const float vis_h = panels.visualization ? fit(panels.visualization_h) : 0.0f;
  const float left_h = H - vis_h;
  float outliner_h =
      panels.inspector
          ? std::min(left_h * 0.34f, 60.0f + 22.0f * float(doc.scene().objects.size() + 1 + robot_outliner_rows(*this)))
          : left_h;
  if (panels.outliner) {
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, top), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(left, outliner_h), ImGuiCond_Always);
    if (ImGui::Begin("Outliner", &panels.outliner, fixed)) draw_outliner();
    ImGui::End();
  }
  if (panels.inspector) {
    float y = panels.outliner ? top + outliner_h : top;
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(left, top + left_h - y), ImGuiCond_Always);
    if (ImGui::Begin("Inspector", &panels.inspector, fixed)) draw_inspector();
    ImGui::End();
  }
  if (panels.visualization) {  // the whole column when the outliner and inspector are closed
    const float y = panels.outliner || panels.inspector ? top + left_h : top;
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(left, top + H - y), ImGuiCond_Always);
    if (ImGui::Begin("Visualization", &panels.visualization, fixed)) {
      draw_visualization();
      measure(panels.visualization_h);
    }
    ImGui::End();
  }
  // right column: simulation over optimization, the stats docked below them
  const float stats_h = panels.stats ? fit(panels.stats_h) : 0.0f;
  const float right_h = H - stats_h;
  const float sim_h = panels.optimization ? std::min(fit(panels.simulation_h), right_h * 0.6f) : right_h;
  if (panels.simulation) {
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + W - right, top), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(right, sim_h), ImGuiCond_Always);
    panels.simulation_window_h = sim_h;
    if (ImGui::Begin("Simulation", &panels.simulation, fixed)) {
      draw_simulation();
      measure(panels.simulation_h);
    }
    ImGui::End();
  }
  if (panels.optimization) {
    float y = panels.simulation ? top + sim_h : top;
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + W - right, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(right, top + right_h - y), ImGuiCond_Always);
    if (ImGui::Begin("Optimization", &panels.optimization, fixed)) draw_optimization();
    ImGui::End();
  }
  if (panels.stats) {
    const float y = panels.simulation || panels.optimization ? top + right_h : top;
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + W - right, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(right, top + H - y), ImGuiCond_Always);
    if (ImGui::Begin("Stats", &panels.stats, fixed)) {
      draw_stats();
      measure(panels.stats_h);
    }
    ImGui::End();
  }
  // messages along the bottom of the viewport
  draw_landscape_panel(*this);
  draw_attach_window();
  if (panels.messages && !messages.empty()) {
    const float h = 78.0f;
    const auto [x0, x1] = free_columns(W);  // under the viewport, however wide the panels leave it
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + x0, top + H - h), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(x1 - x0, h), ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(0.75f);
    if (ImGui::Begin("Messages", &panels.messages, fixed)) draw_messages();
    ImGui::End();
  }
  draw_file_dialogs();
  if (std::exchange(add_popup_requested_, false)) ImGui::OpenPopup("Add##viewport");
  if (ImGui::BeginPopup("Add##viewport")) {
    ImGui::TextDisabled("Add");
    ImGui::Separator();
    draw_add_menu();
    ImGui::EndPopup();
  }
  draw_add_file_prompt();
  draw_prompt();
  draw_recovery_prompt();
  ImGui::PopAllowKeyboardFocus();
}

void Editor::draw_recovery_prompt() {
  if (recovery_prompt_) {
    ImGui::OpenPopup("Restore unsaved work?");
    recovery_prompt_ = false;
  }
  if (ImGui::BeginPopupModal("Restore unsaved work?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (!recovery_offered_) {  // a script answered
      ImGui::CloseCurrentPopup();
    } else {
      ImGui::Text("The last session ended with unsaved changes (autosaved to %s).", recovery_dir().c_str());
      if (ImGui::Button("Restore")) {
        restore_recovery();
        ImGui::CloseCurrentPopup();
      }
      ImGui::SameLine();
      if (ImGui::Button("Discard")) {
        discard_recovery();
        ImGui::CloseCurrentPopup();
      }
    }
    ImGui::EndPopup();
  }
}

std::pair<float, float> Editor::free_columns(float W) const {
  const bool any_left = panels.outliner || panels.inspector || panels.visualization;
  const bool any_right = panels.simulation || panels.optimization || panels.stats;
  float left = any_left ? std::clamp(W * 0.22f, 200.0f, 320.0f) : 0.0f;
  float right = any_right ? std::clamp(W * 0.26f, 240.0f, 380.0f) : 0.0f;
  return {left, std::max(W - right, left)};
}

float Editor::free_aspect(float W, float H) const {
  auto [x0, x1] = free_columns(W);
  return std::max(x1 - x0, W * 0.3f) / std::max(H, 1.0f);
}

// ---- outliner

void Editor::draw_outliner() {
  const scene::Scene& s = doc.scene();
  if (ImGui::Selectable("Scene settings", selected_ == -1)) selected_ = -1;
  ImGui::Separator();
  static int renaming = -1;
  static char rename_buf[128];
  for (int i = 0; i < int(s.objects.size()); ++i) {
    const scene::Object& o = s.objects[size_t(i)];
    ImGui::PushID(i);
    bool visible = o.visible;
    if (ImGui::Checkbox("##vis", &visible)) {
      scene::Object copy = o;
      copy.visible = visible;
      doc.set_object(i, copy, (visible ? "Show " : "Hide ") + o.name);
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("visible");
    ImGui::SameLine();
    if (renaming == i) {
      ImGui::SetNextItemWidth(-FLT_MIN);
      ImGui::SetKeyboardFocusHere();
      if (ImGui::InputText("##name", rename_buf, sizeof rename_buf,
                           ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll)) {
        if (!doc.rename_object(i, rename_buf))
          message(Severity::warning, std::string("rename: \"") + rename_buf + "\" is taken or empty", i);
        renaming = -1;
      } else if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) ||
                 (!ImGui::IsItemActive() && ImGui::IsMouseClicked(0) && !ImGui::IsItemHovered())) {
        renaming = -1;
      }
    } else {
      bool opt = object_optimized(s, task_index, o.name);
      char label[200];
      std::snprintf(label, sizeof label, "%s", o.name.c_str());
      if (ImGui::Selectable(label, selected_ == i, ImGuiSelectableFlags_AllowDoubleClick)) {
        selected_ = i;
        if (ImGui::IsMouseDoubleClicked(0)) {
          renaming = i;
          std::snprintf(rename_buf, sizeof rename_buf, "%s", o.name.c_str());
        }
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s; double-click to rename%s", scene::to_string(o.kind),
                          opt ? "\n* parameters optimized by the current task" : "");
      ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - 78);
      ImGui::TextDisabled("%s", scene::to_string(o.kind));
      if (opt) {
        ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - 8);
        ImGui::TextColored(k_opt_color, "*");
      }
    }
    if (o.kind == scene::ObjectKind::robot) draw_robot_tree(*this, i);  // bodies by kinematic chain
    ImGui::PopID();
  }
  // right click on the outliner: the Add menu
  if (ImGui::BeginPopupContextWindow("outliner add", ImGuiPopupFlags_MouseButtonRight)) {
    ImGui::TextDisabled("Add");
    ImGui::Separator();
    draw_add_menu();
    ImGui::EndPopup();
  }
}

// ---- inspector

void Editor::draw_inspector() {
  const scene::Scene& s = doc.scene();
  const ImGuiTableFlags tf = ImGuiTableFlags_SizingStretchProp;
  if (selected_ < 0 || selected_ >= int(s.objects.size())) {
    ImGui::TextDisabled("scene \"%s\"", s.name.c_str());
    scene::Settings settings = s.settings;
    scene::Task* task = nullptr;
    scene::Task task_copy;
    if (task_index < int(s.tasks.size())) {
      task_copy = s.tasks[size_t(task_index)];
      task = &task_copy;
    }
    if (ImGui::BeginTable("settings", 2, tf)) {
      ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.45f);
      ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.55f);
      for (const Field& f : settings_fields()) {
        bool opt = task && f.param && find_param(*task, *f.param, "");
        row_label(f.name, opt);
        if (draw_field(f, f.get_settings(settings)))
          doc.set_settings(settings, std::string("Set ") + f.name, merge_key(&s, f.name));
        if (ImGui::IsItemDeactivated()) doc.end_merge();
      }
      ImGui::EndTable();
    }
    return;
  }

  const int index = selected_;
  scene::Object o = s.objects[size_t(index)];
  ImGui::Text("%s", o.name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", scene::to_string(o.kind));
  if (ImGui::Checkbox("visible", &o.visible)) doc.set_object(index, o, "Visibility of " + o.name);
  draw_collider_shape(index);
  if (ImGui::BeginTable("fields", 2, tf)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.45f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.55f);
    bool has_task = task_index < int(s.tasks.size());
    for (const Field& f : object_fields(o)) {
      bool opt =
          has_task && f.param && find_param(const_cast<scene::Task&>(s.tasks[size_t(task_index)]), *f.param, o.name);
      row_label(f.name, opt);
      if (draw_field(f, f.get(o)))
        doc.set_object(index, o, "Set " + o.name + "." + f.name, merge_key(&s.objects[size_t(index)], f.name));
      if (ImGui::IsItemDeactivated()) doc.end_merge();
    }
    ImGui::EndTable();
  }
  if (o.kind == scene::ObjectKind::robot) draw_robot_inspector(*this, index);  // joints, bodies, actuators

  // particle systems: the particle list (first entries) and springs
  if (o.kind == scene::ObjectKind::particles) {
    auto& ps = o.particles.particles;
    ImGui::Text("%zu particles, %zu springs", ps.size(), o.particles.springs.size());
    if (ImGui::TreeNode("particles")) {
      for (size_t i = 0; i < ps.size() && i < 64; ++i) {
        ImGui::PushID(int(i));
        ImGui::Text("%zu", i);
        ImGui::SameLine(40);
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (ImGui::DragScalarN("##p", ImGuiDataType_Double, ps[i].position.data(), 3, 0.01f, nullptr, nullptr, "%.3f"))
          doc.set_object(index, o, "Move particle " + std::to_string(i),
                         merge_key(&ps, ("p" + std::to_string(i)).c_str()));
        if (ImGui::IsItemDeactivated()) doc.end_merge();
        ImGui::PopID();
      }
      if (ps.size() > 64) ImGui::TextDisabled("(first 64 shown)");
      ImGui::TreePop();
    }
  }

  // optimize toggles with bounds, for the current task
  auto kinds = optimizable(o.kind);
  if (!kinds.empty() && ImGui::CollapsingHeader("Optimize", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (s.tasks.empty()) {
      ImGui::TextDisabled("the scene has no task");
    } else {
      scene::Task t = s.tasks[size_t(task_index)];
      ImGui::TextDisabled("task \"%s\"", t.name.c_str());
      for (scene::ParamKind k : kinds) {
        ImGui::PushID(int(k));
        scene::ParamSpec* p = find_param(t, k, o.name);
        bool on = p != nullptr;
        if (ImGui::Checkbox(scene::label(k), &on)) {
          set_optimized(index, k, on);
        } else if (p) {
          double b[2] = {p->lower, p->upper};
          ImGui::SetNextItemWidth(-FLT_MIN);
          if (ImGui::InputScalarN("##bounds", ImGuiDataType_Double, b, 2, nullptr, nullptr, "%.4g")) {
            p->lower = b[0];
            p->upper = b[1];
            doc.set_task(task_index, t, "Bounds of " + std::string(scene::to_string(k)), merge_key(&t, "bounds"));
          }
          if (ImGui::IsItemDeactivated()) doc.end_merge();
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("lower, upper bound (inf: none)");
        }
        ImGui::PopID();
      }
    }
  }
}

const char* Editor::data_path() const {
  // the worker keeps host states (CudaSolver downloads each step) and the scene view draws
  // host arrays, which the renderer copies into its buffers. The mapped and interop paths
  // (app/gpu_view.h) are used by `adjoint render` (--data-path), not by the editor yet.
  return snap.backend == "cuda" ? "CUDA backend, staging copy through the host (states downloaded each step)"
                                : "CPU backend, host arrays copied into the renderer's buffers";
}

bool Editor::set_optimized(int object, scene::ParamKind k, bool on) {
  const scene::Scene& s = doc.scene();
  if (s.tasks.empty() || object < 0 || object >= int(s.objects.size())) return false;
  const std::string& name = s.objects[size_t(object)].name;
  scene::Task t = s.tasks[size_t(task_index)];
  if ((find_param(t, k, name) != nullptr) == on) return false;  // already so
  if (on) {
    t.parameters.push_back({k, name});
    if (k == scene::ParamKind::actuator_control) bound_inputs(t.parameters.back());
  } else
    std::erase_if(t.parameters, [&](const scene::ParamSpec& q) { return q.kind == k && q.object == name; });
  doc.end_merge();
  doc.set_task(task_index, t, std::string(on ? "Optimize " : "Stop optimizing ") + scene::to_string(k));
  return true;
}

// ---- simulation

void Editor::draw_simulation() {
  const scene::Scene& s = doc.scene();
  if (ImGui::Button(snap.playing ? "Pause" : "Play", ImVec2(60, 0))) {
    stop_replay();  // the simulation, not the replay
    worker.play(!snap.playing);
  }
  ImGui::SameLine();
  if (ImGui::Button("Step")) worker.step(1);
  ImGui::SameLine();
  if (ImGui::Button("Reset")) {
    worker.reset();
    timeline_frame = -1;
  }
  ImGui::SameLine();
  ImGui::Text("frame %d  t %.2f s", snap.frame, snap.time);
  // recording: a fixed simulation time per video frame
  if (recording.active()) {
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.15f, 0.15f, 1.0f));
    if (ImGui::Button("Stop recording")) record_toggle_requested = true;
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::Text("REC %.1f s, %d frames", recording.elapsed_s(), recording.frames());
  } else {
    if (ImGui::Button("Record")) record_toggle_requested = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ctrl+R: record the viewport to MP4 at true speed");
    ImGui::SameLine();
    ImGui::Checkbox("with panels", &record_options.with_ui);
    if (!record_options.with_ui) {
      ImGui::SameLine();
      ImGui::Checkbox("overlays", &record_options.overlays);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the gizmo and the selection outline in the video too");
    }
  }
  float sp = float(speed);
  ImGui::SetNextItemWidth(-80);
  if (ImGui::SliderFloat("speed", &sp, 0.05f, 4.0f, "%.2fx", ImGuiSliderFlags_Logarithmic)) {
    speed = sp;
    worker.set_speed(speed);
  }
  scene::Settings st = s.settings;
  ImGui::SetNextItemWidth(-80);
  if (ImGui::DragScalar("dt", ImGuiDataType_Double, &st.dt, 0.0001f, nullptr, nullptr, "%.5f s"))
    doc.set_settings(st, "Set dt", merge_key(&s.settings, "dt"));
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  ImGui::SetNextItemWidth(-80);
  if (ImGui::DragInt("substeps", &st.substeps, 0.2f, 1, 10000))
    doc.set_settings(st, "Set substeps", merge_key(&s.settings, "substeps"));
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  // backend: CPU always; CUDA when a device can be used, else listed greyed out with the reason
  ImGui::SetNextItemWidth(-80);
  if (ImGui::BeginCombo("backend", st.backend.c_str())) {
    for (const char* name : {"cpu", "cuda"}) {
      std::string why;
      const bool ok = backend_available(name, &why);
      if (ImGui::Selectable(name, st.backend == name, ok ? 0 : ImGuiSelectableFlags_Disabled)) set_backend(name);
      if (!ok && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("CUDA is not available: %s", why.c_str());
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the solver the simulation runs on (now: %s)%s%s", snap.backend.c_str(),
                      snap.backend_error.empty() ? "" : "\n", snap.backend_error.c_str());
  ImGui::SetNextItemWidth(-80);
  if (int n = world_count; ImGui::InputInt("worlds", &n, 1, 4)) set_world_count(n);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "copies of the scene side by side, each with its parameters from settings.randomize;\n"
        "world 0 (where the scene is) is the one the inspector, timeline and overlays show");
  draw_inspected_world();
  // a replay: its own play button and timeline, over the replayed rollout's frames
  if (replay.active) {
    ImGui::Separator();
    if (!snap.replay.error.empty()) {
      ImGui::TextColored(ImVec4(1, 0.45f, 0.35f, 1), "replay: %s", snap.replay.error.c_str());
    } else if (replay_ready()) {
      if (snap.replay.label.empty())
        ImGui::Text("REPLAY of iteration %d (loss %.5g)", snap.replay.iteration, snap.replay.loss);
      else
        ImGui::TextWrapped("REPLAY of %s", snap.replay.label.c_str());
      if (ImGui::Button(replay.playing ? "Pause##replay" : "Play##replay", ImVec2(60, 0))) {
        if (!replay.playing && replay.frame >= snap.replay.frames - 1) replay.frame = 0;  // from the start again
        replay.playing = !replay.playing;
      }
      ImGui::SameLine();
      int rf = replay.frame;
      ImGui::SetNextItemWidth(-80);
      if (ImGui::SliderInt("replay", &rf, 0, snap.replay.frames - 1, "frame %d")) {
        replay.frame = rf;
        replay.playing = false;
      }
    } else {
      ImGui::TextDisabled("replay: preparing the rollout...");
    }
    if (ImGui::Button("Back to the simulation")) stop_replay();
    ImGui::Separator();
  }
  // timeline over the recorded frames of this simulation
  int last = std::max(0, snap.recorded_frames - 1);
  int f = timeline_frame >= 0 ? timeline_frame : last;
  ImGui::SetNextItemWidth(-80);
  if (ImGui::SliderInt("timeline", &f, 0, last, "frame %d")) {
    timeline_frame = f;
    if (snap.playing) worker.play(false);
  }
  bool live = timeline_frame < 0;
  if (ImGui::Checkbox("follow newest frame", &live)) timeline_frame = live ? -1 : last;
}

// ---- optimization

void Editor::draw_loss_terms(const scene::Task& t) {
  using K = scene::LossKind;
  const scene::Scene& s = doc.scene();
  const K kinds[] = {K::position,      K::distance, K::shape,         K::velocity, K::effort, K::joint,
                     K::cartpole,      K::height,   K::upright,       K::speed,    K::reach,  K::forward_velocity,
                     K::up_projection, K::heading,  K::height_reward, K::alive};
  // objects a term can measure (what moves) and targets it can aim at
  auto object_combo = [&](const char* id, std::string& value, bool targets) {
    bool changed = false;
    if (ImGui::BeginCombo(id, value.empty() ? "(none)" : value.c_str())) {
      if (targets && ImGui::Selectable("(none)", value.empty())) value.clear(), changed = true;
      for (const scene::Object& o : s.objects) {
        const bool is_target = o.kind == scene::ObjectKind::target;
        if (is_target != targets || o.kind == scene::ObjectKind::collider) continue;
        if (ImGui::Selectable(o.name.c_str(), value == o.name)) value = o.name, changed = true;
      }
      ImGui::EndCombo();
    }
    return changed;
  };
  int remove = -1;
  for (int i = 0; i < int(t.loss.size()); ++i) {
    ImGui::PushID(i);
    scene::LossTerm l = t.loss[size_t(i)];
    bool changed = false;
    uint64_t key = 0;
    ImGui::SetNextItemWidth(86);
    if (ImGui::BeginCombo("##kind", scene::to_string(l.kind))) {
      for (K k : kinds)
        if (ImGui::Selectable(scene::to_string(k), l.kind == k)) l.kind = k, changed = true;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 30);
    changed |= object_combo("##object", l.object, false);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the object the term measures");
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) remove = i;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("remove this term");
    // robots: the body a term reads, its value (joint coordinate, height, speed) and its axis
    // (distance and speed: world direction; upright: the body-frame axis that points up)
    const scene::ObjectRange* rr = compiled_ ? compiled_->find(l.object) : nullptr;
    const bool body_term = l.kind == K::position || l.kind == K::distance || l.kind == K::joint ||
                           l.kind == K::height || l.kind == K::upright || l.kind == K::speed || l.kind == K::reach ||
                           l.kind == K::forward_velocity || l.kind == K::up_projection || l.kind == K::heading ||
                           l.kind == K::height_reward;
    if (rr && rr->kind == scene::ObjectKind::robot && body_term) {
      ImGui::SetNextItemWidth(120);
      if (ImGui::BeginCombo("##body", l.body.empty() ? "(body)" : l.body.c_str())) {
        for (int b = rr->body_begin; b < rr->body_end; ++b) {
          const std::string& name = compiled_->model.rigid.body_name[size_t(b)];
          if (ImGui::Selectable(name.c_str(), l.body == name)) l.body = name, changed = true;
        }
        ImGui::EndCombo();
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("the robot's body (its joint, for a joint term)");
      if (l.kind == K::joint || l.kind == K::height || l.kind == K::speed || l.kind == K::height_reward) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (ImGui::DragScalar("##value", ImGuiDataType_Double, &l.value, 0.01f, nullptr, nullptr, "target %.3f"))
          changed = true, key = merge_key(&t, "value");
        if (ImGui::IsItemDeactivated()) doc.end_merge();
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(l.kind == K::joint           ? "the joint coordinate to reach [rad or m]"
                            : l.kind == K::height        ? "the lowest centre-of-mass height not penalized [m]"
                            : l.kind == K::height_reward ? "the height the reward counts from [m]"
                                                         : "the speed to hold along the axis [m/s]");
      }
      const bool body_axis = l.kind == K::upright || l.kind == K::up_projection || l.kind == K::heading;
      if (l.kind == K::distance || l.kind == K::speed || l.kind == K::forward_velocity || body_axis) {
        if (l.kind != K::speed) ImGui::SameLine();  // speed: its axis on a row of its own
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (ImGui::DragScalarN("##axis", ImGuiDataType_Double, l.axis.data(), 3, 0.01f, nullptr, nullptr, "%.2f"))
          changed = true, key = merge_key(&t, "axis");
        if (ImGui::IsItemDeactivated()) doc.end_merge();
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(body_axis ? "the body-frame axis that should point up (heading: forward)"
                                      : "the world direction the body should travel along");
      }
      if (l.kind == K::height_reward) {
        const int shape = height_reward_shape(l, i, ui_items);
        if (shape & 1) changed = true, key = merge_key(&t, "shape");
        if (shape & 2) doc.end_merge();
      }
      if (l.kind == K::heading) {
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (ImGui::DragScalarN("##direction", ImGuiDataType_Double, l.direction.data(), 3, 0.01f, nullptr, nullptr,
                               "%.2f"))
          changed = true, key = merge_key(&t, "direction");
        if (ImGui::IsItemDeactivated()) doc.end_merge();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("the world direction to face (laid in the ground plane)");
      }
    }
    // second row: target, step, weight
    if (l.kind == K::position || l.kind == K::shape || l.kind == K::reach) {
      ImGui::SetNextItemWidth(86);
      changed |= object_combo("##target", l.target, true);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("target object");
      ImGui::SameLine();
    }
    ImGui::SetNextItemWidth(70);
    if (ImGui::DragInt("##step", &l.step, 0.5f, -1, std::max(t.horizon, 0), l.step < 0 ? "last frame" : "frame %d"))
      changed = true, key = merge_key(&t, "step");
    if (ImGui::IsItemDeactivated()) doc.end_merge();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the frame the term reads (-1: the last)");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (ImGui::DragScalar("##w", ImGuiDataType_Double, &l.weight, float(std::max(l.weight, 1e-3) * 0.01), nullptr,
                          nullptr, "w %.3g"))
      changed = true, key = merge_key(&t, "w"), l.weight = std::max(l.weight, 0.0);
    if (ImGui::IsItemDeactivated()) doc.end_merge();
    if (changed) {
      if (key == 0) doc.end_merge();
      set_loss_term(i, l, key ^ uint64_t(i));
    }
    ImGui::PopID();
  }
  if (remove >= 0) remove_loss_term(remove);
  if (ImGui::SmallButton("+ add term")) add_loss_term(default_loss_term());
  ui_items.note("optimization/add-term");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("a new term: the first moving object to the first target");
}

void Editor::draw_optimization() {
  const scene::Scene& s = doc.scene();
  if (s.tasks.empty()) {
    ImGui::TextWrapped("This scene has no optimization task yet: New makes one (a name and a horizon).");
    draw_task_tools();
    return;
  }
  task_index = std::clamp(task_index, 0, int(s.tasks.size()) - 1);
  ImGui::SetNextItemWidth(-80);
  if (ImGui::BeginCombo("task", s.tasks[size_t(task_index)].name.c_str())) {
    for (int i = 0; i < int(s.tasks.size()); ++i)
      if (ImGui::Selectable(s.tasks[size_t(i)].name.c_str(), i == task_index)) task_index = i;
    ImGui::EndCombo();
  }
  draw_task_tools();
  if (task_index >= int(s.tasks.size())) return;  // deleted just now
  scene::Task t = s.tasks[size_t(task_index)];
  const bool running = snap.opt_phase == OptPhase::running || snap.opt_phase == OptPhase::paused;

  // loss terms: kind, object, target, step, weight; add and remove (each one undo step)
  if (ImGui::TreeNodeEx("loss terms", ImGuiTreeNodeFlags_DefaultOpen)) {
    draw_loss_terms(t);
    ImGui::TreePop();
  }
  int kind = int(t.optimizer.kind);
  const char* kinds[] = {"sgd", "adam"};
  ImGui::SetNextItemWidth(80);
  if (ImGui::Combo("##opt", &kind, kinds, 2)) {
    t.optimizer.kind = scene::OptimizerKind(kind);
    doc.set_task(task_index, t, "Optimizer");
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  if (ImGui::DragScalar("lr", ImGuiDataType_Double, &t.optimizer.lr, float(t.optimizer.lr * 0.01 + 1e-6), nullptr,
                        nullptr, "%.3g"))
    doc.set_task(task_index, t, "Learning rate", merge_key(&s.tasks[size_t(task_index)], "lr"));
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::DragInt("##it", &t.optimizer.iterations, 0.5f, 1, 100000, "%d iterations"))
    doc.set_task(task_index, t, "Iterations", merge_key(&s.tasks[size_t(task_index)], "it"));
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  if (ImGui::Checkbox("backtrack", &t.optimizer.backtrack)) doc.set_task(task_index, t, "Backtracking");
  ui_items.note("task/backtrack");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "a step that raises the loss (or makes the rollout fail) is rejected and taken again at\n"
        "half the length; the loss curve shows the rejected points, the run ends on the best");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  if (ImGui::DragInt("##horizon", &t.horizon, 0.5f, 1, 1000000, "horizon %d frames"))
    set_task_horizon(task_index, t.horizon, merge_key(&s.tasks[size_t(task_index)], "horizon"));
  if (ImGui::IsItemDeactivated()) doc.end_merge();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("frames each rollout simulates");
  if (!t.values.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("starts from %zu kept value set%s", t.values.size(), t.values.size() > 1 ? "s" : "");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("per-frame inputs and policy weights that Apply kept: the optimizer starts from them");
  }

  draw_task_policy(task_index);
  draw_task_method(t, running);

  // start / pause / stop
  if (!running) {
    if (ImGui::Button("Start", ImVec2(70, 0))) start_optimization(t.name, opt_iterations, record_optimization);
    ImGui::SameLine();
    ImGui::Checkbox("record", &record_optimization);  // (a recording already running records it too)
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("to MP4: each iteration's rollout in turn, with ghosts and the loss");
  } else {
    bool paused = snap.opt_phase == OptPhase::paused;
    if (ImGui::Button(paused ? "Resume" : "Pause", ImVec2(70, 0))) worker.pause_optimize(!paused);
    ImGui::SameLine();
    if (ImGui::Button("Stop")) worker.stop_optimize();
  }
  if (t.has_policy && task_methods[t.name].shac) draw_checkpoint_buttons(running);
  float frac = snap.opt_iterations > 0 ? float(snap.opt_iteration) / float(snap.opt_iterations) : 0.0f;
  char progress[128];  // on the bar: the Start row has the record option
  std::snprintf(progress, sizeof progress, "%s  %d / %d  %.1f ms/it", to_string(snap.opt_phase), snap.opt_iteration,
                snap.opt_iterations, snap.opt_ms);
  if (snap.opt_rejected > 0)  // optimizer.backtrack: the loss plot shows the rejected points too
    std::snprintf(progress + std::strlen(progress), sizeof progress - std::strlen(progress), "  %d rejected",
                  snap.opt_rejected);
  ImGui::ProgressBar(frac, ImVec2(-FLT_MIN, 0), progress);
  ImGui::Checkbox("show optimized result", &view_settings.show_optimized);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the viewport shows the end of the optimizer's last rollout");
  ImGui::SameLine();
  ImGui::BeginDisabled(snap.best_theta.empty() || snap.opt_shac || snap.opt_phase == OptPhase::running || !opt_fits());
  if (ImGui::Button("Apply to scene")) apply_optimized();
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "write the parameters of the best iteration (iteration %d, loss %.6g), or of the one picked\n"
        "on the loss plot, into the scene: objects' initial state and parameters, the task's\n"
        "per-frame inputs and policy (one undo step)",
        snap.best_iteration, snap.best_loss);
  // replay: the best (or picked) iterate's rollout in the viewport, to play, scrub and record
  ImGui::BeginDisabled(snap.best_iteration < 0 || !opt_fits());
  if (ImGui::Button(replay.active ? "Replay again" : "Replay")) start_replay();
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "play the rollout of the best iteration (%d), or of the one picked on the loss plot, in the\n"
        "viewport; the Simulation panel's timeline scrubs it and Record records it",
        snap.best_iteration);
  if (replay.active) {
    ImGui::SameLine();
    if (ImGui::Button("Stop replay")) stop_replay();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(snap.loss.size() < 2 || snap.opt_shac || snap.opt_phase == OptPhase::running || !opt_fits() ||
                       recording.active());
  if (ImGui::Button("Record before/after")) {
    record_options.path.clear();  // a new file, named as Ctrl+R names them
    if (Status st = start_before_after(); !st) message(Severity::error, st.message());
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "one video: the rollout of the first iteration, then of the best (%d), each captioned\n"
        "\"before\" or \"after\" with its iteration and loss (no panels, no editor overlays)",
        snap.best_iteration);

  draw_optimization_results();
}

// a policy task's method (BPTT, SHAC, AHAC, PODS-1, PODS-2) with its copies and seed, chosen
// per task; a task without a policy is BPTT's
void Editor::draw_task_method(const scene::Task& t, bool running) {
  if (t.has_policy) {
    OptMethod& opt_method = task_methods[t.name];
    int method = opt_method.shac ? (opt_method.ahac ? 2 : 1) : opt_method.pods ? 2 + opt_method.order : 0;
    const char* methods[] = {"BPTT", "SHAC", "AHAC", "PODS-1", "PODS-2"};
    ImGui::BeginDisabled(running);
    ImGui::SetNextItemWidth(80);
    ImGui::Combo("##method", &method, methods, 5);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "BPTT: the gradient through the whole horizon (as adjoint optimize)\n"
          "SHAC: short windows over many randomized copies, a critic for each window's end\n"
          "(as adjoint optimize --shac); each iteration is one window, its loss the policy's episode\n"
          "AHAC: SHAC with each copy's window cut where its contact forces pass the task's threshold,\n"
          "the windows' length adapting, and two critics (as adjoint optimize --method ahac)\n"
          "PODS-1/2: each episode's actions improved by a gradient (1) or Newton (2) step, the policy\n"
          "regressed onto them (as adjoint optimize --method pods); the gradient-norm plot shows the step");
    opt_method.shac = method == 1 || method == 2;
    opt_method.ahac = method == 2;
    opt_method.pods = method >= 3;
    if (opt_method.pods) opt_method.order = method - 2;
    if (opt_method.shac || opt_method.pods) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(110);
      ImGui::DragInt("##copies", &opt_method.envs, 0.5f, 1, 1024, "%d copies");
      ImGui::SameLine();
      int seed = int(opt_method.seed);
      ImGui::SetNextItemWidth(-FLT_MIN);
      if (ImGui::DragInt("##seed", &seed, 0.2f, 0, 1 << 30, "seed %d")) opt_method.seed = std::uint64_t(seed);
    }
    ImGui::EndDisabled();
  } else {
    ImGui::TextDisabled("method: BPTT");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("the task has no policy (its inputs are per frame): SHAC and PODS train policies");
  }
}

// the Optimization panel's plots and gradient check, below its controls
void Editor::draw_optimization_results() {
  const std::string task = doc.scene().tasks[size_t(task_index)].name;  // draw_optimization: there is one
  // the plots, one at a time in tabs, as tall as the panel leaves them (above the Apply line
  // and the gradient check, and its table when there is one): visible without scrolling at
  // 1280x720, and the same size before, while and after training
  const float line = ImGui::GetTextLineHeightWithSpacing(), row = ImGui::GetFrameHeightWithSpacing();
  const float table = snap.grad_check_text.empty() ? 0.0f : 6 * line;
  const float plot_h = std::max(40.0f, ImGui::GetContentRegionAvail().y - (row + 3 * line + row + table + 8));
  // a script's plot-tab selects its tab once
  auto tab = [&](const char* name) {
    const bool asked = plot_tab_request == name;
    if (asked) plot_tab_request.clear();
    return ImGui::BeginTabItem(name, nullptr, asked ? ImGuiTabItemFlags_SetSelected : 0);
  };
  if (ImGui::BeginTabBar("plots")) {
    if (tab("loss")) {
      PlotGeometry lg;
      const int hovered = plot_series("loss", snap.loss, true, plot_h, "iteration", &lg);
      ui_items.note("optimization/plot");
      pick_on_loss_plot(hovered, lg.x0, lg.x1, lg.y0, lg.y1);
      if (snap.best_iteration < 0) ImGui::TextDisabled("Apply: no iteration yet");
      ImGui::EndTabItem();
    }
    if ((snap.opt_shac || !snap.train_return.empty()) && tab("returns")) {
      // SHAC, AHAC: the evaluation episode's return (the deterministic policy from the task's
      // start: minus its mean frame cost x the horizon) and the training return (the last 100
      // training episodes that ended), as `adjoint optimize` prints them. An attached run sends
      // the training return alone (its loss is the training windows' mean cost)
      const bool local = !attachment.attached();
      const scene::Scene& sc = doc.scene();
      const double horizon = task_index < int(sc.tasks.size()) ? sc.tasks[size_t(task_index)].horizon : 0;
      std::vector<double> eval(local ? snap.loss.size() : 0);
      for (size_t i = 0; i < eval.size(); ++i) eval[i] = -snap.loss[i] * horizon;
      const float h = local ? std::max(40.0f, 0.5f * plot_h - 2 * line) : plot_h;
      if (local)
        if (int i = plot_series("evaluation return", eval, false, h, "iteration"); i >= 0)
          ImGui::SetTooltip("iteration %d: the deterministic policy's episode returned %.6g", i, eval[size_t(i)]);
      if (std::none_of(snap.train_return.begin(), snap.train_return.end(), [](double x) { return std::isfinite(x); }))
        ImGui::TextDisabled("training return: none yet (SHAC, AHAC: once a training episode has ended)");
      else if (int i = plot_series("training return", snap.train_return, false, h, "iteration"); i >= 0)
        ImGui::SetTooltip("iteration %d: the last ended training episodes returned %.6g on average", i,
                          snap.train_return[size_t(i)]);
      ui_items.note("optimization/returns");
      ImGui::EndTabItem();
    }
    if (tab("|grad|")) {
      if (int i = plot_series("|grad|", snap.grad_norm, true, plot_h, "iteration"); i >= 0)
        ImGui::SetTooltip("iteration %d: |dL/dtheta| = %.6g", i, snap.grad_norm[size_t(i)]);
      ui_items.note("optimization/plot");
      ImGui::TextDisabled("the gradient's norm per iteration");
      ImGui::EndTabItem();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("|dL/dtheta| per iteration");
    if (tab("|dL/dx_t|")) {
      std::vector<double> sg(snap.step_grad_norms.begin(), snap.step_grad_norms.end());
      if (int i = plot_series("|dL/dx_t| over the horizon", sg, true, plot_h, "frame"); i >= 0)
        ImGui::SetTooltip("frame %d: |dL/dx_t| = %.6g\nwhere the gradient explodes or vanishes", i, sg[size_t(i)]);
      ui_items.note("optimization/plot");
      ImGui::TextDisabled("the last iteration's gradient along the horizon");
      ImGui::EndTabItem();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the last iteration's |dL/dx_t| over the horizon's frames");
    ImGui::EndTabBar();
  }

  ImGui::BeginDisabled(snap.grad_check_running);
  if (ImGui::Button(snap.grad_check_running ? "Checking..." : "Check gradient")) worker.check_gradient(task, 8);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("analytic vs central differences (double precision), 8 entries");
  if (!snap.grad_check_text.empty()) {
    if (snap.grad_check_max_rel_err >= 0) {
      ImGui::SameLine();
      ImGui::TextColored(snap.grad_check_max_rel_err < 1e-2 ? ImVec4(0.5f, 0.9f, 0.5f, 1) : k_error_color,
                         "max rel err %.2g", snap.grad_check_max_rel_err);
    }
    if (snap.grad_check_rows.empty()) {
      ImGui::TextWrapped("%s", snap.grad_check_text.c_str());
    } else if (ImGui::BeginTable("gradcheck", 4,
                                 ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                                 ImVec2(0, ImGui::GetContentRegionAvail().y))) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("entry", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableSetupColumn("analytic");
      ImGui::TableSetupColumn("finite diff");
      ImGui::TableSetupColumn("rel err");
      ImGui::TableHeadersRow();
      for (const auto& r : snap.grad_check_rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(r.name.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.name.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::Text("%.4g", r.analytic);
        ImGui::TableSetColumnIndex(2);
        ImGui::Text("%.4g", r.fd);
        ImGui::TableSetColumnIndex(3);
        ImGui::TextColored(r.rel_err < 1e-2 ? ImVec4(0.6f, 0.9f, 0.6f, 1) : k_error_color, "%.1e", r.rel_err);
      }
      ImGui::EndTable();
    }
  }
}

// ---- visualization

void Editor::draw_visualization() {
  auto& ov = view_settings.overlays;
  ImGui::Checkbox("particles", &ov.particles);
  ImGui::Checkbox("springs", &ov.springs);
  ImGui::Checkbox("wireframe", &ov.wireframe);
  ImGui::Checkbox("contact points and forces", &ov.contacts);
  ImGui::Checkbox("velocity arrows", &view_settings.velocity_arrows);
  ImGui::Checkbox("ghost trajectories", &view_settings.ghosts);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "centre of mass of the first loss term's object over the horizon,\nper iteration (from the next one on), "
        "coloured by loss;\nPODS: one copy's path under the policy (white) and under the improved\nactions (cyan), "
        "where the policy is being pulled to");
  const char* grads[] = {"none", "dL/dx0 (initial positions)", "dL/dv0 (initial velocities)",
                         "dL/du (force, scrubbed frame)"};
  ImGui::TextUnformatted("gradient arrows");
  ImGui::SetNextItemWidth(-1);  // the column's width: the label above
  ImGui::Combo("##gradient arrows", &view_settings.gradient, grads, 4);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the last optimizer iteration's gradient, per particle,\nfor parameters the task optimizes");
  ImGui::Checkbox("grid", &view_settings.grid);
  ImGui::Checkbox("shadows", &view_settings.shadows);
  ImGui::SetNextItemWidth(140);
  ImGui::SliderFloat("arrow scale", &ov.arrow_scale, 0.01f, 1.0f, "%.2f m", ImGuiSliderFlags_Logarithmic);
  // legend of the arrow colormap: |v| from 0 to the largest in view
  if (legend_max > 0) {
    ImGui::TextDisabled("%s arrows: colour = magnitude",
                        view_settings.gradient > 0 && !snap.grad.empty() ? "gradient" : "velocity");
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int n = 32;
    const float w = std::min(200.0f, ImGui::GetContentRegionAvail().x), h = 10;
    for (int i = 0; i < n; ++i)
      dl->AddRectFilled(ImVec2(p.x + w * float(i) / n, p.y), ImVec2(p.x + w * float(i + 1) / n, p.y + h),
                        viridis(float(i) / (n - 1)));
    ImGui::Dummy(ImVec2(w, h));
    ImGui::Text("0");
    char hi[32];
    std::snprintf(hi, sizeof hi, "%.3g", legend_max);
    ImGui::SameLine(w - ImGui::CalcTextSize(hi).x);
    ImGui::TextUnformatted(hi);
  }
}

// ---- stats

void Editor::draw_stats() {
  ImGui::Text("UI frame     %.1f ms (%.0f fps)", ui_frame_ms, ui_frame_ms > 0 ? 1000.0 / ui_frame_ms : 0.0);
  ImGui::Text("simulation   %.0f frames/s", snap.steps_per_second);
  ImGui::TextWrapped("data path    %s", data_path());
  if (compiled_) {
    const Model& m = compiled_->model;
    ImGui::Text("particles    %d", m.particle_count());
    ImGui::Text("triangles    %zu", m.tri_indices.size());
    ImGui::Text("tetrahedra   %zu", m.tet_indices.size());
    ImGui::Text("springs      %zu", m.spring_indices.size());
  }
  ImGui::Text("memory       %ld MB resident", resident_mb());
  ImGui::Text("undo steps   %zu", doc.undo_count());
}

// ---- messages

void Editor::report_worker_errors() {
  static const std::regex frame_re(R"((?:frame|step) (\d+))"), element_re(R"((particle|tet|tri|spring) (\d+))");
  auto locate = [&](const std::string& text, int* object, int* frame) {
    std::smatch m;
    if (std::regex_search(text, m, frame_re)) *frame = std::stoi(m[1]);
    if (compiled_ && std::regex_search(text, m, element_re)) {
      int e = std::stoi(m[2]);
      std::string kind = m[1];
      for (size_t i = 0; i < compiled_->objects.size(); ++i) {
        const auto& r = compiled_->objects[i];
        int b = kind == "particle" ? r.particle_begin
                : kind == "tet"    ? r.tet_begin
                : kind == "tri"    ? r.tri_begin
                                   : r.spring_begin;
        int en = kind == "particle" ? r.particle_end
                 : kind == "tet"    ? r.tet_end
                 : kind == "tri"    ? r.tri_end
                                    : r.spring_end;
        if (e >= b && e < en) *object = int(i);
      }
    }
  };
  if (snap.opt_run != notes_run_ && !snap.opt_notes.empty()) {  // stored values a task could not start from
    notes_run_ = snap.opt_run;
    for (const std::string& n : snap.opt_notes) message(Severity::warning, snap.opt_task + ": " + n);
  }
  if (checkpoint_replay_ != 0 && snap.replay.request == checkpoint_replay_) {  // Evaluate checkpoint's outcome
    checkpoint_replay_ = 0;
    if (snap.replay.error.empty())
      message(Severity::info, "Evaluate checkpoint: " + snap.replay.label);
    else
      message(Severity::error, "Evaluate checkpoint: " + snap.replay.error);
  }
  if (snap.checkpoint_serial != checkpoint_serial_) {  // Save checkpoint's outcome
    checkpoint_serial_ = snap.checkpoint_serial;
    message(snap.checkpoint_ok ? Severity::info : Severity::error, snap.checkpoint_text);
  }
  if (snap.backend_error != last_backend_error_) {
    last_backend_error_ = snap.backend_error;
    if (!snap.backend_error.empty()) message(Severity::warning, snap.backend_error);
  }
  if (snap.sim_error != last_sim_error_) {
    last_sim_error_ = snap.sim_error;
    if (!snap.sim_error.empty()) {
      int obj = -1, fr = -1;
      locate(snap.sim_error, &obj, &fr);
      message(Severity::error, "simulation: " + snap.sim_error, obj, fr);
    }
  }
  if (snap.opt_error != last_opt_error_) {
    last_opt_error_ = snap.opt_error;
    if (!snap.opt_error.empty()) {
      int obj = -1, fr = -1;
      locate(snap.opt_error, &obj, &fr);
      message(Severity::error, "optimization: " + snap.opt_error, obj, -1);
    }
  }
}

void Editor::activate_message(const Message& m) {
  if (m.object >= 0 && m.object < int(doc.scene().objects.size())) selected_ = m.object;
  if (m.frame >= 0) {
    timeline_frame = std::min(m.frame, std::max(0, snap.recorded_frames - 1));
    worker.play(false);
  }
}

void Editor::draw_messages() {
  if (ImGui::SmallButton("Clear")) {
    messages.clear();
    return;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy all")) {
    std::string all;
    for (const Message& m : messages) all += m.text + "\n";
    ImGui::SetClipboardText(all.c_str());
  }
  // newest first, each whole (wrapped at the panel's width) with a button that copies it
  for (size_t i = messages.size(); i-- > 0;) {
    const Message& m = messages[i];
    ImVec4 c = m.severity == Severity::error     ? k_error_color
               : m.severity == Severity::warning ? k_warning_color
                                                 : ImVec4(0.8f, 0.8f, 0.8f, 1);
    ImGui::PushID(int(i));
    if (ImGui::SmallButton("copy")) ImGui::SetClipboardText(m.text.c_str());
    ui_items.note("messages/copy/" + std::to_string(messages.size() - 1 - i));  // 0: the newest
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, c);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(m.text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    if (ImGui::IsItemClicked()) activate_message(m);
    if ((m.object >= 0 || m.frame >= 0) && ImGui::IsItemHovered())
      ImGui::SetTooltip("click: select the object and jump to the frame");
    ImGui::PopID();
  }
}

// ---- menus

void Editor::draw_menu_items_file(bool* quit_requested) {
  if (ImGui::MenuItem("New", "Ctrl+N")) request(Pending::new_scene);
  if (ImGui::BeginMenu("New from template")) {
    for (const TemplateEntry& t : templates())
      if (ImGui::MenuItem(t.label)) request(Pending::new_template, t.file);
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Open...", "Ctrl+O")) show_dialog(FileDialog::open);
  if (ImGui::BeginMenu("Open Recent", !recent_files.empty())) {
    for (const std::string& p : recent_files)
      if (ImGui::MenuItem(p.c_str())) request(Pending::open, p);
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Save", "Ctrl+S")) {
    if (doc.path().empty())
      open_save_as();
    else
      save("");
  }
  if (ImGui::MenuItem("Save As...", "Ctrl+Shift+S")) open_save_as();
  if (ImGui::MenuItem("Revert", nullptr, false, !doc.path().empty() && doc.dirty())) request(Pending::revert);
  if (ImGui::MenuItem("Import OBJ...")) show_dialog(FileDialog::import_obj);
  if (ImGui::MenuItem("Import URDF/MJCF...")) show_dialog(FileDialog::import_robot);
  if (ImGui::MenuItem("Attach to run...")) attach_window = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("watch a run of adjoint optimize --serve: its plots and rollouts");
  if (ImGui::MenuItem("Screenshots and recordings folder...")) show_dialog(FileDialog::media);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ctrl+P and Ctrl+R write to %s", media_folder().c_str());
  ImGui::Separator();
  if (ImGui::MenuItem("Quit", "Ctrl+Q")) *quit_requested = true;
}

void Editor::draw_menu_items_edit() {
  std::string u = doc.can_undo() ? "Undo " + doc.undo_label() : "Undo";
  std::string r = doc.can_redo() ? "Redo " + doc.redo_label() : "Redo";
  if (ImGui::MenuItem(u.c_str(), "Ctrl+Z", false, doc.can_undo())) undo();
  if (ImGui::MenuItem(r.c_str(), "Ctrl+Shift+Z", false, doc.can_redo())) redo();
  ImGui::Separator();
  if (ImGui::MenuItem("Duplicate", "Ctrl+D", false, selected_ >= 0)) duplicate_selected();
  if (ImGui::MenuItem("Delete", "Delete", false, selected_ >= 0)) delete_selected();
}

void Editor::draw_menu_items_view() {
  ImGui::MenuItem("Outliner", nullptr, &panels.outliner);
  ImGui::MenuItem("Inspector", nullptr, &panels.inspector);
  ImGui::MenuItem("Simulation", nullptr, &panels.simulation);
  ImGui::MenuItem("Optimization", nullptr, &panels.optimization);
  ImGui::MenuItem("Visualization", nullptr, &panels.visualization);
  ImGui::MenuItem("Stats", nullptr, &panels.stats);
  ImGui::MenuItem("Landscape", nullptr, &landscape.open);
  ImGui::MenuItem("Messages", nullptr, &panels.messages);
  if (ImGui::MenuItem("Left panels", "Tab", panels.outliner || panels.inspector)) toggle_left_panels();
  if (ImGui::MenuItem("Right panels", "Shift+Tab", panels.simulation || panels.optimization)) toggle_right_panels();
  if (ImGui::MenuItem("Fullscreen", "F11")) fullscreen_requested = true;
  ImGui::Separator();
  if (ImGui::BeginMenu("Overlays")) {
    ImGui::MenuItem("Contacts", nullptr, &view_settings.overlays.contacts);
    ImGui::MenuItem("Velocity arrows", nullptr, &view_settings.velocity_arrows);
    ImGui::MenuItem("Ghost trajectories", nullptr, &view_settings.ghosts);
    ImGui::MenuItem("Springs", nullptr, &view_settings.overlays.springs);
    ImGui::MenuItem("Wireframe", nullptr, &view_settings.overlays.wireframe);
    ImGui::MenuItem("Grid", nullptr, &view_settings.grid);
    ImGui::MenuItem("Shadows", nullptr, &view_settings.shadows);
    ImGui::MenuItem("Lower resolution while moving", nullptr, &view_settings.lower_res_moving);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "on a CPU renderer (lavapipe): a moving view is drawn at 0.7x its size;\n"
          "still views, screenshots and videos at full size");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Camera")) {
    if (ImGui::MenuItem("Frame scene", "Home")) camera_fit_pending = true;
    if (ImGui::MenuItem("Frame selection", "F", false, selected_ >= 0)) frame_selection(0);
    ImGui::MenuItem("Orthographic", nullptr, &camera.orthographic);
    ImGui::MenuItem("Follow selection", nullptr, &view_settings.follow);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the camera keeps the selected object (or robot body) at its centre");
    ImGui::EndMenu();
  }
}

void Editor::drop_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".obj")
    import_obj(path);
  else if (ext == ".urdf" || ext == ".xml" || ext == ".mjcf")
    import_robot(*this, path);
  else
    request(Pending::open, path);
}

void Editor::request(Pending action, const std::string& path) {
  if (!doc.dirty()) {
    if (action == Pending::quit) discard_recovery();
    perform(action, path);
    return;
  }
  pending_ = action;
  pending_path_ = path;
  prompt_open_ = true;
}

void Editor::perform(Pending action, const std::string& path) {
  switch (action) {
    case Pending::new_scene:
      new_scene();
      break;
    case Pending::new_template:
      new_from_template(path);
      break;
    case Pending::open:
      open(path);
      break;
    case Pending::revert:
      revert();
      break;
    case Pending::quit:
      quit_confirmed_ = true;
      break;
    case Pending::none:
      break;
  }
}

void Editor::draw_prompt() {
  if (prompt_open_) {
    ImGui::OpenPopup("Unsaved changes");
    prompt_open_ = false;
  }
  if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("\"%s\" has unsaved changes.", doc.path().empty() ? "untitled" : doc.path().c_str());
    if (ImGui::Button("Save")) answer_prompt(Answer::save);
    if (doc.path().empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("asks for a file name, then goes on");
    ImGui::SameLine();
    if (ImGui::Button("Discard")) answer_prompt(Answer::discard);
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      answer_prompt(Answer::cancel);
    if (pending_ == Pending::none) ImGui::CloseCurrentPopup();  // answered (here or by a script)
    ImGui::EndPopup();
  }
}

// ---- keys

void Editor::handle_keys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || grab_active_) return;  // the grab tool has the keys
  const bool ctrl = io.KeyCtrl, shift = io.KeyShift;
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, false); };
  if (ctrl && pressed(GLFW_KEY_Z)) shift ? redo() : undo();
  if (ctrl && pressed(GLFW_KEY_Y)) redo();
  if (ctrl && pressed(GLFW_KEY_S)) {
    if (shift || doc.path().empty())
      open_save_as();
    else
      save("");
  }
  if (ctrl && pressed(GLFW_KEY_O)) show_dialog(FileDialog::open);
  if (ctrl && pressed(GLFW_KEY_N)) request(Pending::new_scene);
  if (ctrl && pressed(GLFW_KEY_D)) duplicate_selected();
  if (ctrl && pressed(GLFW_KEY_P)) screenshot_requested = true;
  if (ctrl && pressed(GLFW_KEY_R)) record_toggle_requested = true;
  if (pressed(GLFW_KEY_DELETE)) delete_selected();
  if (io.WantCaptureKeyboard) return;  // an ImGui window has focus: keep its own keys
  if (!ctrl && pressed(GLFW_KEY_F)) frame_selection(0);
  if (shift && !ctrl && pressed(GLFW_KEY_A)) add_popup_requested_ = true;  // Blender's Add menu
  if (pressed(GLFW_KEY_HOME)) camera_fit_pending = true;
  if (pressed(GLFW_KEY_TAB)) shift ? toggle_right_panels() : toggle_left_panels();
  if (pressed(GLFW_KEY_F11)) fullscreen_requested = true;
  if (pressed(GLFW_KEY_SPACE)) {
    if (replay.active) {  // the replay plays and pauses (from the start again at its end)
      if (!replay.playing && replay.frame >= snap.replay.frames - 1) replay.frame = 0;
      replay.playing = !replay.playing;
    } else {
      worker.play(!snap.playing);
    }
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT, true)) worker.step(1);
  if (pressed(GLFW_KEY_BACKSPACE)) {
    worker.reset();
    timeline_frame = -1;
  }
}

void Editor::frame_selection(float aspect) {
  if (aspect <= 0) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    aspect = free_aspect(vp->Size.x, vp->Size.y);
  }
  if (!compiled_ || selected_ < 0 || selected_ >= int(compiled_->objects.size())) {
    camera_fit_pending = true;
    return;
  }
  const scene::ObjectRange& r = compiled_->objects[size_t(selected_)];
  const scene::Object& o = doc.scene().objects[size_t(selected_)];
  glm::vec3 lo(1e30f), hi(-1e30f);
  const State& st = display_state();
  for (int i = r.particle_begin; i < r.particle_end && i < st.particle_count(); ++i) {
    glm::vec3 p(st.particle_q[size_t(i)].x, st.particle_q[size_t(i)].y, st.particle_q[size_t(i)].z);
    lo = glm::min(lo, p);
    hi = glm::max(hi, p);
  }
  if (o.kind == scene::ObjectKind::robot && r.body_end > r.body_begin) {  // robots: their bodies' centres
    const State& rs = robot_display_state(*this);
    std::vector<float> joints(size_t(compiled_->model.rigid.body_count()) * kRigidJointFloats);
    if (rs.joint_q.size() == compiled_->model.joint_q.size()) {
      rigid_vis_joints(compiled_->model.rigid, rs, joints.data());
      for (int b = r.body_begin; b < r.body_end; ++b) {
        const float* f = &joints[size_t(b) * kRigidJointFloats];
        glm::vec3 com(f[6], f[7], f[8]);
        lo = glm::min(lo, com - glm::vec3(0.15f));
        hi = glm::max(hi, com + glm::vec3(0.15f));
      }
    }
  }
  if (lo.x > hi.x) {  // colliders and targets: their position and size
    const scene::V3& p = o.kind == scene::ObjectKind::target ? o.target.position : o.collider.position;
    float rad = o.kind == scene::ObjectKind::target ? float(o.target.radius) : float(o.collider.size[0]);
    glm::vec3 c{float(p[0]), float(p[1]), float(p[2])};
    lo = c - glm::vec3(std::max(rad, 0.2f));
    hi = c + glm::vec3(std::max(rad, 0.2f));
  }
  camera.fit(lo, hi, aspect);
}

}  // namespace adj::editor
