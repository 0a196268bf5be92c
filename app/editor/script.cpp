#include "app/editor/script.h"

#include <GLFW/glfw3.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <algorithm>

#include "app/editor/editor.h"
#include "app/editor/fields.h"
#include "engine/scene/compile.h"

#include <imgui.h>

namespace adj::editor {

namespace {

constexpr double k_wait_limit_s = 300.0;  // a wait longer than this fails the script

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string expand_env(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
      size_t close = s.find('}', i);
      if (close != std::string::npos) {
        const char* v = std::getenv(s.substr(i + 2, close - i - 2).c_str());
        out += v ? v : "";
        i = close;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool parse_int(const std::string& s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end) return false;
  *out = int(v);
  return true;
}

std::optional<ScriptKey> parse_key(std::string s) {
  ScriptKey k;
  for (;;) {
    if (s.rfind("ctrl+", 0) == 0) k.ctrl = true, s = s.substr(5);
    else if (s.rfind("shift+", 0) == 0) k.shift = true, s = s.substr(6);
    else break;
  }
  static const std::pair<const char*, int> names[] = {
      {"space", GLFW_KEY_SPACE}, {"right", GLFW_KEY_RIGHT}, {"backspace", GLFW_KEY_BACKSPACE},
      {"delete", GLFW_KEY_DELETE}, {"home", GLFW_KEY_HOME}, {"f1", GLFW_KEY_F1}, {"f", GLFW_KEY_F},
      {"z", GLFW_KEY_Z}, {"y", GLFW_KEY_Y}, {"w", GLFW_KEY_W}, {"d", GLFW_KEY_D}, {"n", GLFW_KEY_N}, {"o", GLFW_KEY_O}, {"q", GLFW_KEY_Q}, {"p", GLFW_KEY_P}, {"s", GLFW_KEY_S},
      {"g", GLFW_KEY_G}, {"r", GLFW_KEY_R}, {"x", GLFW_KEY_X}, {"escape", GLFW_KEY_ESCAPE}, {"enter", GLFW_KEY_ENTER},
      {"minus", GLFW_KEY_MINUS}, {"period", GLFW_KEY_PERIOD}, {"0", GLFW_KEY_0}, {"1", GLFW_KEY_1},
      {"2", GLFW_KEY_2}, {"3", GLFW_KEY_3}, {"4", GLFW_KEY_4}, {"5", GLFW_KEY_5}, {"6", GLFW_KEY_6},
      {"7", GLFW_KEY_7}, {"8", GLFW_KEY_8}, {"9", GLFW_KEY_9}};
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
  return nullptr;
}

// a loss term's field by name (kind object target step weight), as text
std::string loss_field(const scene::LossTerm& t, const std::string& field) {
  if (field == "kind") return scene::to_string(t.kind);
  if (field == "object") return t.object;
  if (field == "target") return t.target;
  if (field == "step") return std::to_string(t.step);
  if (field == "body") return t.body;
  char buf[32];
  if (field == "weight") return std::snprintf(buf, sizeof buf, "%.17g", t.weight), buf;
  if (field == "value") return std::snprintf(buf, sizeof buf, "%.17g", t.value), buf;
  return "?";
}

Status set_loss_field(scene::LossTerm& t, const std::string& field, const std::string& value) {
  if (field == "kind") {
    for (int k = 0; k <= int(scene::LossKind::speed); ++k)
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
  if (field == "axis.x" || field == "axis.y" || field == "axis.z") return t.axis[size_t(field[5] - 'x')] = v, Status::ok();
  return Status::error("a loss term has no field \"" + field + "\" (kind object target body step weight value axis.x/y/z)");
}

}  // namespace

Result<Script> Script::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::error(path + ": cannot read the script");
  Script s;
  s.path_ = path;
  std::string text;
  int number = 0;
  while (std::getline(f, text)) {
    ++number;
    if (size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream in(expand_env(text));
    Line line{number, {}};
    for (std::string w; in >> w;) line.words.push_back(w);
    if (!line.words.empty()) s.lines_.push_back(std::move(line));
  }
  return s;
}

bool Script::fail(const Line& line, const std::string& why, int code) {
  std::fprintf(stderr, "%s:%d: %s\n", path_.c_str(), line.number, why.c_str());
  exit_code_ = code;
  return false;
}

std::optional<std::string> Script::take_screenshot() {
  auto s = screenshot_;
  screenshot_.reset();
  return s;
}
std::optional<ScriptKey> Script::take_key() {
  auto k = key_;
  key_.reset();
  return k;
}
std::optional<ScriptMouse> Script::take_mouse() {
  if (wait_ != Wait::mouse || mouse_next_ >= mouse_track_.size()) return std::nullopt;
  return mouse_track_[mouse_next_++];
}

void Script::drag(glm::vec2 from, glm::vec2 to, bool ctrl, int frames) {
  mouse_track_.clear();
  mouse_next_ = 0;
  mouse_track_.push_back({from.x, from.y, false, ctrl});  // hover first
  mouse_track_.push_back({from.x, from.y, true, ctrl});   // press
  for (int i = 1; i <= frames; ++i) {
    glm::vec2 p = from + (to - from) * (float(i) / float(frames));
    mouse_track_.push_back({p.x, p.y, true, ctrl});
  }
  mouse_track_.push_back({to.x, to.y, false, false});  // release
  wait_ = Wait::mouse;
  waited_frames_ = 0;
}

std::optional<std::pair<int, int>> Script::take_click() {
  auto c = click_;
  click_.reset();
  return c;
}

void Script::screenshot_written(bool ok, const std::string& error) {
  screenshot_pending_ = false;
  if (!ok) {
    std::fprintf(stderr, "%s: screenshot: %s\n", path_.c_str(), error.c_str());
    exit_code_ = 1;
  }
}

Script::Progress Script::update(Editor& e) {
  if (exit_code_ != 0) return Progress::failed;
  // finish the current wait first
  switch (wait_) {
    case Wait::none: break;
    case Wait::frames:
      wait_frame_ms_.push_back(e.ui_frame_ms);
      if (++waited_frames_ < wait_frames_) return Progress::running;
      if (deferred_screenshot_) {  // the panels have settled: capture this frame
        screenshot_ = std::move(deferred_screenshot_);
        deferred_screenshot_.reset();
        wait_ = Wait::screenshot;
        return Progress::running;
      }
      break;
    case Wait::worker:
      // two UI frames after the worker is done, so the panels show its last snapshot
      wait_frame_ms_.push_back(e.ui_frame_ms);
      if (!e.worker.idle()) {
        if (now_s() - wait_started_ > k_wait_limit_s) {
          fail(lines_[next_ - 1], "still waiting for the worker after 300 s", 1);
          return Progress::failed;
        }
        waited_frames_ = 0;
        return Progress::running;
      }
      if (++waited_frames_ < 3) return Progress::running;
      break;
    case Wait::recording:  // a "record optimization" video, until it has stopped by itself
      wait_frame_ms_.push_back(e.ui_frame_ms);
      if (e.recording.active() || e.record_toggle_requested) {
        if (now_s() - wait_started_ > k_wait_limit_s) {
          fail(lines_[next_ - 1], "the recording of the optimization still runs after 300 s", 1);
          return Progress::failed;
        }
        return Progress::running;
      }
      break;
    case Wait::mouse:
      if (mouse_next_ < mouse_track_.size()) return Progress::running;
      if (++waited_frames_ < 3) return Progress::running;
      break;
    case Wait::screenshot:
      if (screenshot_pending_) return Progress::running;
      break;
  }
  wait_ = Wait::none;
  if (exit_code_ != 0) return Progress::failed;

  while (next_ < lines_.size() && wait_ == Wait::none) {
    const Line& line = lines_[next_++];
    std::printf("script: %s\n", [&] {
      std::string s;
      for (auto& w : line.words) s += (s.empty() ? "" : " ") + w;
      return s;
    }().c_str());
    std::fflush(stdout);
    if (line.words[0] == "quit") return Progress::done;
    Status st = run(e, line);
    if (!st) {
      // expectations fail with 4, everything else with 1
      fail(line, st.message(), line.words[0].starts_with("expect") ? 4 : 1);
      return Progress::failed;
    }
  }
  if (next_ >= lines_.size() && wait_ == Wait::none) return Progress::done;
  return Progress::running;
}

Status Script::run(Editor& e, const Line& line) {
  const auto& w = line.words;
  const std::string& cmd = w[0];
  auto need = [&](size_t n) -> Status {
    if (w.size() < n + 1) return Status::error(cmd + ": expected " + std::to_string(n) + " argument(s)");
    return Status::ok();
  };
  auto find_object = [&](const std::string& name) {
    const auto& objs = e.doc.scene().objects;
    for (size_t i = 0; i < objs.size(); ++i)
      if (objs[i].name == name) return int(i);
    return -1;
  };
  auto worker_wait = [&] {
    wait_frame_ms_.clear();
    wait_ = Wait::worker;
    waited_frames_ = 0;
    wait_started_ = now_s();
  };

  if (cmd == "open") {
    if (Status st = need(1); !st) return st;
    if (!e.open(w[1])) return Status::error("open " + w[1] + ": " + (e.messages.empty() ? "" : e.messages.back().text));
    worker_wait();
    return Status::ok();
  }
  if (cmd == "try-open") {  // a file that may fail: the error becomes a message, the scene stays
    if (Status st = need(1); !st) return st;
    e.open(w[1]);
    worker_wait();
    return Status::ok();
  }
  if (cmd == "click-body") {  // click-body ROBOT BODY: click where the body's centre of mass is drawn
    if (Status st = need(2); !st) return st;
    int i = find_object(w[1]);
    if (i < 0 || !e.compiled()) return Status::error("no object named \"" + w[1] + "\"");
    auto c = robot_body_centre(e, i, w[2]);
    if (!c) return Status::error("click-body: no body \"" + w[2] + "\" in \"" + w[1] + "\"");
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    glm::vec3 px = e.camera.project(*c, glm::vec2(size.x, size.y));
    click_ = {int(px.x), int(px.y)};
    wait_ = Wait::frames;
    wait_frames_ = 2;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "click-object") {  // click where the object's centre is on screen
    if (Status st = need(1); !st) return st;
    int i = find_object(w[1]);
    if (i < 0 || !e.compiled()) return Status::error("no object named \"" + w[1] + "\"");
    const scene::Object& o = e.doc.scene().objects[size_t(i)];
    const scene::ObjectRange& r = e.compiled()->objects[size_t(i)];
    glm::vec3 c(0.0f);
    if (r.particle_end > r.particle_begin) {
      const State& st = e.display_state();
      for (int p = r.particle_begin; p < r.particle_end; ++p)
        c += glm::vec3(st.particle_q[size_t(p)].x, st.particle_q[size_t(p)].y, st.particle_q[size_t(p)].z);
      c /= float(r.particle_end - r.particle_begin);
    } else {
      const scene::V3& p = o.kind == scene::ObjectKind::target ? o.target.position : o.collider.position;
      c = glm::vec3(float(p[0]), float(p[1]), float(p[2]));
    }
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    glm::vec3 px = e.camera.project(c, glm::vec2(size.x, size.y));
    click_ = {int(px.x), int(px.y)};
    wait_ = Wait::frames;
    wait_frames_ = 2;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "autosave") {  // write the recovery file now (the editor does it every minute)
    return e.write_recovery() ? Status::ok() : Status::error("autosave failed");
  }
  if (cmd == "restore") {
    if (!e.recovery_offered()) return Status::error("restore: no recovery file was offered");
    if (!e.restore_recovery()) return Status::error("restore failed");
    worker_wait();
    return Status::ok();
  }
  if (cmd == "discard-recovery") {
    e.discard_recovery();
    return Status::ok();
  }
  if (cmd == "drag-gizmo") {
    if (Status st = need(2); !st) return st;
    int axis = w[1] == "x" ? 0 : w[1] == "y" ? 1 : w[1] == "z" ? 2 : -1;
    int px = 0;
    glm::vec2 c, tip;
    if (axis < 0 || !parse_int(w[2], &px)) return Status::error("drag-gizmo x|y|z PIXELS");
    if (!e.gizmo_handle(axis, &c, &tip)) return Status::error("drag-gizmo: no gizmo on screen (select an object)");
    glm::vec2 dir = glm::normalize(tip - c);
    glm::vec2 from = c + (tip - c) * 0.7f;
    drag(from, from + dir * float(px), false, 12);
    return Status::ok();
  }
  if (cmd == "ctrl-drag-object") {
    int dx = 0, dy = 0;
    if (w.size() < 4 || !parse_int(w[2], &dx) || !parse_int(w[3], &dy)) return Status::error("ctrl-drag-object NAME DX DY");
    int i = find_object(w[1]);
    if (i < 0 || !e.compiled()) return Status::error("no object named \"" + w[1] + "\"");
    const scene::ObjectRange& r = e.compiled()->objects[size_t(i)];
    if (r.particle_end <= r.particle_begin) return Status::error(w[1] + " has no particles to pull");
    const State& st = e.display_state();
    glm::vec3 c(0.0f);
    for (int p = r.particle_begin; p < r.particle_end; ++p)
      c += glm::vec3(st.particle_q[size_t(p)].x, st.particle_q[size_t(p)].y, st.particle_q[size_t(p)].z);
    c /= float(r.particle_end - r.particle_begin);
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    glm::vec3 px = e.camera.project(c, glm::vec2(size.x, size.y));
    drag(glm::vec2(px.x, px.y), glm::vec2(px.x + float(dx), px.y + float(dy)), true, 40);
    return Status::ok();
  }
  if (cmd == "scrub") {  // the timeline slider
    int n = 0;
    if (w.size() < 2 || !parse_int(w[1], &n)) return Status::error("scrub N: a frame, or -1 for the newest");
    e.timeline_frame = n;
    return Status::ok();
  }
  if (cmd == "click-message") {  // the newest message containing TEXT, clicked
    std::string text;
    for (size_t i = 1; i < w.size(); ++i) text += (i > 1 ? " " : "") + w[i];
    for (size_t i = e.messages.size(); i-- > 0;)
      if (e.messages[i].text.find(text) != std::string::npos) {
        e.activate_message(e.messages[i]);
        return Status::ok();
      }
    return Status::error("no message contains \"" + text + "\"");
  }
  if (cmd == "drop") {  // as dropping the file on the window
    if (Status st = need(1); !st) return st;
    e.drop_file(w[1]);
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "select") {
    if (Status st = need(1); !st) return st;
    int i = w[1] == "none" ? -1 : find_object(w[1]);
    if (i < 0 && w[1] != "none") return Status::error("no object named \"" + w[1] + "\"");
    e.select(i);
    wait_ = Wait::frames;  // the panels and the gizmo show the selection from the next frame
    wait_frames_ = 2;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "set") {
    if (Status st = need(2); !st) return st;
    Status st = e.set_field(w[1], w[2]);
    if (st) {
      e.sync();
      worker_wait();
    }
    return st;
  }
  if (cmd == "play") {
    int n = 0;
    if (w.size() < 2 || !parse_int(w[1], &n) || n < 0) return Status::error("play N: N frames");
    e.worker.step(n);
    e.timeline_frame = -1;
    worker_wait();
    return Status::ok();
  }
  if (cmd == "optimize") {
    int n = 0;
    if (w.size() < 2 || !parse_int(w[1], &n)) return Status::error("optimize N [TASK]");
    const auto& tasks = e.doc.scene().tasks;
    std::string task = tasks.empty() ? "" : tasks[size_t(e.task_index)].name;
    if (w.size() > 2) {  // the task's name may have spaces
      task = w[2];
      for (size_t i = 3; i < w.size(); ++i) (task += ' ') += w[i];
      for (size_t i = 0; i < tasks.size(); ++i)  // the panel shows the task it optimizes
        if (tasks[i].name == task) e.task_index = int(i);
    }
    e.start_optimization(task, n, false);
    worker_wait();
    return Status::ok();
  }
  if (cmd == "optimize-method") {  // optimize-method bptt|shac [COPIES [SEED]]: the panel's method combo
    if (w.size() < 2 || (w[1] != "bptt" && w[1] != "shac")) return Status::error("optimize-method bptt|shac [COPIES [SEED]]");
    e.opt_method.shac = w[1] == "shac";
    int n = 0;
    if (w.size() > 2 && (!parse_int(w[2], &n) || n < 1)) return Status::error("optimize-method: COPIES must be >= 1");
    if (w.size() > 2) e.opt_method.envs = n;
    if (w.size() > 3 && (!parse_int(w[3], &n) || n < 0)) return Status::error("optimize-method: SEED must be >= 0");
    if (w.size() > 3) e.opt_method.seed = std::uint64_t(n);
    return Status::ok();
  }
  if (cmd == "check-grad") {
    const auto& tasks = e.doc.scene().tasks;
    std::string task = w.size() > 1 ? w[1] : (tasks.empty() ? "" : tasks[size_t(e.task_index)].name);
    e.worker.check_gradient(task, 8);
    worker_wait();
    return Status::ok();
  }
  if (cmd == "gradient") {  // gradient arrows: none x0 v0 u
    if (Status st = need(1); !st) return st;
    const char* names[] = {"none", "x0", "v0", "u"};
    for (int i = 0; i < 4; ++i)
      if (w[1] == names[i]) {
        e.view_settings.gradient = i;
        return Status::ok();
      }
    return Status::error("gradient: none, x0, v0 or u");
  }
  if (cmd == "optimize-param") {  // optimize-param OBJECT KIND on|off: the inspector's Optimize toggle
    if (w.size() < 4 || (w[3] != "on" && w[3] != "off")) return Status::error("optimize-param OBJECT KIND on|off");
    int i = find_object(w[1]);
    if (i < 0) return Status::error("no object named \"" + w[1] + "\"");
    const auto kinds = optimizable(e.doc.scene().objects[size_t(i)].kind);
    auto k = std::find_if(kinds.begin(), kinds.end(), [&](scene::ParamKind q) { return w[2] == scene::to_string(q); });
    if (k == kinds.end()) return Status::error("optimize-param: \"" + w[1] + "\" has no optimizable \"" + w[2] + "\"");
    if (!e.set_optimized(i, *k, w[3] == "on")) return Status::error("optimize-param: nothing changed (no task, or already " + w[3] + ")");
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "rename") {
    if (Status st = need(2); !st) return st;
    int i = find_object(w[1]);
    if (i < 0 || !e.doc.rename_object(i, w[2])) return Status::error("rename " + w[1] + " " + w[2] + " failed");
    return Status::ok();
  }
  if (cmd == "toggle") {
    if (Status st = need(1); !st) return st;
    bool* f = overlay_flag(e, w[1]);
    if (!f) return Status::error("toggle: no overlay or panel named \"" + w[1] + "\"");
    *f = !*f;
    if (w[1] == "ghosts") e.worker.set_ghosts(*f);
    return Status::ok();
  }
  if (cmd == "loss-add") {  // the Optimization panel's "+ add term", then its kind, object, target
    if (Status st = need(2); !st) return st;
    scene::LossTerm t = e.default_loss_term();
    if (Status st = set_loss_field(t, "kind", w[1]); !st) return st;
    t.object = w[2];
    if (w.size() > 3) t.target = w[3] == "none" ? "" : w[3];
    e.add_loss_term(t);  // refused: a message, as in the panel
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "loss-remove" || cmd == "loss-set") {  // loss-remove I | loss-set I FIELD VALUE (the term's widgets)
    int i = 0;
    if (w.size() < 2 || !parse_int(w[1], &i)) return Status::error(cmd + " I ...: a term index");
    if (cmd == "loss-remove") {
      if (!e.remove_loss_term(i)) return Status::error("loss-remove: no term " + w[1]);
    } else {
      if (Status st = need(3); !st) return st;
      const auto& tasks = e.doc.scene().tasks;
      if (tasks.empty() || i < 0 || i >= int(tasks[size_t(e.task_index)].loss.size()))
        return Status::error("loss-set: no term " + w[1]);
      scene::LossTerm t = tasks[size_t(e.task_index)].loss[size_t(i)];
      if (Status st = set_loss_field(t, w[2], w[3]); !st) return st;
      e.doc.end_merge();
      e.set_loss_term(i, t);  // refused: a message, as in the panel
    }
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "prompt") {  // the unsaved-changes prompt's buttons: save discard cancel
    if (Status st = need(1); !st) return st;
    if (!e.prompt_active()) return Status::error("prompt: no unsaved-changes prompt is up");
    if (w[1] == "save") e.answer_prompt(Editor::Answer::save);
    else if (w[1] == "discard") e.answer_prompt(Editor::Answer::discard);
    else if (w[1] == "cancel") e.answer_prompt(Editor::Answer::cancel);
    else return Status::error("prompt save|discard|cancel");
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "save-as") {  // the Save As dialog: save-as PATH (its Save) or save-as cancel
    if (Status st = need(1); !st) return st;
    if (!e.save_as_active()) return Status::error("save-as: the Save As dialog is not up");
    e.answer_save_as(w[1] == "cancel" ? "" : w[1]);
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "backend") {  // the Simulation panel's backend combo (a greyed-out entry fails)
    if (Status st = need(1); !st) return st;
    std::string why;
    if (!e.backend_available(w[1], &why)) return Status::error("backend " + w[1] + " is disabled: " + why);
    e.set_backend(w[1]);
    e.sync();
    worker_wait();
    return Status::ok();
  }
  if (cmd == "undo") return e.doc.undo() ? (e.sync(), worker_wait(), Status::ok()) : Status::error("nothing to undo");
  if (cmd == "redo") return e.doc.redo() ? (e.sync(), worker_wait(), Status::ok()) : Status::error("nothing to redo");
  if (cmd == "duplicate") {
    if (e.selected() < 0) return Status::error("duplicate: nothing selected");
    e.duplicate_selected();
    return Status::ok();
  }
  if (cmd == "delete") {
    if (e.selected() < 0) return Status::error("delete: nothing selected");
    e.delete_selected();
    return Status::ok();
  }
  if (cmd == "save") {
    if (!e.save(w.size() > 1 ? w[1] : "")) return Status::error("save failed: " + e.messages.back().text);
    return Status::ok();
  }
  if (cmd == "screenshot") {
    if (Status st = need(1); !st) return st;
    // let the panels settle for two frames, then capture
    wait_ = Wait::frames;
    wait_frames_ = 2;
    waited_frames_ = 0;
    deferred_screenshot_ = w[1];
    screenshot_pending_ = true;
    return Status::ok();
  }
  if (cmd == "apply-optimized") {
    if (!e.apply_optimized()) return Status::error("apply-optimized: nothing to apply");
    e.sync();
    return Status::ok();
  }
  if (cmd == "record") {  // record PATH [panels]: as Ctrl+R with that file
    if (Status st = need(1); !st) return st;
    if (e.recording.active()) return Status::error("record: already recording");
    e.record_options.path = w[1];
    e.record_options.with_ui = w.size() > 2 && w[2] == "panels";
    e.record_toggle_requested = true;
    wait_ = Wait::frames;  // the viewer starts it this frame
    wait_frames_ = 1;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "record-optimization") {  // record-optimization PATH N [panels]: the panel's Start with "record"
    int n = 0;
    if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("record-optimization PATH N [panels]");
    if (e.recording.active()) return Status::error("record-optimization: already recording");
    const auto& tasks = e.doc.scene().tasks;
    if (tasks.empty()) return Status::error("record-optimization: the scene has no task");
    e.record_options.path = w[1];
    e.record_options.with_ui = w.size() > 3 && w[3] == "panels";
    e.start_optimization(tasks[size_t(e.task_index)].name, n, true);
    wait_frame_ms_.clear();
    wait_ = Wait::recording;
    wait_started_ = now_s();
    return Status::ok();
  }
  if (cmd == "record-stop") {
    if (!e.recording.active()) return Status::error("record-stop: not recording");
    e.record_toggle_requested = true;
    wait_ = Wait::frames;
    wait_frames_ = 1;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "wait") {
    int n = 0;
    if (w.size() < 2 || !parse_int(w[1], &n)) return Status::error("wait N: N frames");
    wait_ = Wait::frames;
    wait_frame_ms_.clear();
    wait_frames_ = n;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "key") {
    if (Status st = need(1); !st) return st;
    auto k = parse_key(w[1]);
    if (!k) return Status::error("key: unknown key \"" + w[1] + "\"");
    key_ = *k;
    wait_ = Wait::frames;  // the key is down for one frame, then up; give the worker a moment
    wait_frames_ = 3;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "click") {
    int x = 0, y = 0;
    if (w.size() < 3 || !parse_int(w[1], &x) || !parse_int(w[2], &y)) return Status::error("click X Y");
    click_ = {x, y};
    wait_ = Wait::frames;
    wait_frames_ = 2;
    waited_frames_ = 0;
    return Status::ok();
  }
  if (cmd == "expect-above" || cmd == "expect-below") {  // a document number compared with VALUE
    if (Status st = need(2); !st) return st;
    auto got = get_by_path(e.doc.scene(), w[1]);
    if (!got) return got.status();
    double a = std::atof(got->c_str()), b = std::atof(w[2].c_str());
    bool ok = cmd == "expect-above" ? a > b : a < b;
    return ok ? Status::ok() : Status::error("expected " + w[1] + (cmd == "expect-above" ? " > " : " < ") + w[2] + ", got " + *got);
  }
  if (cmd == "expect") {
    if (Status st = need(1); !st) return st;
    const std::string& what = w[1];
    auto bad = [&](const std::string& got) { return Status::error("expected " + what + (w.size() > 2 ? " " + w[2] : "") + ", got " + got); };
    if (what == "frame") {
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect frame N");
      return e.snap.frame == n ? Status::ok() : bad(std::to_string(e.snap.frame));
    }
    if (what == "timeline") {
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect timeline N");
      return e.timeline_frame == n ? Status::ok() : bad(std::to_string(e.timeline_frame));
    }
    if (what == "selected") {
      if (Status st = need(2); !st) return st;
      int s = e.selected();
      std::string got = s < 0 ? "none" : e.doc.scene().objects[size_t(s)].name;
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "fps-above") {  // UI frames per second while the last wait ran (mean, and the slowest frame)
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect fps-above N");
      std::vector<double> ms(wait_frame_ms_.begin() + std::min<size_t>(1, wait_frame_ms_.size()), wait_frame_ms_.end());
      if (ms.empty()) return bad("no frames were measured");
      double sum = 0, worst = 0;
      for (double m : ms) sum += m, worst = std::max(worst, m);
      double fps = 1000.0 * double(ms.size()) / sum;
      std::printf("script: %zu UI frames while waiting: mean %.1f fps, slowest frame %.1f ms\n", ms.size(), fps, worst);
      return fps > n ? Status::ok() : bad(std::to_string(fps) + " fps");
    }
    if (what == "slowest-frame-below") {  // no UI frame during the last wait took this long [ms]
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect slowest-frame-below MS");
      double worst = 0;
      for (size_t i = 1; i < wait_frame_ms_.size(); ++i) worst = std::max(worst, wait_frame_ms_[i]);
      if (wait_frame_ms_.size() < 2) return bad("no frames were measured");
      return worst < n ? Status::ok() : bad(std::to_string(worst) + " ms");
    }
    if (what == "data-path") {  // Stats and About: how results reach the renderer ("cpu", "staging", "interop")
      if (Status st = need(2); !st) return st;
      const std::string got = e.data_path();
      const bool same = (w[2] == "cpu" && got.starts_with("CPU")) || (w[2] == "staging" && got.find("staging") != std::string::npos) ||
                        (w[2] == "interop" && got.find("interop") != std::string::npos);
      return same ? Status::ok() : bad(got);
    }
    if (what == "ghosts") {  // ghost trajectories drawn (one per iteration, the newest few)
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect ghosts N");
      int got = int(e.snap.ghost_paths.size());
      return got == n ? Status::ok() : bad(std::to_string(got));
    }
    if (what == "parameters") {  // parameter entries of the Optimization panel's task
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect parameters N");
      const auto& tasks = e.doc.scene().tasks;
      int got = tasks.empty() ? 0 : int(tasks[size_t(e.task_index)].parameters.size());
      return got == n ? Status::ok() : bad(std::to_string(got));
    }
    if (what == "loss-terms") {  // terms of the Optimization panel's task
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect loss-terms N");
      const auto& tasks = e.doc.scene().tasks;
      int got = tasks.empty() ? 0 : int(tasks[size_t(e.task_index)].loss.size());
      return got == n ? Status::ok() : bad(std::to_string(got));
    }
    if (what == "loss") {  // expect loss I FIELD VALUE
      int i = 0;
      if (w.size() < 5 || !parse_int(w[2], &i)) return Status::error("expect loss I FIELD VALUE");
      const auto& tasks = e.doc.scene().tasks;
      if (tasks.empty() || i < 0 || i >= int(tasks[size_t(e.task_index)].loss.size())) return bad("no term " + w[2]);
      std::string got = loss_field(tasks[size_t(e.task_index)].loss[size_t(i)], w[3]);
      char* end = nullptr;
      double a = std::strtod(got.c_str(), &end);
      bool a_num = !got.empty() && !*end;
      double b = std::strtod(w[4].c_str(), &end);
      bool b_num = !w[4].empty() && !*end;
      bool same = a_num && b_num ? std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}) : got == w[4];
      return same ? Status::ok() : Status::error("expected loss " + w[2] + " " + w[3] + " " + w[4] + ", got " + got);
    }
    if (what == "save-as") {
      if (Status st = need(2); !st) return st;
      std::string got = e.save_as_active() ? "true" : "false";
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "backend" || what == "sim-backend") {  // the document's settings.backend; the solver running
      if (Status st = need(2); !st) return st;
      const std::string& got = what == "backend" ? e.doc.scene().settings.backend : e.snap.backend;
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "backend-available") {  // expect backend-available NAME BOOL (prints why not)
      if (w.size() < 4) return Status::error("expect backend-available NAME BOOL");
      std::string why;
      bool ok = e.backend_available(w[2], &why);
      if (!ok) std::printf("script: backend %s disabled: %s\n", w[2].c_str(), why.c_str());
      return (ok ? "true" : "false") == w[3] ? Status::ok() : Status::error("expected backend " + w[2] + " available " + w[3] + (ok ? "" : ": " + why));
    }
    if (what == "path") {  // the document's file ("untitled": none)
      if (Status st = need(2); !st) return st;
      std::string got = e.doc.path().empty() ? "untitled" : e.doc.path();
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "recovery-offered") {
      if (Status st = need(2); !st) return st;
      std::string got = e.recovery_offered() ? "true" : "false";
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "prompt") {
      if (Status st = need(2); !st) return st;
      std::string got = e.prompt_active() ? "true" : "false";
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "recording") {
      if (Status st = need(2); !st) return st;
      std::string got = e.recording.active() ? "true" : "false";
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "dirty") {
      if (Status st = need(2); !st) return st;
      std::string got = e.doc.dirty() ? "true" : "false";
      return got == w[2] ? Status::ok() : bad(got);
    }
    if (what == "objects" || what == "undo") {
      int n = 0;
      if (w.size() < 3 || !parse_int(w[2], &n)) return Status::error("expect " + what + " N");
      int got = what == "objects" ? int(e.doc.scene().objects.size()) : int(e.doc.undo_count());
      return got == n ? Status::ok() : bad(std::to_string(got));
    }
    if (what == "loss-decreased") {
      const auto& l = e.snap.loss;
      if (l.size() < 2) return bad(std::to_string(l.size()) + " iterations");
      return l.back() < l.front() ? Status::ok() : bad("loss " + std::to_string(l.front()) + " -> " + std::to_string(l.back()));
    }
    if (what == "grad-check-ok") {
      double r = e.snap.grad_check_max_rel_err;
      return r >= 0 && r < 1e-2 ? Status::ok() : bad("max rel err " + std::to_string(r) + ": " + e.snap.grad_check_text);
    }
    if (what == "message") {
      if (Status st = need(2); !st) return st;
      std::string text;
      for (size_t i = 2; i < w.size(); ++i) text += (i > 2 ? " " : "") + w[i];
      for (const auto& m : e.messages)
        if (m.text.find(text) != std::string::npos) return Status::ok();
      return bad(e.messages.empty() ? "no messages" : "last message \"" + e.messages.back().text + "\"");
    }
    // a document field: numbers compare with a relative tolerance
    if (Status st = need(2); !st) return st;
    auto got = get_by_path(e.doc.scene(), what);
    if (!got) return got.status();
    char* end = nullptr;
    double a = std::strtod(got->c_str(), &end);
    bool a_num = !got->empty() && !*end;
    double b = std::strtod(w[2].c_str(), &end);
    bool b_num = !w[2].empty() && !*end;
    if (a_num && b_num) return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}) ? Status::ok() : bad(*got);
    return *got == w[2] ? Status::ok() : bad(*got);
  }
  if (auto r = robot_script_command(e, w)) {  // robots: robot_ui.h
    if (r->status && r->wait == RobotScriptWait::worker) worker_wait();
    if (r->status && r->wait == RobotScriptWait::frames) {
      wait_ = Wait::frames;
      wait_frames_ = 2;
      waited_frames_ = 0;
    }
    return r->status;
  }
  return Status::error("unknown command \"" + cmd + "\"");
}

}  // namespace adj::editor
