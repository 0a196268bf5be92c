// The script's commands by panel (script_commands.h): File, Edit (and Add), the viewport,
// Simulation and Optimization. Each does what the panel's widget does, then waits as the
// person would (for the worker, or a few frames).
#include "app/editor/script_commands.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"
#include "app/editor/fields.h"
#include "app/editor/robot_ui.h"
#include "engine/scene/compile.h"

namespace adj::editor {

namespace {

std::optional<ScriptKey> parse_key(std::string s) {
  ScriptKey k;
  for (;;) {
    if (s.rfind("ctrl+", 0) == 0)
      k.ctrl = true, s = s.substr(5);
    else if (s.rfind("shift+", 0) == 0)
      k.shift = true, s = s.substr(6);
    else
      break;
  }
  static const std::pair<const char*, int> names[] = {
      {"space", GLFW_KEY_SPACE},   {"right", GLFW_KEY_RIGHT},   {"backspace", GLFW_KEY_BACKSPACE},
      {"delete", GLFW_KEY_DELETE}, {"home", GLFW_KEY_HOME},     {"f1", GLFW_KEY_F1},
      {"f11", GLFW_KEY_F11},       {"tab", GLFW_KEY_TAB},       {"f", GLFW_KEY_F},
      {"z", GLFW_KEY_Z},           {"y", GLFW_KEY_Y},           {"w", GLFW_KEY_W},
      {"d", GLFW_KEY_D},           {"n", GLFW_KEY_N},           {"o", GLFW_KEY_O},
      {"q", GLFW_KEY_Q},           {"p", GLFW_KEY_P},           {"s", GLFW_KEY_S},
      {"a", GLFW_KEY_A},           {"g", GLFW_KEY_G},           {"r", GLFW_KEY_R},
      {"x", GLFW_KEY_X},           {"escape", GLFW_KEY_ESCAPE}, {"enter", GLFW_KEY_ENTER},
      {"minus", GLFW_KEY_MINUS},   {"period", GLFW_KEY_PERIOD}, {"0", GLFW_KEY_0},
      {"1", GLFW_KEY_1},           {"2", GLFW_KEY_2},           {"3", GLFW_KEY_3},
      {"4", GLFW_KEY_4},           {"5", GLFW_KEY_5},           {"6", GLFW_KEY_6},
      {"7", GLFW_KEY_7},           {"8", GLFW_KEY_8},           {"9", GLFW_KEY_9}};
  for (auto& [n, code] : names)
    if (s == n) {
      k.key = code;
      return k;
    }
  return std::nullopt;
}

bool* overlay_flag(Editor& e, const std::string& name) {
  auto& v = e.view_settings;
  auto& p = e.panels;
  if (name == "contacts") return &v.overlays.contacts;
  if (name == "velocity") return &v.velocity_arrows;
  if (name == "springs") return &v.overlays.springs;
  if (name == "wireframe") return &v.overlays.wireframe;
  if (name == "particles") return &v.overlays.particles;
  if (name == "grid") return &v.grid;
  if (name == "shadows") return &v.shadows;
  if (name == "lower-res-moving") return &v.lower_res_moving;
  if (name == "ghosts") return &v.ghosts;
  if (name == "optimized") return &v.show_optimized;
  if (name == "outliner") return &p.outliner;
  if (name == "inspector") return &p.inspector;
  if (name == "simulation") return &p.simulation;
  if (name == "optimization") return &p.optimization;
  if (name == "visualization") return &p.visualization;
  if (name == "stats") return &p.stats;
  if (name == "messages") return &p.messages;
  if (name == "help") return &e.show_help;
  if (name == "follow") return &v.follow;
  if (name == "landscape") return &e.landscape.open;
  if (name == "attach") return &e.attach_window;
  return nullptr;
}

Status set_loss_field(scene::LossTerm& t, const std::string& field, const std::string& value) {
  if (field == "kind") {
    for (int k = 0; k <= int(scene::LossKind::alive); ++k)
      if (value == scene::to_string(scene::LossKind(k))) {
        t.kind = scene::LossKind(k);
        return Status::ok();
      }
    return Status::error("no loss kind \"" + value + "\"");
  }
  if (field == "object") return t.object = value, Status::ok();
  if (field == "target") return t.target = value == "none" ? "" : value, Status::ok();
  if (field == "body") return t.body = value, Status::ok();
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end) return Status::error(field + ": \"" + value + "\" is not a number");
  if (field == "step") return t.step = int(v), Status::ok();
  if (field == "weight") return t.weight = v, Status::ok();
  if (field == "value") return t.value = v, Status::ok();
  if (field == "axis.x" || field == "axis.y" || field == "axis.z")
    return t.axis[size_t(field[5] - 'x')] = v, Status::ok();
  if (field == "direction.x" || field == "direction.y" || field == "direction.z")
    return t.direction[size_t(field[10] - 'x')] = v, Status::ok();
  for (auto [name, at] : {std::pair{"lower", &t.lower},
                          {"upper", &t.upper},
                          {"above", &t.above},
                          {"below", &t.below},
                          {"quadratic", &t.quadratic}})
    if (field == name) return *at = v, Status::ok();
  return Status::error("a loss term has no field \"" + field +
                       "\" (kind object target body step weight value axis.x/y/z direction.x/y/z; "
                       "height_reward: lower upper above below quadratic)");
}

// the centre of an object's particles as drawn now, else its position
glm::vec3 object_centre(Editor& e, int i) {
  const scene::Object& o = e.doc.scene().objects[size_t(i)];
  const scene::ObjectRange& r = e.compiled()->objects[size_t(i)];
  glm::vec3 c(0.0f);
  if (r.particle_end > r.particle_begin) {
    const State& st = e.display_state();
    for (int p = r.particle_begin; p < r.particle_end; ++p)
      c += glm::vec3(st.particle_q[size_t(p)].x, st.particle_q[size_t(p)].y, st.particle_q[size_t(p)].z);
    return c / float(r.particle_end - r.particle_begin);
  }
  const scene::V3& p = o.kind == scene::ObjectKind::target ? o.target.position : o.collider.position;
  return glm::vec3(float(p[0]), float(p[1]), float(p[2]));
}

glm::vec3 on_screen(Editor& e, const glm::vec3& world) {
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  return e.camera.project(world, glm::vec2(size.x, size.y));
}

// the Optimization panel's task name: the rest of the line, else the panel's current task
std::string task_arg(ScriptCall& c, size_t from) {
  const auto& tasks = c.e.doc.scene().tasks;
  if (c.w.size() > from) return c.rest(from);
  return tasks.empty() ? "" : tasks[size_t(c.e.task_index)].name;
}

Status synced(ScriptCall& c, Status st) {
  if (st) {
    c.e.sync();
    c.wait_worker();
  }
  return st;
}

// ---- File

Status cmd_open(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  if (!c.e.open(c.w[1]))
    return Status::error("open " + c.w[1] + ": " + (c.e.messages.empty() ? "" : c.e.messages.back().text));
  c.wait_worker();
  return Status::ok();
}

Status cmd_try_open(ScriptCall& c) {  // a file that may fail: the error becomes a message, the scene stays
  if (Status st = c.need(1); !st) return st;
  c.e.open(c.w[1]);
  c.wait_worker();
  return Status::ok();
}

Status cmd_new(ScriptCall& c) {  // File > New (no prompt: as after Discard)
  c.e.new_scene();
  c.wait_worker();
  return Status::ok();
}

Status cmd_template(ScriptCall& c) {  // template FILE: File > New from template (assets/scenes/FILE)
  if (Status st = c.need(1); !st) return st;
  if (!c.e.new_from_template(c.w[1])) return Status::error("template " + c.w[1] + ": " + c.e.messages.back().text);
  c.wait_worker();
  return Status::ok();
}

Status cmd_revert(ScriptCall& c) {
  if (!c.e.revert()) return Status::error("revert: " + c.e.messages.back().text);
  c.wait_worker();
  return Status::ok();
}

Status cmd_save(ScriptCall& c) {
  if (!c.e.save(c.w.size() > 1 ? c.w[1] : "")) return Status::error("save failed: " + c.e.messages.back().text);
  return Status::ok();
}

Status cmd_autosave(ScriptCall& c) {  // write the recovery file now (the editor does it every minute)
  return c.e.write_recovery() ? Status::ok() : Status::error("autosave failed");
}

Status cmd_restore(ScriptCall& c) {
  if (!c.e.recovery_offered()) return Status::error("restore: no recovery file was offered");
  if (!c.e.restore_recovery()) return Status::error("restore failed");
  c.wait_worker();
  return Status::ok();
}

Status cmd_discard_recovery(ScriptCall& c) {
  c.e.discard_recovery();
  return Status::ok();
}

Status cmd_drop(ScriptCall& c) {  // as dropping the file on the window
  if (Status st = c.need(1); !st) return st;
  c.e.drop_file(c.w[1]);
  return synced(c, Status::ok());
}

Status cmd_prompt(ScriptCall& c) {  // the unsaved-changes prompt's buttons: save discard cancel
  if (Status st = c.need(1); !st) return st;
  if (!c.e.prompt_active()) return Status::error("prompt: no unsaved-changes prompt is up");
  const std::string& a = c.w[1];
  if (a != "save" && a != "discard" && a != "cancel") return Status::error("prompt save|discard|cancel");
  c.e.answer_prompt(a == "save"      ? Editor::Answer::save
                    : a == "discard" ? Editor::Answer::discard
                                     : Editor::Answer::cancel);
  return synced(c, Status::ok());
}

Status cmd_save_as(ScriptCall& c) {  // the Save As dialog: save-as PATH (its Save) or save-as cancel
  if (Status st = c.need(1); !st) return st;
  if (!c.e.save_as_active()) return Status::error("save-as: the Save As dialog is not up");
  c.e.answer_save_as(c.w[1] == "cancel" ? "" : c.w[1]);
  return synced(c, Status::ok());
}

// ---- Edit and Add

Status cmd_select(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  int i = c.w[1] == "none" ? -1 : c.find_object(c.w[1]);
  if (i < 0 && c.w[1] != "none") return Status::error("no object named \"" + c.w[1] + "\"");
  c.e.select(i);
  c.wait_frames(2);  // the panels and the gizmo show the selection from the next frame
  return Status::ok();
}

Status cmd_set(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  return synced(c, c.e.set_field(c.w[1], c.w[2]));
}

Status cmd_undo(ScriptCall& c) { return c.e.doc.undo() ? synced(c, Status::ok()) : Status::error("nothing to undo"); }

Status cmd_redo(ScriptCall& c) { return c.e.doc.redo() ? synced(c, Status::ok()) : Status::error("nothing to redo"); }

Status cmd_duplicate(ScriptCall& c) {
  if (c.e.selected() < 0) return Status::error("duplicate: nothing selected");
  c.e.duplicate_selected();
  return Status::ok();
}

Status cmd_delete(ScriptCall& c) {
  if (c.e.selected() < 0) return Status::error("delete: nothing selected");
  c.e.delete_selected();
  return Status::ok();
}

Status cmd_rename(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  int i = c.find_object(c.w[1]);
  if (i < 0 || !c.e.doc.rename_object(i, c.w[2])) return Status::error("rename " + c.w[1] + " " + c.w[2] + " failed");
  return Status::ok();
}

Status cmd_add(ScriptCall& c) {  // add TYPE NAME [FILE]: the Add menu's entry TYPE (authoring.h ids)
  if (Status st = c.need(2); !st) return st;
  if (!c.e.add_object(c.w[1], c.w[2], c.w.size() > 3 ? c.w[3] : ""))
    return Status::error("add " + c.w[1] + ": " + c.e.messages.back().text);
  return synced(c, Status::ok());
}

Status cmd_shape(ScriptCall& c) {  // shape NAME KIND: the inspector's collider shape combo
  if (Status st = c.need(2); !st) return st;
  const int i = c.find_object(c.w[1]);
  if (i < 0) return Status::error("no object named \"" + c.w[1] + "\"");
  for (int k = 0; k <= int(scene::ColliderKind::mesh); ++k)
    if (c.w[2] == scene::to_string(scene::ColliderKind(k))) {
      if (!c.e.set_collider_kind(i, scene::ColliderKind(k))) return Status::error("shape: nothing changed");
      return synced(c, Status::ok());
    }
  return Status::error("shape: no collider shape \"" + c.w[2] + "\" (ground plane sphere box capsule mesh)");
}

// ---- the viewport

Status cmd_click(ScriptCall& c) {
  bool ok = c.w.size() >= 3, okx = false, oky = false;
  const int x = ok ? c.arg_int(1, &okx) : 0, y = ok ? c.arg_int(2, &oky) : 0;
  if (!okx || !oky) return Status::error("click X Y");
  c.click(x, y);
  return Status::ok();
}

Status cmd_click_object(ScriptCall& c) {  // click where the object's centre is on screen
  if (Status st = c.need(1); !st) return st;
  int i = c.find_object(c.w[1]);
  if (i < 0 || !c.e.compiled()) return Status::error("no object named \"" + c.w[1] + "\"");
  glm::vec3 px = on_screen(c.e, object_centre(c.e, i));
  c.click(int(px.x), int(px.y));
  return Status::ok();
}

Status cmd_click_body(ScriptCall& c) {  // click-body ROBOT BODY: where the body's centre of mass is drawn
  if (Status st = c.need(2); !st) return st;
  int i = c.find_object(c.w[1]);
  if (i < 0 || !c.e.compiled()) return Status::error("no object named \"" + c.w[1] + "\"");
  auto centre = robot_body_centre(c.e, i, c.w[2]);
  if (!centre) return Status::error("click-body: no body \"" + c.w[2] + "\" in \"" + c.w[1] + "\"");
  glm::vec3 px = on_screen(c.e, *centre);
  c.click(int(px.x), int(px.y));
  return Status::ok();
}

// camera YAW PITCH [DISTANCE]: the orbit camera in degrees (pitch 89: from above), about the
// selection's shown centre (else where it looks); the mouse's orbit does the same
Status cmd_camera(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  c.e.camera.yaw = glm::radians(float(std::atof(c.w[1].c_str())));
  c.e.camera.pitch = glm::radians(std::clamp(float(std::atof(c.w[2].c_str())), -89.0f, 89.0f));
  if (c.w.size() > 3) c.e.camera.distance = std::max(0.05f, float(std::atof(c.w[3].c_str())));
  if (auto centre = c.e.shown_selection_center()) c.e.camera.target = *centre;
  c.e.camera_fit_pending = false;
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_drag_gizmo(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const std::string& a = c.w[1];
  int axis = a == "x" ? 0 : a == "y" ? 1 : a == "z" ? 2 : -1;
  bool ok = false;
  int px = c.arg_int(2, &ok);
  glm::vec2 centre, tip;
  if (axis < 0 || !ok) return Status::error("drag-gizmo x|y|z PIXELS");
  if (!c.e.gizmo_handle(axis, &centre, &tip)) return Status::error("drag-gizmo: no gizmo on screen (select an object)");
  glm::vec2 dir = glm::normalize(tip - centre);
  glm::vec2 from = centre + (tip - centre) * 0.7f;
  c.drag(from, from + dir * float(px), false, 12);
  return Status::ok();
}

Status cmd_ctrl_drag_object(ScriptCall& c) {
  bool okx = false, oky = false;
  const int dx = c.w.size() >= 4 ? c.arg_int(2, &okx) : 0, dy = c.w.size() >= 4 ? c.arg_int(3, &oky) : 0;
  if (!okx || !oky) return Status::error("ctrl-drag-object NAME DX DY");
  int i = c.find_object(c.w[1]);
  if (i < 0 || !c.e.compiled()) return Status::error("no object named \"" + c.w[1] + "\"");
  const scene::ObjectRange& r = c.e.compiled()->objects[size_t(i)];
  if (r.particle_end <= r.particle_begin) return Status::error(c.w[1] + " has no particles to pull");
  glm::vec3 px = on_screen(c.e, object_centre(c.e, i));
  c.drag(glm::vec2(px.x, px.y), glm::vec2(px.x + float(dx), px.y + float(dy)), true, 40);
  return Status::ok();
}

Status cmd_key(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  auto k = parse_key(c.w[1]);
  if (!k) return Status::error("key: unknown key \"" + c.w[1] + "\"");
  c.key(*k);
  return Status::ok();
}

Status cmd_type(ScriptCall& c) {  // type TEXT: characters into the widget that has the keyboard
  if (Status st = c.need(1); !st) return st;
  c.type(c.rest(1));
  return Status::ok();
}

Status cmd_click_ui(ScriptCall& c) {  // click-ui NAME [ctrl]: a left click on a widget noted in UiItems
  if (Status st = c.need(1); !st) return st;
  auto it = c.e.ui_items.rects.find(c.w[1]);
  if (it == c.e.ui_items.rects.end()) {
    std::string known;
    for (const auto& [name, r] : c.e.ui_items.rects) known += (known.empty() ? "" : ", ") + name;
    return Status::error("click-ui: no widget \"" + c.w[1] + "\" was drawn (drawn: " + known + ")");
  }
  const auto& r = it->second;
  const glm::vec2 centre((r[0] + r[2]) * 0.5f, (r[1] + r[3]) * 0.5f);
  c.drag(centre, centre, c.w.size() > 2 && c.w[2] == "ctrl", 0);  // ctrl: a number's text field
  return Status::ok();
}

Status cmd_note_ui(ScriptCall& c) {  // note-ui NAME KEY: the widget's rect, for expect ui-moved
  if (Status st = c.need(2); !st) return st;
  auto it = c.e.ui_items.rects.find(c.w[1]);
  if (it == c.e.ui_items.rects.end()) return Status::error("note-ui: no widget \"" + c.w[1] + "\" was drawn");
  c.notes()[c.w[2]] = {it->second[0], it->second[1], it->second[2], it->second[3]};
  return Status::ok();
}

Status cmd_toggle(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  bool* f = overlay_flag(c.e, c.w[1]);
  if (!f) return Status::error("toggle: no overlay or panel named \"" + c.w[1] + "\"");
  *f = !*f;
  return Status::ok();
}

Status cmd_gradient(ScriptCall& c) {  // gradient arrows: none x0 v0 u
  if (Status st = c.need(1); !st) return st;
  const char* names[] = {"none", "x0", "v0", "u"};
  for (int i = 0; i < 4; ++i)
    if (c.w[1] == names[i]) {
      c.e.view_settings.gradient = i;
      return Status::ok();
    }
  return Status::error("gradient: none, x0, v0 or u");
}

Status cmd_screenshot(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  c.screenshot(c.w[1]);
  return Status::ok();
}

Status cmd_wait(ScriptCall& c) {
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("wait N: N frames");
  c.clear_frame_ms();
  c.wait_frames(n);
  return Status::ok();
}

Status cmd_wait_message(ScriptCall& c) {  // wait-message TEXT: until a message containing TEXT was shown
  if (Status st = c.need(1); !st) return st;
  const std::string text = c.rest(1);
  c.wait_until(
      [text](Editor& e) {
        for (const auto& m : e.messages)
          if (m.text.find(text) != std::string::npos) return true;
        return false;
      },
      "a message \"" + text + "\"");
  return Status::ok();
}

Status cmd_record(ScriptCall& c) {  // record PATH [panels|overlays]: as Ctrl+R with that file
  if (Status st = c.need(1); !st) return st;
  if (c.e.recording.active()) return Status::error("record: already recording");
  c.e.record_options.path = c.w[1];
  c.e.record_options.with_ui = c.w.size() > 2 && c.w[2] == "panels";
  c.e.record_options.overlays = c.w.size() > 2 && c.w[2] == "overlays";
  c.e.record_toggle_requested = true;
  c.wait_frames(1);  // the viewer starts it this frame
  return Status::ok();
}

// record-replay PATH: Record while a replay shows (wherever it is): the whole replay, to its end
Status cmd_record_replay(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  if (!c.e.replay_ready()) return Status::error("record-replay: no replay is showing");
  if (c.e.recording.active()) return Status::error("record-replay: already recording");
  c.e.record_options.path = c.w[1];
  c.e.record_options.with_ui = false;
  c.e.record_options.overlays = false;
  c.e.record_toggle_requested = true;
  c.wait_recording();
  return Status::ok();
}

// record-before-after PATH: the Optimization panel's Record before/after, to its end
Status cmd_record_before_after(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  if (Status st = c.e.start_before_after(); !st) return st;
  c.e.record_options.path = c.w[1];
  c.wait_recording();
  return Status::ok();
}

Status cmd_record_stop(ScriptCall& c) {
  if (!c.e.recording.active()) return Status::error("record-stop: not recording");
  c.e.record_toggle_requested = true;
  c.wait_frames(1);
  return Status::ok();
}

// ---- Simulation

Status cmd_play(ScriptCall& c) {
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok || n < 0) return Status::error("play N: N frames");
  c.e.worker.step(n);
  c.e.timeline_frame = -1;
  c.wait_worker();
  return Status::ok();
}

Status cmd_scrub(ScriptCall& c) {  // the timeline slider
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("scrub N: a frame, or -1 for the newest");
  c.e.timeline_frame = n;
  return Status::ok();
}

Status cmd_click_message(ScriptCall& c) {  // the newest message containing TEXT, clicked
  const std::string text = c.rest(1);
  for (size_t i = c.e.messages.size(); i-- > 0;)
    if (c.e.messages[i].text.find(text) != std::string::npos) {
      c.e.activate_message(c.e.messages[i]);
      return Status::ok();
    }
  return Status::error("no message contains \"" + text + "\"");
}

Status cmd_worlds(ScriptCall& c) {  // the Simulation panel's world count
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok || n < 1 || n > Worker::k_max_worlds)
    return Status::error("worlds N: 1.." + std::to_string(Worker::k_max_worlds) + " copies of the scene");
  c.e.set_world_count(n);
  c.wait_worker();
  return Status::ok();
}

Status cmd_inspect_world(ScriptCall& c) {  // inspect-world K: the Simulation panel's inspected world
  bool ok = false;
  const int k = c.w.size() >= 2 ? c.arg_int(1, &ok) : -1;
  if (!ok || k < 0 || k >= c.e.world_count)
    return Status::error("inspect-world K: 0.." + std::to_string(c.e.world_count - 1) + " (the worlds simulated)");
  c.e.inspected_world = k;
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_backend(ScriptCall& c) {  // the Simulation panel's backend combo (a greyed-out entry fails)
  if (Status st = c.need(1); !st) return st;
  std::string why;
  if (!c.e.backend_available(c.w[1], &why)) return Status::error("backend " + c.w[1] + " is disabled: " + why);
  c.e.set_backend(c.w[1]);
  return synced(c, Status::ok());
}

// ---- Optimization

Status cmd_optimize(ScriptCall& c) {  // optimize N [TASK]
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("optimize N [TASK]");
  const std::string task = task_arg(c, 2);
  if (int i = c.e.find_task(task); i >= 0) c.e.task_index = i;  // the panel shows the task it optimizes
  c.e.start_optimization(task, n, false);
  c.wait_worker();
  return Status::ok();
}

// task-policy ROBOT|off: the panel's controls combo (a policy of ROBOT, or per-frame inputs)
Status cmd_task_policy(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  if (c.e.doc.scene().tasks.empty()) return Status::error("task-policy: the scene has no task");
  const std::string robot = c.w[1] == "off" ? "" : c.rest(1);
  const auto before = c.e.doc.revision();
  c.e.set_task_policy(c.e.task_index, robot);
  if (c.e.doc.revision() == before) return Status::error("task-policy: nothing changed (see the messages)");
  return Status::ok();
}

// task-policy-set hidden W,W|phases N|period S|scale X|start-q X|start-qd X: the policy's fields
Status cmd_task_policy_set(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  auto& tasks = c.e.doc.scene().tasks;
  if (c.e.task_index < 0 || c.e.task_index >= int(tasks.size()) || !tasks[size_t(c.e.task_index)].has_policy)
    return Status::error("task-policy-set: the panel's task has no policy (task-policy ROBOT)");
  scene::Task t = tasks[size_t(c.e.task_index)];
  const std::string& f = c.w[1];
  const double v = std::atof(c.w[2].c_str());
  if (f == "hidden") {
    t.policy.hidden.clear();
    for (size_t p = 0; p < c.w[2].size();) {
      const int w = std::atoi(c.w[2].c_str() + p);
      if (w < 1) return Status::error("task-policy-set hidden: widths >= 1, comma-separated");
      t.policy.hidden.push_back(w);
      const size_t comma = c.w[2].find(',', p);
      p = comma == std::string::npos ? c.w[2].size() : comma + 1;
    }
  } else if (f == "phases") {
    t.policy.phases = int(v);
  } else if (f == "period") {
    t.policy.phase_period = v;
  } else if (f == "scale") {
    t.policy.output_scale = v;
  } else if (f == "start-q") {
    t.policy.start_q_range = v;
  } else if (f == "start-qd") {
    t.policy.start_qd_range = v;
  } else if (f == "action-scale" || f == "action-offset") {
    const std::optional<std::vector<double>> list = parse_number_list(c.w[2] == "none" ? "" : c.w[2]);
    if (!list) return Status::error("task-policy-set " + f + ": numbers separated by commas, or none");
    (f == "action-scale" ? t.policy.action_scale : t.policy.action_offset) = *list;
  } else {
    return Status::error(
        "task-policy-set: hidden, phases, period, scale, action-scale, action-offset, start-q or start-qd");
  }
  c.e.doc.end_merge();
  c.e.doc.set_task(c.e.task_index, t, "Policy");
  return Status::ok();
}

// the panel's task when it has a policy, with its robot's name
const scene::Task* policy_task(ScriptCall& c, const char* cmd, std::string& robot, Status& st) {
  auto& tasks = c.e.doc.scene().tasks;
  if (c.e.task_index < 0 || c.e.task_index >= int(tasks.size()) || !tasks[size_t(c.e.task_index)].has_policy) {
    st = Status::error(std::string(cmd) + ": the panel's task has no policy (task-policy ROBOT)");
    return nullptr;
  }
  const scene::Task* t = &tasks[size_t(c.e.task_index)];
  for (const scene::ParamSpec& p : t->parameters)
    if (p.kind == scene::ParamKind::policy) robot = p.object;
  return t;
}

// a body of the policy's robot by name (empty: its first body)
Status robot_body(ScriptCall& c, const std::string& robot, const std::string& name, std::string& body) {
  const std::vector<std::string> bodies = c.e.robot_bodies(robot);
  if (bodies.empty()) return Status::error("\"" + robot + "\" is not a compiled robot");
  if (name.empty()) return body = bodies.front(), Status::ok();
  if (std::find(bodies.begin(), bodies.end(), name) == bodies.end())
    return Status::error("\"" + robot + "\" has no body \"" + name + "\"");
  return body = name, Status::ok();
}

Status set_observation_field(ScriptCall& c, const std::string& robot, scene::ObservationTerm& o,
                             const std::string& field, const std::string& value) {
  if (field == "kind") {
    for (int k = 0; k <= int(scene::last_observation_kind); ++k)
      if (value == scene::to_string(scene::ObservationKind(k))) return o.kind = scene::ObservationKind(k), Status::ok();
    return Status::error("no observation kind \"" + value + "\"");
  }
  if (field == "body") return robot_body(c, robot, value, o.body);
  if (field == "object") {
    const std::vector<std::string> objects = c.e.particle_objects();
    if (std::find(objects.begin(), objects.end(), value) == objects.end())
      return Status::error("\"" + value + "\" is not a compiled object with particles");
    return o.object = value, Status::ok();
  }
  double v[3] = {0, 0, 0};
  const int n = std::sscanf(value.c_str(), "%lf,%lf,%lf", &v[0], &v[1], &v[2]);
  if (field == "scale" && n == 1) return o.scale = v[0], Status::ok();
  if (field == "axis" && n == 3) return o.axis = {v[0], v[1], v[2]}, Status::ok();
  if (field == "direction" && n == 3) return o.direction = {v[0], v[1], v[2]}, Status::ok();
  return Status::error(
      "an observation term's fields: kind NAME, body NAME, object NAME, scale X, axis X,Y,Z, direction X,Y,Z");
}

// task-obs-add KIND [BODY|OBJECT]: "+ add observation" of the panel's policy task (BODY: the robot's first;
// object_*: OBJECT, the first object with particles)
Status cmd_task_obs_add(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  std::string robot;
  Status st = Status::ok();
  const scene::Task* t = policy_task(c, "task-obs-add", robot, st);
  if (!t) return st;
  scene::Task e = *t;
  scene::ObservationTerm o;
  if (st = set_observation_field(c, robot, o, "kind", c.w[1]); !st) return st;
  if (scene::reads_object(o.kind)) {  // the particle object: named, or the scene's first
    const std::vector<std::string> objects = c.e.particle_objects();
    if (objects.empty()) return Status::error("task-obs-add: the scene has no object with particles");
    if (st = set_observation_field(c, robot, o, "object", c.w.size() > 2 ? c.w[2] : objects.front()); !st) return st;
  } else if (st = robot_body(c, robot, c.w.size() > 2 ? c.w[2] : "", o.body); !st) {
    return st;
  }
  e.policy.observation.push_back(o);
  c.e.doc.end_merge();
  c.e.doc.set_task(c.e.task_index, e, "Policy terms");
  return Status::ok();
}

// task-obs-remove I | task-obs-set I kind|body|object|scale|axis|direction VALUE: an observation term's row
Status cmd_task_obs_edit(ScriptCall& c) {
  const bool remove = c.w[0] == "task-obs-remove";
  if (Status st = c.need(remove ? 1 : 3); !st) return st;
  std::string robot;
  Status st = Status::ok();
  const scene::Task* t = policy_task(c, c.w[0].c_str(), robot, st);
  if (!t) return st;
  scene::Task e = *t;
  bool ok = false;
  const int i = c.arg_int(1, &ok);
  if (!ok || i < 0 || i >= int(e.policy.observation.size())) return Status::error(c.w[0] + ": no term " + c.w[1]);
  if (remove)
    e.policy.observation.erase(e.policy.observation.begin() + i);
  else if (st = set_observation_field(c, robot, e.policy.observation[size_t(i)], c.w[2], c.w[3]); !st)
    return st;
  c.e.doc.end_merge();
  c.e.doc.set_task(c.e.task_index, e, "Policy terms");
  return Status::ok();
}

// task-termination BODY HEIGHT|off: the "end when" row of the panel's policy task
Status cmd_task_termination(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  std::string robot;
  Status st = Status::ok();
  const scene::Task* t = policy_task(c, "task-termination", robot, st);
  if (!t) return st;
  scene::Task e = *t;
  if (c.w[1] == "off") {
    e.termination = {};
  } else {
    char* end = nullptr;
    const double h = c.w.size() > 2 ? std::strtod(c.w[2].c_str(), &end) : 0.0;
    if (c.w.size() < 3 || *end || !std::isfinite(h)) return Status::error("task-termination BODY HEIGHT|off");
    e.termination.object = robot;
    e.termination.height = h;
    if (st = robot_body(c, robot, c.w[1], e.termination.body); !st) return st;
  }
  c.e.doc.end_merge();
  c.e.doc.set_task(c.e.task_index, e, "Termination");
  return Status::ok();
}

// optimize-method bptt|shac|ahac|pods1|pods2 [COPIES [SEED]]: the method combo of the panel's task
Status cmd_optimize_method(ScriptCall& c) {
  const auto& w = c.w;
  if (w.size() < 2 || (w[1] != "bptt" && w[1] != "shac" && w[1] != "ahac" && w[1] != "pods1" && w[1] != "pods2"))
    return Status::error("optimize-method bptt|shac|ahac|pods1|pods2 [COPIES [SEED]]");
  const auto& tasks = c.e.doc.scene().tasks;
  if (tasks.empty()) return Status::error("optimize-method: the scene has no task");
  if (!tasks[size_t(std::clamp(c.e.task_index, 0, int(tasks.size()) - 1))].has_policy)
    return Status::error("optimize-method: the panel's task has no policy (it is trained by BPTT)");
  OptMethod& m = c.e.task_methods[tasks[size_t(std::clamp(c.e.task_index, 0, int(tasks.size()) - 1))].name];
  m.shac = w[1] == "shac" || w[1] == "ahac";
  m.ahac = w[1] == "ahac";
  m.pods = w[1] == "pods1" || w[1] == "pods2";
  m.order = w[1] == "pods2" ? 2 : 1;
  bool ok = true;
  if (w.size() > 2) {
    int n = c.arg_int(2, &ok);
    if (!ok || n < 1) return Status::error("optimize-method: COPIES must be >= 1");
    m.envs = n;
  }
  if (w.size() > 3) {
    int n = c.arg_int(3, &ok);
    if (!ok || n < 0) return Status::error("optimize-method: SEED must be >= 0");
    m.seed = std::uint64_t(n);
  }
  return Status::ok();
}

Status cmd_optimize_start(ScriptCall& c) {  // optimize-start [TASK]: the Start button (does not wait)
  const std::string task = task_arg(c, 1);
  if (int i = c.e.find_task(task); i >= 0) c.e.task_index = i;
  c.e.start_optimization(task, c.e.opt_iterations, false);
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_optimize_wait(ScriptCall& c) {  // optimize-wait N: N iterations done (or the run ended)
  bool ok = false;
  const int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("optimize-wait N: a number of iterations");
  c.wait_until(
      [n](Editor& e) {
        const OptPhase p = e.snap.opt_phase;
        return e.snap.opt_iteration >= n || p == OptPhase::finished || p == OptPhase::failed || p == OptPhase::stopped;
      },
      std::to_string(n) + " iterations");
  return Status::ok();
}

Status cmd_optimize_control(ScriptCall& c) {  // optimize-pause | optimize-resume | optimize-stop: the buttons
  if (c.w[0] == "optimize-stop")
    c.e.worker.stop_optimize();
  else
    c.e.worker.pause_optimize(c.w[0] == "optimize-pause");
  c.wait_worker();
  return Status::ok();
}

// checkpoint-save DIR | checkpoint-load DIR | checkpoint-evaluate DIR: the checkpoint dialogs'
// Save, Continue and Evaluate with DIR (evaluate: the replay paused at frame 0)
Status cmd_checkpoint(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  if (c.w[0] == "checkpoint-save") {
    const int before = c.e.snap.checkpoint_serial;
    c.e.save_checkpoint(c.rest(1));
    if (c.e.snap.opt_shac)  // until its outcome's message is shown (written to DIR, or why not)
      c.wait_until(
          [before, dir = c.rest(1)](Editor& e) {
            return e.snap.checkpoint_serial != before && !e.messages.empty() &&
                   (e.messages.back().text.find(dir) != std::string::npos ||
                    e.messages.back().text.find("Save checkpoint:") != std::string::npos);
          },
          "the checkpoint written");
    else
      c.wait_frames(2);
    return Status::ok();
  }
  if (c.w[0] == "checkpoint-evaluate") {  // until the episode is ready to replay, or refused (a message)
    const uint64_t request = c.e.evaluate_checkpoint(c.rest(1));
    const size_t before = c.e.messages.size();
    c.e.replay.playing = false;
    c.wait_until(
        [request, before](Editor& e) {
          return e.snap.replay.request == request && e.messages.size() > before &&
                 e.messages.back().text.find("Evaluate checkpoint:") != std::string::npos;
        },
        "the checkpoint's evaluation");
    return Status::ok();
  }
  c.e.continue_from_checkpoint(c.rest(1));  // refused: a message, as in the dialog
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_check_grad(ScriptCall& c) {
  c.e.worker.check_gradient(task_arg(c, 1), 8);
  c.wait_worker();
  return Status::ok();
}

Status cmd_optimize_param(ScriptCall& c) {  // optimize-param OBJECT KIND on|off: the inspector's toggle
  const auto& w = c.w;
  if (w.size() < 4 || (w[3] != "on" && w[3] != "off")) return Status::error("optimize-param OBJECT KIND on|off");
  int i = c.find_object(w[1]);
  if (i < 0) return Status::error("no object named \"" + w[1] + "\"");
  const auto kinds = optimizable(c.e.doc.scene().objects[size_t(i)].kind);
  auto k = std::find_if(kinds.begin(), kinds.end(), [&](scene::ParamKind q) { return w[2] == scene::to_string(q); });
  if (k == kinds.end()) return Status::error("optimize-param: \"" + w[1] + "\" has no optimizable \"" + w[2] + "\"");
  if (!c.e.set_optimized(i, *k, w[3] == "on"))
    return Status::error("optimize-param: nothing changed (no task, or already " + w[3] + ")");
  return synced(c, Status::ok());
}

Status cmd_loss_add(ScriptCall& c) {  // "+ add term", then its kind, object, target
  if (Status st = c.need(2); !st) return st;
  scene::LossTerm t = c.e.default_loss_term();
  if (Status st = set_loss_field(t, "kind", c.w[1]); !st) return st;
  t.object = c.w[2];
  if (c.w.size() > 3) t.target = c.w[3] == "none" ? "" : c.w[3];
  c.e.add_loss_term(t);  // refused: a message, as in the panel
  return synced(c, Status::ok());
}

Status cmd_loss_remove(ScriptCall& c) {  // loss-remove I
  bool ok = false;
  int i = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("loss-remove I: a term index");
  if (!c.e.remove_loss_term(i)) return Status::error("loss-remove: no term " + c.w[1]);
  return synced(c, Status::ok());
}

Status cmd_loss_set(ScriptCall& c) {  // loss-set I FIELD VALUE (the term's widgets)
  bool ok = false;
  int i = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("loss-set I FIELD VALUE: a term index");
  if (Status st = c.need(3); !st) return st;
  const auto& tasks = c.e.doc.scene().tasks;
  if (tasks.empty() || i < 0 || i >= int(tasks[size_t(c.e.task_index)].loss.size()))
    return Status::error("loss-set: no term " + c.w[1]);
  scene::LossTerm t = tasks[size_t(c.e.task_index)].loss[size_t(i)];
  if (Status st = set_loss_field(t, c.w[2], c.w[3]); !st) return st;
  c.e.doc.end_merge();
  c.e.set_loss_term(i, t);  // refused: a message, as in the panel
  return synced(c, Status::ok());
}

Status cmd_task_add(ScriptCall& c) {  // task-add NAME HORIZON: the panel's New task
  bool ok = false;
  int horizon = c.w.size() >= 3 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("task-add NAME HORIZON");
  if (!c.e.add_task(c.w[1], horizon)) return Status::error("task-add: " + c.e.messages.back().text);
  return synced(c, Status::ok());
}

Status cmd_task_remove(ScriptCall& c) {  // task-remove NAME
  if (Status st = c.need(1); !st) return st;
  if (!c.e.remove_task(c.e.find_task(c.rest(1))))
    return Status::error("task-remove: no task named \"" + c.rest(1) + "\"");
  return synced(c, Status::ok());
}

Status cmd_task_rename(ScriptCall& c) {  // task-rename OLD NEW
  if (Status st = c.need(2); !st) return st;
  if (!c.e.rename_task(c.e.find_task(c.w[1]), c.w[2])) return Status::error("task-rename " + c.w[1] + " failed");
  return synced(c, Status::ok());
}

Status cmd_task_duplicate(ScriptCall& c) {  // task-duplicate NAME
  if (Status st = c.need(1); !st) return st;
  if (!c.e.duplicate_task(c.e.find_task(c.rest(1))))
    return Status::error("task-duplicate: no task \"" + c.rest(1) + "\"");
  return synced(c, Status::ok());
}

Status cmd_task_horizon(ScriptCall& c) {  // task-horizon N: the panel's horizon field (its task)
  bool ok = false;
  int n = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("task-horizon N");
  c.e.doc.end_merge();
  if (!c.e.set_task_horizon(c.e.task_index, n)) return Status::error("task-horizon: nothing changed");
  return synced(c, Status::ok());
}

Status cmd_task_select(ScriptCall& c) {  // task-select NAME: the panel's task combo
  if (Status st = c.need(1); !st) return st;
  const int i = c.e.find_task(c.rest(1));
  if (i < 0) return Status::error("task-select: no task named \"" + c.rest(1) + "\"");
  c.e.task_index = i;
  return Status::ok();
}

Status cmd_plot_tab(ScriptCall& c) {  // plot-tab NAME: the Optimization panel's plot tab
  if (Status st = c.need(1); !st) return st;
  c.e.plot_tab_request = c.rest(1);
  return Status::ok();
}

// replay best|N: the Replay button (with the iteration picked on the loss plot, or the best);
// waits until the rollout is ready and shows frame 0, paused
Status cmd_replay(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  bool ok = true;
  c.e.apply_iteration = c.w[1] == "best" ? -1 : c.arg_int(1, &ok);
  if (!ok) return Status::error("replay best|N");
  c.e.start_replay();
  c.e.replay.playing = false;
  c.wait_worker();
  return Status::ok();
}

Status cmd_replay_frame(ScriptCall& c) {  // replay-frame K: the replay's timeline slider
  bool ok = false;
  const int k = c.w.size() >= 2 ? c.arg_int(1, &ok) : 0;
  if (!ok) return Status::error("replay-frame K");
  if (!c.e.replay_ready()) return Status::error("replay-frame: no replay (" + c.e.snap.replay.error + ")");
  if (k < 0 || k >= c.e.snap.replay.frames)
    return Status::error("replay-frame: the replay has frames 0.." + std::to_string(c.e.snap.replay.frames - 1));
  c.e.replay.frame = k;
  c.e.replay.playing = false;
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_replay_stop(ScriptCall& c) {  // the Stop replay button
  c.e.stop_replay();
  c.wait_frames(2);
  return Status::ok();
}

Status cmd_pick_iteration(ScriptCall& c) {  // pick-iteration N|best: a click on the loss plot (right: best)
  if (Status st = c.need(1); !st) return st;
  if (c.w[1] == "best") return c.e.apply_iteration = -1, Status::ok();
  bool ok = false;
  int i = c.arg_int(1, &ok);
  if (!ok || i < 0 || i >= int(c.e.snap.loss.size()))
    return Status::error("pick-iteration: no iteration " + c.w[1] + " on the plot");
  c.e.apply_iteration = i;
  return Status::ok();
}

Status cmd_apply_optimized(ScriptCall& c) {  // apply-optimized [LOSS_FILE]: the Apply button
  if (!c.e.apply_optimized()) return Status::error("apply-optimized: " + c.e.messages.back().text);
  const double loss = c.e.applied_loss;  // of the iterate it applied
  c.e.sync();
  if (c.w.size() > 1) {  // for a headless check of the saved scene (tests/editor/check_kept.sh)
    FILE* f = std::fopen(c.w[1].c_str(), "w");
    if (!f) return Status::error("apply-optimized: cannot write " + c.w[1]);
    std::fprintf(f, "%.9g\n", loss);
    std::fclose(f);
  }
  return Status::ok();
}

Status cmd_record_optimization(ScriptCall& c) {  // record-optimization PATH N [panels]: Start with "record"
  bool ok = false;
  int n = c.w.size() >= 3 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("record-optimization PATH N [panels]");
  if (c.e.recording.active()) return Status::error("record-optimization: already recording");
  const auto& tasks = c.e.doc.scene().tasks;
  if (tasks.empty()) return Status::error("record-optimization: the scene has no task");
  c.e.record_options.path = c.w[1];
  c.e.record_options.with_ui = c.w.size() > 3 && c.w[3] == "panels";
  c.e.start_optimization(tasks[size_t(c.e.task_index)].name, n, true);
  c.clear_frame_ms();
  c.wait_recording();
  return Status::ok();
}

// landscape [direction grad|random|N] [span S] [points K] [sweep KNOB V1,V2..] [grid K] [stats N]:
// the Landscape panel's settings, then Run, waiting until it is done
Status cmd_landscape(ScriptCall& c) {
  LandscapeUi& ui = c.e.landscape;
  const auto& w = c.w;
  for (size_t i = 1; i < w.size(); i += 2) {
    const std::string& key = w[i];
    if (i + 1 >= w.size()) return Status::error("landscape: " + key + " needs a value");
    const std::string& v = w[i + 1];
    bool ok = true;
    if (key == "direction") {
      if (v == "grad")
        ui.direction = 0;
      else if (v == "random")
        ui.direction = 1;
      else
        ui.direction = 2, ui.parameter = c.arg_int(i + 1, &ok);
    } else if (key == "span") {
      ui.span = std::strtof(v.c_str(), nullptr);
    } else if (key == "points") {
      ui.points = c.arg_int(i + 1, &ok);
    } else if (key == "grid") {
      ui.grid = c.arg_int(i + 1, &ok);
    } else if (key == "stats") {
      ui.stats = c.arg_int(i + 1, &ok);
    } else if (key == "sweep") {
      optim::ContactKnob knob;
      if (!optim::parse_contact_knob(v, knob) || i + 2 >= w.size())
        return Status::error("landscape: sweep KNOB V1,V2,... (ke kd kf mu eps)");
      ui.knob = int(knob);
      std::snprintf(ui.sweep, sizeof ui.sweep, "%s", w[i + 2].c_str());
      ++i;
    } else {
      return Status::error("landscape: unknown setting \"" + key + "\"");
    }
    if (!ok) return Status::error("landscape: " + key + " " + v + " is not a number");
  }
  ui.open = true;
  if (Status st = start_landscape(c.e); !st) return st;
  c.wait_worker();
  return Status::ok();
}

Status cmd_landscape_pick(ScriptCall& c) {  // landscape-pick CURVE K | landscape-pick 2d I J: a click on a plot
  bool ok1 = false, ok2 = false;
  if (c.w.size() < 3) return Status::error("landscape-pick CURVE K | 2d I J");
  const LandscapeJob::View v = c.e.landscape.job.view();
  if (!v.error.empty()) return Status::error("landscape: " + v.error);
  const bool plane = c.w[1] == "2d";
  const int a = c.arg_int(plane ? 2 : 1, &ok1), b = c.w.size() > 3 || !plane ? c.arg_int(plane ? 3 : 2, &ok2) : 0;
  if (!ok1 || !ok2) return Status::error("landscape-pick CURVE K | 2d I J");
  const bool loaded = plane ? load_landscape_point(c.e, 0, a, b) : load_landscape_point(c.e, a, b);
  if (!loaded) return Status::error("landscape-pick: " + c.e.messages.back().text);
  return synced(c, Status::ok());
}

Status cmd_dialog(ScriptCall& c) {  // dialog open|save-as|import|media: as the File menu's entries
  if (Status st = c.need(1); !st) return st;
  if (c.w[1] == "open")
    c.e.show_dialog(Editor::FileDialog::open);
  else if (c.w[1] == "save-as")
    c.e.open_save_as();
  else if (c.w[1] == "import")
    c.e.show_dialog(Editor::FileDialog::import_obj);
  else if (c.w[1] == "media")
    c.e.show_dialog(Editor::FileDialog::media);
  else if (c.w[1] == "checkpoint-save")
    c.e.show_dialog(Editor::FileDialog::checkpoint_save);
  else if (c.w[1] == "checkpoint-load")
    c.e.show_dialog(Editor::FileDialog::checkpoint_load);
  else if (c.w[1] == "checkpoint-evaluate")
    c.e.show_dialog(Editor::FileDialog::checkpoint_evaluate);
  else
    return Status::error(
        "dialog: open, save-as, import, media, checkpoint-save, checkpoint-load or checkpoint-evaluate");
  c.wait_frames(3);
  return Status::ok();
}

const ScriptCommand k_file[] = {
    {"open", cmd_open},         {"try-open", cmd_try_open}, {"new", cmd_new},
    {"template", cmd_template}, {"revert", cmd_revert},     {"save", cmd_save},
    {"save-as", cmd_save_as},   {"prompt", cmd_prompt},     {"drop", cmd_drop},
    {"autosave", cmd_autosave}, {"restore", cmd_restore},   {"discard-recovery", cmd_discard_recovery},
    {"dialog", cmd_dialog},
};

const ScriptCommand k_edit[] = {
    {"select", cmd_select}, {"set", cmd_set},       {"undo", cmd_undo},
    {"redo", cmd_redo},     {"add", cmd_add},       {"duplicate", cmd_duplicate},
    {"delete", cmd_delete}, {"rename", cmd_rename}, {"shape", cmd_shape},
};

const ScriptCommand k_view[] = {
    {"click", cmd_click},
    {"click-object", cmd_click_object},
    {"click-body", cmd_click_body},
    {"camera", cmd_camera},
    {"drag-gizmo", cmd_drag_gizmo},
    {"ctrl-drag-object", cmd_ctrl_drag_object},
    {"key", cmd_key},
    {"type", cmd_type},
    {"click-ui", cmd_click_ui},
    {"note-ui", cmd_note_ui},
    {"toggle", cmd_toggle},
    {"gradient", cmd_gradient},
    {"screenshot", cmd_screenshot},
    {"wait", cmd_wait},
    {"wait-message", cmd_wait_message},
    {"record", cmd_record},
    {"record-stop", cmd_record_stop},
};

const ScriptCommand k_simulation[] = {
    {"play", cmd_play},       {"scrub", cmd_scrub},   {"click-message", cmd_click_message},
    {"backend", cmd_backend}, {"worlds", cmd_worlds}, {"inspect-world", cmd_inspect_world},
};

const ScriptCommand k_optimization[] = {
    {"optimize", cmd_optimize},
    {"optimize-method", cmd_optimize_method},
    {"task-policy", cmd_task_policy},
    {"task-policy-set", cmd_task_policy_set},
    {"task-obs-add", cmd_task_obs_add},
    {"task-obs-remove", cmd_task_obs_edit},
    {"task-obs-set", cmd_task_obs_edit},
    {"task-termination", cmd_task_termination},
    {"check-grad", cmd_check_grad},
    {"optimize-start", cmd_optimize_start},
    {"optimize-wait", cmd_optimize_wait},
    {"optimize-pause", cmd_optimize_control},
    {"optimize-resume", cmd_optimize_control},
    {"optimize-stop", cmd_optimize_control},
    {"checkpoint-save", cmd_checkpoint},
    {"checkpoint-load", cmd_checkpoint},
    {"checkpoint-evaluate", cmd_checkpoint},
    {"optimize-param", cmd_optimize_param},
    {"loss-add", cmd_loss_add},
    {"loss-remove", cmd_loss_remove},
    {"loss-set", cmd_loss_set},
    {"task-add", cmd_task_add},
    {"task-remove", cmd_task_remove},
    {"task-rename", cmd_task_rename},
    {"task-duplicate", cmd_task_duplicate},
    {"task-select", cmd_task_select},
    {"plot-tab", cmd_plot_tab},
    {"task-horizon", cmd_task_horizon},
    {"pick-iteration", cmd_pick_iteration},
    {"apply-optimized", cmd_apply_optimized},
    {"record-optimization", cmd_record_optimization},
    {"replay", cmd_replay},
    {"replay-frame", cmd_replay_frame},
    {"replay-stop", cmd_replay_stop},
    {"record-replay", cmd_record_replay},
    {"record-before-after", cmd_record_before_after},
    {"landscape", cmd_landscape},
    {"landscape-pick", cmd_landscape_pick},
};

}  // namespace

std::span<const ScriptCommand> script_file_commands() { return k_file; }
std::span<const ScriptCommand> script_edit_commands() { return k_edit; }
std::span<const ScriptCommand> script_view_commands() { return k_view; }
std::span<const ScriptCommand> script_simulation_commands() { return k_simulation; }
std::span<const ScriptCommand> script_optimization_commands() { return k_optimization; }

}  // namespace adj::editor
