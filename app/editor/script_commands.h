#pragma once
// The script's commands (script.h lists them), as tables grouped by the panel whose
// actions they perform: one function per command, found by name (as MuJoCo's collision
// table names one function per pair). Private to app/editor/script*.cpp.
#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "app/editor/script.h"
#include "engine/core/status.h"

namespace adj::editor {

class Editor;

// one script line being run: the editor, the words, and what a command may ask of the
// script (waits, input events); implemented in script.cpp
struct ScriptCall {
  Script& script;
  Editor& e;
  const std::vector<std::string>& w;  // w[0] is the command

  Status need(size_t n) const;                     // at least n arguments
  int find_object(const std::string& name) const;  // index or -1
  int arg_int(size_t i, bool* ok) const;           // w[i] as an integer
  std::string rest(size_t from) const;             // w[from..] joined by spaces (names with spaces)

  void wait_frames(int n);  // n UI frames
  void wait_worker();       // until the worker is idle, then 3 frames
  void wait_recording();    // until the recording has stopped by itself
  void wait_until(std::function<bool(Editor&)> done, std::string what);  // until done() (300 s at most)
  void click(int x, int y);
  void key(const ScriptKey& k);
  void type(const std::string& text);  // typed into the focused widget during one frame
  void drag(glm::vec2 from, glm::vec2 to, bool ctrl, int frames);
  void screenshot(const std::string& path);          // after 2 frames
  const std::vector<double>& wait_frame_ms() const;  // UI frame times during the last wait
  void clear_frame_ms();
  int wait_sim_frames() const;                          // simulation frames the worker published during the last wait
  std::map<std::string, std::vector<double>>& notes();  // values noted for a later expect
};

using ScriptFn = Status (*)(ScriptCall&);

struct ScriptCommand {
  const char* name;
  ScriptFn fn;
};

// the tables, by panel
std::span<const ScriptCommand> script_file_commands();          // open save new template revert autosave ...
std::span<const ScriptCommand> script_edit_commands();          // select set undo redo add delete rename shape ...
std::span<const ScriptCommand> script_view_commands();          // click key drag toggle screenshot wait record ...
std::span<const ScriptCommand> script_simulation_commands();    // play scrub backend
std::span<const ScriptCommand> script_optimization_commands();  // optimize check-grad loss-* task-* apply ...
std::span<const ScriptCommand> script_attach_commands();        // attach attach-wait attach-replay detach ...
std::span<const ScriptCommand> script_expect_commands();        // expect, expect-above, expect-below

// `expect WHAT ...`: by WHAT (frame, selected, loss-terms, ...), else a document field path
Status script_expect(ScriptCall& c);

}  // namespace adj::editor
