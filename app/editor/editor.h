#pragma once
// The editor's model of itself: the document, the worker, the selection, the compiled
// scene the viewport draws, what the panels show, and every action a menu, a key, a panel
// or a script can take. Panels (panels.cpp) draw it with ImGui; the viewer (viewer.cpp)
// owns the window and the renderer and calls frame() once per frame.
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/editor/attach.h"
#include "app/editor/document.h"
#include "app/editor/file_browser.h"
#include "app/editor/landscape_ui.h"
#include "app/editor/recording.h"
#include "app/editor/robot_ui.h"
#include "app/editor/ui_items.h"
#include "app/editor/worker.h"
#include "app/scene_view.h"
#include "render/camera.h"
#include "render/draw_list.h"

#include <glm/glm.hpp>

namespace adj::editor {

enum class Severity { info, warning, error };

struct Message {
  Severity severity = Severity::info;
  std::string text;
  int object = -1;  // object to select when clicked, or -1
  int frame = -1;   // timeline frame to jump to, or -1
};

struct PanelVisibility {
  bool outliner = true, inspector = true, simulation = true, optimization = true;
  bool visualization = false, stats = false, messages = true;
  // what the panels that size to their content (simulation, visualization, stats) drew last
  // frame [px]: the columns stack them without clipping their last row
  float simulation_h = 230.0f, visualization_h = 200.0f, stats_h = 150.0f;
  float simulation_window_h = 0.0f;  // the Simulation panel's height as laid out last frame [px]
  // what Tab / Shift+Tab hid, to show again: outliner, inspector, visualization; simulation,
  // optimization, stats
  bool left_hidden[3] = {true, true, false}, right_hidden[3] = {true, true, false};
};

struct ViewSettings {
  app::Overlays overlays;
  bool grid = true;
  bool shadows = true;
  bool velocity_arrows = false;
  bool gradient_arrows = false;  // dL/dx0 of the last optimizer iteration (particle initial positions)
  bool show_optimized = false;   // show the optimizer's last rollout end state instead of the simulation
  bool ghosts = false;           // ghost trajectories of earlier optimizer iterations
  bool follow = false;           // the camera's target follows the selected object (or body) as it moves
  // on a CPU rasterizer (lavapipe), a viewport that changes every frame (playing, orbiting) is
  // drawn at 0.7x the size per axis and stretched; once it holds still it is drawn at full size
  // again, and screenshots and videos always are
  bool lower_res_moving = true;
  int gradient = 0;  // arrows of the last iteration's gradient: 0 none, 1 dL/dx0, 2 dL/dv0,
                     // 3 dL/du (control force) at the scrubbed frame
};

class Editor {
 public:
  Editor();
  ~Editor();

  // file actions; errors become messages and leave the current scene untouched
  bool open(const std::string& path);
  bool save(const std::string& path);  // empty: the document's own path
  void new_scene();
  // File > New from template: a reference scene (authoring.h templates()) as a new,
  // untitled document; false (a message) when it cannot be read
  bool new_from_template(const std::string& file);
  // File > Revert: the document's file as it is on disk (false when untitled or unreadable)
  bool revert();
  bool import_obj(const std::string& path);  // adds a cloth object with this mesh

  // the Add menu (authoring.h): an object of that kind on the ground in front of the camera,
  // uniquely named (`name` empty: the entry's id), selected, one undo step. `file` (mesh,
  // URDF) is stored relative to the scene's folder. False, with a message, when refused.
  bool add_object(const std::string& entry_id, const std::string& name = "", const std::string& file = "");
  // tasks (Optimization panel): each one undo step; false with a message when refused
  bool add_task(const std::string& name, int horizon);
  bool remove_task(int index);
  bool rename_task(int index, const std::string& name);
  bool duplicate_task(int index);
  int find_task(const std::string& name) const;                           // index, or -1
  bool set_task_horizon(int index, int horizon, uint64_t merge_key = 0);  // frames >= 1

  // the compiled document, recompiled (and sent to the worker) when the revision changes
  void sync();
  bool has_scene() const { return compiled_ != nullptr; }
  const scene::CompiledScene* compiled() const { return compiled_.get(); }
  // the Simulation panel's worlds 1.. drawn in a grid beside world 0 into `list` (built by view()
  // for world 0); hidden(id): an object not drawn (app/editor/world_grid.cpp)
  void add_world_copies(render::DrawList& list, const app::Overlays& overlays,
                        const std::function<bool(render::ObjectId)>& hidden);
  int world_count = 1;  // the Simulation panel's (Worker::set_world_count)
  // the world the Simulation panel inspects (0..world_count-1): outlined in the grid, its
  // randomized factors and the selected object's place in it shown (world_grid.cpp)
  int inspected_world = 0;
  void draw_inspected_world();  // the Simulation panel's rows for it
  // the world count changed: the camera takes in every world at the next frame (set_world_count)
  bool world_fit_pending = false;
  void set_world_count(int n);
  app::SceneView* view() {  // with the selection set, for its highlight
    if (view_) view_->set_selected(render::ObjectId(selected_ + 1));
    return view_.get();
  }
  // the state the viewport draws: the scrubbed timeline frame, the optimizer's result, or
  // the newest simulated frame
  const State& display_state();
  const Contacts* display_contacts();
  // the per-particle vector field the arrows show (gradient or velocity), or null; its
  // largest magnitude goes to the legend
  const Array<vec3<float>>* arrow_field(const State& shown);
  float legend_max = 0.0f;

  // edit actions
  void select(int index) { selected_ = index; }
  int selected() const { return selected_; }
  void undo();
  void redo();
  void duplicate_selected();
  void delete_selected();
  // script/test access: set a field by path (fields.h); one undo step
  Status set_field(const std::string& path, const std::string& value);

  // New/Open/Quit ask first when the document has unsaved changes
  enum class Pending { none, new_scene, new_template, open, revert, quit };
  void request(Pending action, const std::string& path = "");
  bool quit_confirmed() const { return quit_confirmed_; }
  bool prompt_active() const { return pending_ != Pending::none; }  // the unsaved-changes prompt is up
  // the prompt's buttons. Save on an untitled scene opens Save As; the pending action goes
  // on once that has saved, and cancelling Save As keeps the scene as it is
  enum class Answer { save, discard, cancel };
  void answer_prompt(Answer answer);
  bool save_as_active() const { return save_as_active_; }  // the Save As dialog is up
  // the Save As dialog's Save (a path) or Cancel (empty); false when nothing was saved
  bool answer_save_as(const std::string& path);
  void open_save_as();  // File > Save As, Ctrl+Shift+S
  // the file browsers (file_browser.h) of File > Open (Ctrl+O), Save As (open_save_as),
  // Import OBJ, Screenshots and recordings folder, Import URDF/MJCF
  enum class FileDialog {
    open,
    save_as,
    import_obj,
    media,
    import_robot,
    checkpoint_save,
    checkpoint_load,
    checkpoint_evaluate
  };
  void show_dialog(FileDialog d);
  // where Ctrl+P screenshots and Ctrl+R recordings go: the folder chosen (File >
  // Recordings folder), else the scene's folder, else $XDG_VIDEOS_DIR, else ~/Videos
  // (the viewer creates it when missing). Never the current folder unasked.
  std::string media_folder() const;
  std::string media_dir;  // the folder chosen; empty: the default above

  // the loss terms of the Optimization panel's task (task_index): each one undo step; a
  // term that names no object, or a missing target where its kind needs one, is refused
  // with a message
  bool add_loss_term(const scene::LossTerm& term);
  bool remove_loss_term(int index);
  bool set_loss_term(int index, const scene::LossTerm& term, uint64_t merge_key = 0);
  scene::LossTerm default_loss_term() const;  // what the panel's "Add term" adds
  // a task's parameters as a policy of `robot` (observing its joint state and sine phases,
  // driving its actuators; PolicySpec's network and randomized starts) instead of its
  // per-frame inputs, or back to per-frame inputs (`robot` empty); one undo step
  bool set_task_policy(int index, const std::string& robot);
  // the bodies of the compiled robot `robot`, in model order (empty: no such robot compiled)
  std::vector<std::string> robot_bodies(const std::string& robot) const;
  // the compiled objects with particles, in document order (what an object_* observation reads)
  std::vector<std::string> particle_objects() const;
  // per-frame actuator inputs of an imported robot bounded by its file's ctrlrange (a message says so)
  void bound_inputs(scene::ParamSpec& p);

  // simulation backends: "cpu" always; "cuda" when engine cuda_available() (else `why`)
  bool backend_available(const std::string& name, std::string* why = nullptr) const;
  bool set_backend(const std::string& name);  // the Simulation panel's combo; one undo step
  void drop_file(const std::string& path);    // a file dropped on the window: .obj imports, else opens
  void handle_keys();                         // editor shortcuts (not while a text field has the keyboard)
  void frame_selection(float aspect);
  // width / height of the part of the window the side panels leave free (camera fitting)
  // the Optimize toggle of the inspector: parameter kind k of an object in the current task
  // (one undo step); false when nothing changed (no task, already so)
  bool set_optimized(int object, scene::ParamKind k, bool on);
  // how simulation results reach the renderer now (render/interop.h SharePath), for Stats and About
  const char* data_path() const;
  float free_aspect(float width, float height) const;
  // the columns [x0, x1) of the window that the side panels leave free (they cover the rest)
  std::pair<float, float> free_columns(float width) const;
  bool screenshot_requested = false;  // Ctrl+P: the viewer writes the next frame
  // Ctrl+R or the Record button: the viewer starts or stops `recording` (it knows the size)
  bool record_toggle_requested = false;
  RecordingOptions record_options;
  Recording recording;
  bool show_help = false;

  // autosave: every minute while there are unsaved changes, the document goes to a
  // recovery file ($XDG_STATE_HOME/adjoint, else ~/.local/state/adjoint); the next start
  // offers to restore it. Saving, or discarding changes on New/Open/Quit, removes it.
  static constexpr double k_autosave_period_s = 60.0;
  static std::string recovery_dir();
  void autosave_tick(double now_s);
  bool write_recovery();
  void check_recovery();  // at start: offer the recovery file if there is one
  bool recovery_offered() const { return recovery_offered_; }
  bool restore_recovery();
  void discard_recovery();

  // viewport transform tools (transform.cpp): a translate gizmo with axis handles on the
  // selection, and Blender's modal keys: G grab, R rotate, S scale, then X/Y/Z for an axis
  // (rotate: none = the view axis; scale is uniform), typed numbers (a distance, degrees, a
  // factor), Enter or click; Esc or right click cancels. Rotation and scale act about the
  // selection's centre. Each drag or key operation is one undo step. Returns true when it
  // used the mouse this frame (the camera then leaves it alone).
  bool transform_tools(float width, float height);
  bool grabbing() const { return grab_active_; }
  enum class GrabMode { move, rotate, scale };
  // the gizmo's centre and one axis tip on screen, as drawn last frame (false when none)
  bool gizmo_handle(int axis, glm::vec2* centre, glm::vec2* tip) const;
  // MuJoCo's Ctrl+drag: a spring pulls the particle under the cursor towards it while the
  // simulation plays. start_pull() takes the picked item; update_pull() follows the mouse
  // each frame and releases with the button (true while pulling).
  void start_pull(const render::DrawList& list, render::ObjectId object, uint32_t element);
  bool update_pull(float width, float height);

  // the optimizer on the task named `task` for `iterations` (<= 0: the task's own count).
  // With `record`, a recording of its iterations starts with it (record_options; a new
  // file when the path is empty) and stops when the last iteration is in the file.
  // `method`: the task's own (method_of) unless given
  void start_optimization(const std::string& task, int iterations, bool record,
                          const std::optional<OptMethod>& method = std::nullopt);
  // a SHAC run's checkpoint folder (checkpoint_ui.cpp), the same as `adjoint optimize
  // --checkpoint-dir` writes and `--resume` reads: saved from the run in the Optimization
  // panel, or continued there: its task, copies, seed and window count taken from the file
  void save_checkpoint(const std::string& dir);
  bool continue_from_checkpoint(const std::string& dir);
  // a policy run's checkpoint (SHAC, AHAC or PPO) evaluated as `adjoint render --policy` does
  // it and its episode replayed in the viewport (Ctrl+R records it); the outcome is a message.
  // Returns the replay's request (Snapshot::replay.request once answered)
  uint64_t evaluate_checkpoint(const std::string& dir);
  void draw_checkpoint_buttons(bool running);
  bool record_optimization = false;          // the Optimization panel's option next to Start
  bool record_optimization_pending = false;  // the viewer starts that recording this frame

  // messages panel
  void message(Severity s, std::string text, int object = -1, int frame = -1);
  // the optimizer's parameters into the document, as one undo step (what the document
  // cannot hold becomes warnings); false when there is nothing to apply. It applies the best
  // iteration, or `apply_iteration` when one was picked on the loss plot (-1: the best)
  bool apply_optimized();
  int apply_iteration = -1;
  double applied_loss = 0;  // the loss of what the last Apply wrote
  // the replay of an optimization's iterate (the Optimization panel's Replay): the viewport
  // shows that rollout, scrubbed or played at the panel's speed, instead of the simulation;
  // a recording made meanwhile records it (one rollout frame per video step)
  struct ReplayView {
    bool active = false, playing = false;
    int frame = 0;
    double carry = 0;  // simulation time not yet shown [s]
  } replay;
  // where the viewport shows the selection now: its particles' centre, its selected body's
  // (else its base's) centre of mass, or its position (camera follow)
  std::optional<glm::vec3> shown_selection_center();
  void follow_selection();  // ViewSettings::follow: moves the camera's target there
  // Tab / Shift+Tab (as MuJoCo's simulate): hide or show the left / right panel column
  void toggle_left_panels();
  void toggle_right_panels();
  bool fullscreen_requested = false;  // F11: the viewer switches the window
  // why an overlay that is switched on shows nothing yet (empty when it shows something)
  std::string overlay_hint() const;
  void start_replay();  // the iteration picked on the loss plot (apply_iteration), else the best
  void stop_replay();
  void advance_replay(double seconds);  // playing: real time at the speed slider
  void step_replay(int frames);         // a recording's video step; stops playing at the end
  // the replay asked for last has arrived (not an earlier one still in the snapshot)
  bool replay_ready() const {
    return replay.active && snap.replay.request == replay_request_ && snap.replay.frames > 0;
  }
  // Record before/after (the Optimization panel): one video of the first iteration's replay,
  // then the best's, captioned "before" and "after" with their iteration and loss
  enum class BeforeAfter { off, before, after };
  BeforeAfter before_after = BeforeAfter::off;
  bool before_after_record_pending = false;  // the viewer starts the recording once the replay is ready
  Status start_before_after();
  // the viewer at the recorded replay's last frame: true when the video goes on (the best's replay)
  bool continue_before_after();
  // what clicking a message does: select its object, move the timeline to its frame
  void activate_message(const Message& m);

  // ui (panels.cpp)
  void draw_panels(float menu_height);
  void draw_menu_items_file(bool* quit_requested);
  void draw_menu_items_edit();
  void draw_menu_items_view();
  void draw_menu_items_add();  // the Add menu's entries (authoring_ui.cpp)
  // a collider's shape (the inspector's combo): one undo step; false when nothing changed
  bool set_collider_kind(int index, scene::ColliderKind kind);

  Document doc;
  Worker worker;
  Snapshot snap;          // copied from the worker each frame
  RobotUi robot;          // robots: selected body, URDF import prompt (robot_ui.h)
  LandscapeUi landscape;  // View > Landscape (landscape_ui.h)
  // File > Attach to run... (attach_ui.cpp): a served run shown as the editor's own
  // optimization: its scene (from the run's hello), the Optimization panel's plots and
  // progress, the newest rollout replayed in the viewport. Detach leaves the run alone.
  RunAttachment attachment;
  AttachView attached;  // copied each frame (update_attachment)
  struct AttachReplay {
    bool active = false, playing = true;  // playing: one rollout frame per UI frame, looped
    int frame = 0;
    std::uint64_t number = 0;  // AttachView::rollouts of the rollout shown
    app::wire::Rollout rollout;
  } attach_replay;
  bool attach_window = false;  // the Attach to run window
  char attach_address[128] = "127.0.0.1:5555", attach_token[128] = "";
  Status attach_run(const std::string& address, const std::string& token);
  void detach_run();
  void update_attachment();    // each frame, after the worker's snapshot
  bool start_attach_replay();  // the newest rollout, looped; false when none has arrived
  void draw_attach_window();
  // the attached replay's frame as the viewport draws it, while it fits the scene (else null):
  // its state, its particles' contacts and its robots' (what the run sent with the rollout)
  const State* attach_display_state();
  const Contacts* attach_display_contacts();
  const RigidContactsT<float>* attach_display_body_contacts();
  PanelVisibility panels;
  ViewSettings view_settings;
  render::Camera camera;
  bool camera_fit_pending = true;  // frame the scene at the next opportunity
  int timeline_frame = -1;         // scrubbed frame, -1: follow the newest
  int task_index = 0;              // optimization panel's task
  std::string plot_tab_request;    // a script's plot-tab: the plot tab to select at the next frame
  int opt_iterations = 0;          // 0: the task's own count
  // how each policy task (by name) is trained: the panel's method combo. A task without a
  // policy is always trained by BPTT; a new document starts every task from BPTT
  std::map<std::string, OptMethod> task_methods;
  OptMethod method_of(const std::string& task) const;  // what Start uses for it
  std::deque<Message> messages;
  std::vector<std::string> recent_files;
  UiItems ui_items;        // named widgets as drawn this frame (script click-ui)
  double ui_frame_ms = 0;  // the UI's own frame time (stats)
  // the size the viewport's scene was last drawn at, per axis (ViewSettings::lower_res_moving)
  float drawn_scene_scale = 1.0f;
  double speed = 1.0;

  // "Adjoint - NAME.json" (or "untitled"): follows the document's file after Save As and Open
  std::string title() const;

  // the optimization's results (loss curve, ghosts, iterates, Apply, Replay) belong to the
  // scene it started from: they show while the document is that scene again (an edit
  // undone), and are hidden, not dropped, while it differs in its objects (a delete, an add)
  bool opt_fits() const;
  // the scene's objects, particles or bodies are not those the optimization ran on (its
  // ghosts are not drawn)
  bool opt_objects_differ() const { return opt_objects_differ_; }
  // the attached run's results (its gradient) belong to the scene it sent: the document until it is edited
  bool attach_fits() const {
    return attachment.attached() && attach_scene_loaded_ && doc.revision() == attach_revision_;
  }

 private:
  void after_load(const std::string& path);
  void replace_document(scene::Scene scene, const std::string& path);  // a new document, continuing revisions
  scene::V3 add_point() const;         // where Add puts an object: the ground under the camera's target
  char add_file_[512] = "";            // the Add menu's file prompt
  const char* add_pending_ = nullptr;  // the entry waiting for its file
  char task_name_[64] = "task";
  int task_horizon_ = 60;
  void draw_add_menu();               // the entries (menu bar, outliner context menu, Shift+A popup)
  bool add_popup_requested_ = false;  // Shift+A over the viewport
  void draw_collider_shape(int index);
  // after the loss plot (its hovered iteration and frame): a click picks what Apply applies (right click: the best)
  void pick_on_loss_plot(int hovered, float x0, float x1, float y0, float y1);
  void draw_add_file_prompt();
  void draw_task_tools();             // new, rename, duplicate, delete
  void draw_task_policy(int index);   // per-frame inputs or a policy (authoring_ui.cpp)
  void draw_policy_terms(int index);  // a policy's observation terms and termination (authoring_ui.cpp)
  std::unique_ptr<scene::CompiledScene> compiled_;
  std::unique_ptr<app::SceneView> view_;
  // worlds 1..'s views and the moved copies of their points (world_grid.cpp)
  std::vector<std::unique_ptr<app::SceneView>> world_views_;
  uint64_t world_views_revision_ = 0;
  float world_spacing_ = 1.0f;
  glm::vec3 world_extent_lo_{0.0f}, world_extent_hi_{0.0f};  // what world 1 draws
  std::vector<glm::vec3> world_points_;
  std::vector<glm::vec4> world_spheres_;
  std::vector<render::ShapeInstance> world_shapes_;
  uint64_t compiled_revision_ = 0;
  // the simulation: the scene last sent to the worker, the revision it last restarted at
  // (later revisions that simulate the same go on from its frames)
  scene::Scene synced_scene_;
  uint64_t restart_revision_ = 0;
  bool restart_pending_ = true;
  bool snap_current() const { return snap.generation >= restart_revision_ && snap.generation <= compiled_revision_; }
  int selected_ = -1;
  State scrub_state_;
  int scrub_loaded_ = -1;
  bool attach_scene_loaded_ = false;  // the attached run's scene is the document
  State attach_state_;                // the attached run's replayed frame
  Contacts attach_contacts_;
  RigidContactsT<float> attach_body_contacts_;
  std::vector<State> attach_worlds_;   // the replayed training copies' frames (snap.world_states)
  std::uint64_t attach_revision_ = 0;  // the document revision the run's scene was loaded as
  // the newest rollout's gradient as the worker publishes a local run's (snap.grad, blocks,
  // step_grad_norms): the arrows and the |dL/dx_t| plot; of the replayed rollout while replaying
  std::vector<float> attach_grad_, attach_step_norms_;
  std::vector<optim::ParamBlock> attach_blocks_;
  std::uint64_t attach_grad_number_ = 0;  // the rollout (AttachView::rollouts) they are of
  app::wire::Rollout attach_latest_;      // the newest rollout
  void attach_gradient();                 // the above into snap, each frame
  void attach_worlds();                   // the replay's training copies into snap.world_states
  // ghost paths of the attached run's rollouts (newest last, at most Worker::k_ghosts), with
  // their iterations' losses; the number of the last rollout made a path
  std::vector<std::vector<vec3<float>>> attach_ghosts_;
  std::vector<float> attach_ghost_losses_;
  std::uint64_t attach_ghost_number_ = 0;
  void add_attach_ghost();
  State replay_state_;  // the replayed frame shown, cached
  int replay_loaded_ = -1;
  uint64_t replay_run_ = 0;      // Snapshot::replay.run of the cached frame
  uint64_t replay_request_ = 0;  // Worker::replay's number of the replay asked for last
  Array<vec3<float>> field_;
  std::vector<float> frame_grad_;    // arrow_field's knotted block, one entry a frame
  scene::Scene opt_scene_;           // the document when the optimization started
  uint64_t opt_scene_revision_ = 0;  // its revision (Snapshot::opt_generation)
  bool doc_is_opt_scene_ = false;    // the document equals opt_scene_ (sync() updates it)
  bool opt_hidden_noted_ = false;    // the message that the results are hidden was given
  std::array<int, 3> opt_counts_{};  // objects, particles, bodies of opt_scene_ compiled
  bool opt_objects_differ_ = false;
  Pending pending_ = Pending::none;
  std::string pending_path_;
  bool prompt_open_ = false;
  bool quit_confirmed_ = false;
  bool save_as_active_ = false;
  Pending after_save_ = Pending::none;  // continued once Save As has saved
  std::string after_save_path_;
  bool cuda_available_ = false;
  std::string cuda_why_;
  std::string last_backend_error_;
  std::string last_sim_error_, last_opt_error_;
  uint64_t notes_run_ = 0;          // the optimization whose start notes were shown
  int checkpoint_serial_ = 0;       // the last Save checkpoint outcome shown
  uint64_t checkpoint_replay_ = 0;  // Worker::replay_checkpoint's request whose outcome is not shown yet
  bool recovery_offered_ = false, recovery_prompt_ = false;
  uint64_t autosaved_revision_ = 0;
  double last_autosave_s_ = -1;
  void draw_recovery_prompt();
  // transform tools
  bool selection_center(glm::vec3* c);
  void move_selection(const glm::dvec3& delta, uint64_t merge_key);
  void apply_grab(bool typed, glm::vec2 centre_px, const glm::vec2* tips, float len);
  void run_grab(glm::vec2 centre_px, const glm::vec2* tips, float len, float height);
  bool drag_gizmo(glm::vec2 centre_px, const glm::vec2* tips, float len);
  std::string grab_label() const;  // the undo label of the operation in progress
  int gizmo_axis_ = -1;            // axis being dragged, or -1
  int gizmo_hover_ = -1;
  bool gizmo_shown_ = false;
  glm::vec2 gizmo_px_[4]{};  // centre, then the x, y, z tips [px]
  float gizmo_drag_ = 0;     // accumulated world distance along the axis
  bool grab_active_ = false;
  GrabMode grab_mode_ = GrabMode::move;
  glm::vec3 grab_center_{0.0f};    // the selection's centre when the operation began [m]
  glm::vec2 grab_start_px_{0.0f};  // the mouse then [px]
  int grab_axis_ = -1;             // -1: free in the view plane
  std::string grab_typed_;         // typed distance
  glm::vec2 grab_mouse_{0.0f};     // mouse travel since the grab began [px]
  bool grab_moved_ = false;
  scene::Object grab_start_;  // the selection when the grab began
  scene::Object drag_start_;
  int pull_particle_ = -1;
  glm::vec3 pull_anchor_{0.0f};  // the particle when it was grabbed: the drag plane goes through it
  void perform(Pending action, const std::string& path);
  void draw_prompt();
  void draw_outliner();
  void draw_inspector();
  void draw_simulation();
  void draw_optimization();
  void draw_optimization_results();                           // its plots and gradient check
  void draw_task_method(const scene::Task& t, bool running);  // a policy task's method, copies, seed
  void draw_loss_terms(const scene::Task& task);
  void draw_visualization();
  void draw_stats();
  void draw_messages();
  void draw_file_dialogs();  // file_dialogs.cpp
  void report_worker_errors();
  std::optional<FileDialog> dialog_request_;  // a browser to open this frame
  FileDialog dialog_ = FileDialog::open;      // the browser up (modal: one at a time)
  FileBrowser browser_;
  std::string browse_dir_;  // the folder the last browser closed in
};

}  // namespace adj::editor
