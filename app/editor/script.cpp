#include "app/editor/script.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/editor/editor.h"
#include "app/editor/robot_ui.h"
#include "app/editor/script_commands.h"
#include "app/editor/script_read.h"
#include "engine/scene/compile.h"

namespace adj::editor {

namespace {

// a wait longer than this fails the script; the sanitizers run the worker 5-10x slower
#ifdef ADJ_SANITIZE
constexpr double k_wait_limit_s = 2400.0;
#else
constexpr double k_wait_limit_s = 300.0;
#endif
const std::string k_wait_limit_text = std::to_string(int(k_wait_limit_s)) + " s";

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

bool parse_int(const std::string& s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end) return false;
  *out = int(v);
  return true;
}

}  // namespace

Result<Script> Script::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::error(path + ": cannot read the script");
  Script s;
  s.path_ = path;
  s.lines_ = read_script_lines(f);
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
std::optional<std::string> Script::take_text() {
  auto t = text_;
  text_.reset();
  return t;
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
    case Wait::none:
      break;
    case Wait::frames:
      wait_frame_ms_.push_back(e.ui_frame_ms);
      sim_frame_last_ = e.snap.frame;
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
      sim_frame_last_ = e.snap.frame;
      if (!e.worker.idle() || e.landscape.job.view().running) {
        if (now_s() - wait_started_ > k_wait_limit_s) {
          fail(lines_[next_ - 1], "still waiting for the worker after " + k_wait_limit_text, 1);
          return Progress::failed;
        }
        waited_frames_ = 0;
        return Progress::running;
      }
      if (++waited_frames_ < 3) return Progress::running;
      break;
    case Wait::recording:  // a "record optimization" video, until it has stopped by itself
      wait_frame_ms_.push_back(e.ui_frame_ms);
      sim_frame_last_ = e.snap.frame;
      if (e.recording.active() || e.record_toggle_requested || e.before_after_record_pending) {
        if (now_s() - wait_started_ > k_wait_limit_s) {
          fail(lines_[next_ - 1], "the recording of the optimization still runs after " + k_wait_limit_text, 1);
          return Progress::failed;
        }
        return Progress::running;
      }
      break;
    case Wait::until:
      if (!until_(e)) {
        if (now_s() - wait_started_ > k_wait_limit_s) {
          fail(lines_[next_ - 1], "still waiting for " + until_what_ + " after " + k_wait_limit_text, 1);
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
    std::printf("script: %s\n",
                [&] {
                  std::string s;
                  for (auto& w : line.words) s += (s.empty() ? "" : " ") + w;
                  return s;
                }()
                    .c_str());
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

// ---- what a command may ask of the script (script_commands.h)

std::map<std::string, std::vector<double>>& ScriptCall::notes() { return script.notes_; }

Status ScriptCall::need(size_t n) const {
  if (w.size() < n + 1) return Status::error(w[0] + ": expected " + std::to_string(n) + " argument(s)");
  return Status::ok();
}

int ScriptCall::find_object(const std::string& name) const {
  const auto& objs = e.doc.scene().objects;
  for (size_t i = 0; i < objs.size(); ++i)
    if (objs[i].name == name) return int(i);
  return -1;
}

int ScriptCall::arg_int(size_t i, bool* ok) const {
  int v = 0;
  *ok = i < w.size() && parse_int(w[i], &v);
  return v;
}

std::string ScriptCall::rest(size_t from) const {
  std::string s;
  for (size_t i = from; i < w.size(); ++i) (s += (i > from ? " " : "")) += w[i];
  return s;
}

void ScriptCall::wait_frames(int n) {
  script.wait_ = Script::Wait::frames;
  script.wait_frames_ = n;
  script.waited_frames_ = 0;
}

void ScriptCall::wait_worker() {
  script.wait_frame_ms_.clear();
  script.sim_frame_at_clear_ = script.sim_frame_last_ = e.snap.frame;
  script.wait_ = Script::Wait::worker;
  script.waited_frames_ = 0;
  script.wait_started_ = now_s();
}

void ScriptCall::wait_until(std::function<bool(Editor&)> done, std::string what) {
  script.wait_ = Script::Wait::until;
  script.until_ = std::move(done);
  script.until_what_ = std::move(what);
  script.wait_started_ = now_s();
}

void ScriptCall::wait_recording() {
  script.wait_ = Script::Wait::recording;
  script.wait_started_ = now_s();
}

void ScriptCall::click(int x, int y) {
  script.click_ = {x, y};
  wait_frames(2);
}

void ScriptCall::key(const ScriptKey& k) {
  script.key_ = k;
  wait_frames(3);  // the key is down for one frame, then up; give the worker a moment
}

void ScriptCall::type(const std::string& text) {
  script.text_ = text;
  wait_frames(2);
}

void ScriptCall::drag(glm::vec2 from, glm::vec2 to, bool ctrl, int frames) { script.drag(from, to, ctrl, frames); }

void ScriptCall::screenshot(const std::string& path) {
  // let the panels settle for two frames, then capture
  wait_frames(2);
  script.deferred_screenshot_ = path;
  script.screenshot_pending_ = true;
}

const std::vector<double>& ScriptCall::wait_frame_ms() const { return script.wait_frame_ms_; }
void ScriptCall::clear_frame_ms() {
  script.wait_frame_ms_.clear();
  script.sim_frame_at_clear_ = script.sim_frame_last_ = e.snap.frame;
}
int ScriptCall::wait_sim_frames() const { return script.sim_frame_last_ - script.sim_frame_at_clear_; }

// ---- dispatch: the command tables by panel, then the robots' commands (robot_ui.h)

Status Script::run(Editor& e, const Line& line) {
  if (line.words[0] == "try" && line.words.size() > 1) {  // try COMMAND ...: a refusal is expected
    Line rest{line.number, {line.words.begin() + 1, line.words.end()}};
    if (Status st = run(e, rest); !st) std::printf("script: refused as expected: %s\n", st.message().c_str());
    return Status::ok();
  }
  ScriptCall call{*this, e, line.words};
  const std::string& cmd = line.words[0];
  for (auto table :
       {script_file_commands(), script_edit_commands(), script_view_commands(), script_simulation_commands(),
        script_optimization_commands(), script_attach_commands(), script_expect_commands()})
    for (const ScriptCommand& c : table)
      if (cmd == c.name) return c.fn(call);
  if (auto r = robot_script_command(e, line.words)) {
    if (r->status && r->wait == RobotScriptWait::worker) call.wait_worker();
    if (r->status && r->wait == RobotScriptWait::frames) call.wait_frames(2);
    return r->status;
  }
  return Status::error("unknown command \"" + cmd + "\"");
}

}  // namespace adj::editor
