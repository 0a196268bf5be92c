#pragma once
// Script mode (`adjoint --script FILE`): the real editor driven by a small command file,
// one command a line, so tests can use it the way a person would. The viewer calls
// update() once per frame; commands that wait (play, optimize, check-grad, screenshot)
// keep the frame loop running while they do.
//
//   open PATH   try-open PATH (may fail: a message)   select NAME|none   click-object NAME
//            set PATH VALUE      (fields.h paths)
//   play N                  optimize N [TASK]         check-grad [TASK]
//   toggle OVERLAY          (contacts velocity springs wireframe grid shadows particles ghosts
//                            optimized, or a panel: outliner inspector simulation
//                            optimization visualization stats messages, the attach window)
//   undo   redo   duplicate   delete   save [PATH]   screenshot PATH   wait N   quit
//   autosave   restore   discard-recovery       (the recovery file, editor.h)
//   scrub N (timeline frame, -1 = newest)     click-message TEXT (as clicking it)
//   expect timeline N   expect prompt BOOL (the unsaved-changes prompt is up)
//   drop PATH (as dropping a file on the window)   gradient none|x0|v0|u (arrows)
//   rename OLD NEW   drag-gizmo AXIS PIXELS (drag an axis handle of the selection's gizmo)
//   ctrl-drag-object NAME DX DY (MuJoCo pull, from the object's centre, while playing)
//   key [ctrl+][shift+]NAME (space right backspace delete home escape enter f f1 g r x y z w
//                            a d n o q p s minus period 0-9)
//   click X Y               (a left click in the viewport: picks)
//   type TEXT               (characters into the widget that has the keyboard, e.g. a path field)
//   click-ui NAME           (a left click on a widget the panels noted, editor.h ui_items:
//                            open/Open open/path save/Save import/Import media/Choose ...)
//   dialog open|save-as|import|media (File > Open, Save As, Import OBJ, Screenshots and
//                            recordings folder: the file browser)
//   note-ui NAME KEY        expect ui-moved NAME KEY BOOL (the widget's rect against the noted one)
//   expect ui-inside NAME BOOL (drawn whole inside its window: no scrolling to it)
//   expect title TEXT       (the window title)   expect file PATH (exists)
//   expect PATH VALUE | expect frame N | expect selected NAME|none | expect dirty BOOL
//   expect objects N | expect undo N | expect loss-decreased | expect grad-check-ok
//   expect recovery-offered BOOL | expect fps-above N (mean UI fps during the last wait)
//   expect tasks N | expect task NAME | expect task-values N (kept by Apply)
//   expect iterations N | expect opt-phase PHASE
//   expect can-apply BOOL (the Apply button) | expect grad-check-shown BOOL
//   expect sim-error none|TEXT | expect no-message TEXT
//   expect slowest-frame-below MS (no UI frame during the last wait took that long)
//   expect scene-scale X    (the size the viewport's scene was last drawn at: 0.7 moving on lavapipe)
//   expect-above PATH VALUE | expect-below PATH VALUE
//   expect message TEXT     (a message containing TEXT was shown)
//   record PATH [panels]    (as Ctrl+R: lockstep video of the viewport)   record-stop
//   record-optimization PATH N [panels]  (the Optimization panel's Start with "record": N
//                            iterations, each rollout in turn; waits until the file is complete)
//   expect recording BOOL   apply-optimized (the optimizer's parameters into the scene)
//   loss-add KIND OBJECT [TARGET]   loss-remove I
//   loss-set I kind|object|target|body|step|weight|value|axis.x|direction.x VALUE
//                            (the Optimization panel's loss terms; refused edits become messages)
//   expect loss-terms N     expect loss I FIELD VALUE
//   prompt save|discard|cancel (the unsaved-changes prompt's buttons)
//   save-as PATH|cancel     (the Save As dialog)    expect save-as BOOL    expect path PATH|untitled
//   backend NAME            (the backend combo; a disabled entry fails)
//   expect backend NAME (the document's)   expect sim-backend NAME (the worker's solver)
//   expect backend-available NAME BOOL
//   new   template FILE (File > New from template, assets/scenes/FILE)   revert
//   add TYPE NAME [FILE] (the Add menu: particle lattice cloth cloth-obj soft soft-obj ground
//            plane sphere box capsule mesh target body-box body-sphere body-capsule body-mesh urdf)
//   shape NAME KIND (a collider's shape)   task-add NAME HORIZON   task-remove NAME
//   task-rename OLD NEW   task-duplicate NAME   task-select NAME   task-horizon N
//   pick-iteration N|best (a click on the loss plot: what Apply applies)
//   task-policy ROBOT|off  (the controls combo: a policy of ROBOT, or per-frame inputs)
//   task-policy-set hidden W,W|phases N|period S|scale X|action-scale X,X..|action-offset X,X..|start-q X|
//                   start-qd X  (action-scale, action-offset: one number per action, or none)
//   task-obs-add KIND [BODY|OBJECT]  task-obs-remove I  task-obs-set I kind|body|object|scale|axis|direction V
//                            (the policy's observation terms; axis, direction: X,Y,Z; BODY: the robot's first;
//                            object_position/velocity: OBJECT, the first object with particles)
//   task-termination BODY HEIGHT|off (the policy's "end when": the body's centre of mass below HEIGHT)
//   expect obs-terms N   expect obs I kind|body|object|scale VALUE   expect termination off|ROBOT BODY HEIGHT
//   expect action-scale X,X..|none   expect action-offset X,X..|none
//   expect method bptt|shac|ahac|pods1|pods2 (what Start uses for the panel's task)
//   attach ADDRESS [TOKEN]  (File > Attach to run...: waits until the run's scene is loaded)
//   attach-wait N           (until N iterations of the attached run have arrived, or it ended)
//   attach-replay           (the newest rollout in the viewport)   attach-control pause|resume|stop
//   detach                  expect attached BOOL   expect attach-replaying BOOL
//   expect attached-iterations-above N (the loss plot's points)   expect ghosts-above N
//   attach-replay-frame N   (the replay held at frame N)
//   expect shown-contacts N   expect shown-contacts-above N   expect shown-arrows-above N (what
//                            the viewport is given to draw now: contacts, non-zero gradient or
//                            velocity arrows)   expect step-grad-norms N (the |dL/dx_t| plot's points)
//   plot-tab loss, returns, |grad| or |dL/dx_t| (the Optimization panel's plot tab; returns: SHAC, AHAC)
//   expect train-returns-above N (SHAC, AHAC: iterations with a training return, an episode having
//                            ended)   expect train-return-rose (the last such return above the first)
//   try COMMAND ... (the command may be refused: its error is printed, the script goes on)
// The commands are tables by panel (script_commands.h).
// ${NAME} expands environment variables. # starts a comment.
// Exit codes: 0 all done, 1 a bad script line or failed action, 4 an expectation failed.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "app/editor/script_read.h"
#include "engine/core/status.h"

namespace adj::editor {

class Editor;

struct ScriptMouse {
  float x = 0, y = 0;  // [px]
  bool down = false;   // left button
  bool ctrl = false;
};

struct ScriptKey {
  int key = 0;  // GLFW key code
  bool ctrl = false, shift = false;
};

class Script {
 public:
  static Result<Script> load(const std::string& path);

  enum class Progress { running, done, failed };
  // run commands until one must wait; `frame` counts UI frames
  Progress update(Editor& editor);
  int exit_code() const { return exit_code_; }

  // requests for the viewer, taken once
  std::optional<std::string> take_screenshot();  // capture this frame to that path
  std::optional<ScriptKey> take_key();           // press this key during this frame
  std::optional<std::string> take_text();        // type these characters during this frame
  std::optional<std::pair<int, int>> take_click();
  std::optional<ScriptMouse> take_mouse();  // the mouse during this frame
  void screenshot_written(bool ok, const std::string& error);

 private:
  friend struct ScriptCall;  // the commands' access to waits and input (script_commands.h)
  using Line = ScriptLine;
  Status run(Editor& editor, const Line& line);
  bool fail(const Line& line, const std::string& why, int code);

  std::string path_;
  std::vector<Line> lines_;
  std::map<std::string, std::vector<double>> notes_;  // values a script noted (ScriptCall::notes)
  size_t next_ = 0;
  enum class Wait { none, frames, worker, screenshot, mouse, recording, until } wait_ = Wait::none;
  std::function<bool(Editor&)> until_;  // Wait::until: what is waited for, and its words
  std::string until_what_;
  std::vector<ScriptMouse> mouse_track_;  // one entry per frame, played in order
  size_t mouse_next_ = 0;
  void drag(glm::vec2 from, glm::vec2 to, bool ctrl, int frames);
  int wait_frames_ = 0;
  int waited_frames_ = 0;
  double wait_started_ = 0;
  std::optional<std::string> screenshot_, deferred_screenshot_;
  bool screenshot_pending_ = false;
  std::optional<ScriptKey> key_;
  std::optional<std::string> text_;
  std::optional<std::pair<int, int>> click_;
  int exit_code_ = 0;
  std::vector<double> wait_frame_ms_;                // UI frame times during the last worker wait
  int sim_frame_at_clear_ = 0, sim_frame_last_ = 0;  // the simulation's frame then and at the last wait's end
};

}  // namespace adj::editor
