#pragma once
// The editor's model of itself: the document, the worker, the selection, the compiled
// scene the viewport draws, what the panels show, and every action a menu, a key, a panel
// or a script can take. Panels (panels.cpp) draw it with ImGui; the viewer (viewer.cpp)
// owns the window and the renderer and calls frame() once per frame.
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/editor/document.h"
#include "app/editor/worker.h"
#include "app/scene_view.h"
#include "render/camera.h"

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
};

struct ViewSettings {
  app::Overlays overlays;
  bool grid = true;
  bool shadows = true;
  bool velocity_arrows = false;
  bool gradient_arrows = false;  // dL/dx0 of the last optimizer iteration (particle initial positions)
  bool show_optimized = false;   // show the optimizer's last rollout end state instead of the simulation
};

class Editor {
 public:
  Editor();
  ~Editor();

  // file actions; errors become messages and leave the current scene untouched
  bool open(const std::string& path);
  bool save(const std::string& path);  // empty: the document's own path
  void new_scene();
  bool import_obj(const std::string& path);  // adds a cloth object with this mesh

  // the compiled document, recompiled (and sent to the worker) when the revision changes
  void sync();
  bool has_scene() const { return compiled_ != nullptr; }
  const scene::CompiledScene* compiled() const { return compiled_.get(); }
  app::SceneView* view() { return view_.get(); }
  // the state the viewport draws: the scrubbed timeline frame, the optimizer's result, or
  // the newest simulated frame
  const State& display_state();
  const Contacts* display_contacts();

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
  enum class Pending { none, new_scene, open, quit };
  void request(Pending action, const std::string& path = "");
  bool quit_confirmed() const { return quit_confirmed_; }
  void handle_keys();  // editor shortcuts (not while a text field has the keyboard)
  void frame_selection(float aspect);
  bool screenshot_requested = false;  // Ctrl+P: the viewer writes the next frame
  bool show_help = false;

  // messages panel
  void message(Severity s, std::string text, int object = -1, int frame = -1);

  // ui (panels.cpp)
  void draw_panels(float menu_height);
  void draw_menu_items_file(bool* quit_requested);
  void draw_menu_items_edit();
  void draw_menu_items_view();

  Document doc;
  Worker worker;
  Snapshot snap;            // copied from the worker each frame
  PanelVisibility panels;
  ViewSettings view_settings;
  render::Camera camera;
  bool camera_fit_pending = true;  // frame the scene at the next opportunity
  int timeline_frame = -1;         // scrubbed frame, -1: follow the newest
  int task_index = 0;              // optimization panel's task
  int opt_iterations = 0;          // 0: the task's own count
  std::deque<Message> messages;
  std::vector<std::string> recent_files;
  std::string open_path_input, save_path_input, import_path_input;
  double ui_frame_ms = 0;          // the UI's own frame time (stats)
  double speed = 1.0;

  const std::string& title() const { return title_; }

 private:
  void after_load(const std::string& path);
  std::unique_ptr<scene::CompiledScene> compiled_;
  std::unique_ptr<app::SceneView> view_;
  uint64_t compiled_revision_ = 0;
  int selected_ = -1;
  State scrub_state_;
  int scrub_loaded_ = -1;
  Array<vec3<float>> field_;
  std::string title_;
  Pending pending_ = Pending::none;
  std::string pending_path_;
  bool prompt_open_ = false;
  bool quit_confirmed_ = false;
  std::string last_sim_error_, last_opt_error_;
  void perform(Pending action, const std::string& path);
  void draw_prompt();
  void draw_outliner();
  void draw_inspector();
  void draw_simulation();
  void draw_optimization();
  void draw_visualization();
  void draw_stats();
  void draw_messages();
  void draw_file_dialogs();
  void report_worker_errors();
  bool open_dialog_ = false, save_dialog_ = false, import_dialog_ = false;
};

}  // namespace adj::editor
