#include "app/editor/editor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "app/editor/authoring.h"
#include "app/editor/fields.h"
#include "app/robot_path.h"
#include "engine/cuda/cuda.h"
#include "engine/optim/write_back.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/scene/scene_paths.h"

namespace adj::editor {

namespace {

// the parameter kind whose gradient ViewSettings::gradient g (1, 2, 3) draws as arrows
scene::ParamKind gradient_kind(int g) {
  using K = scene::ParamKind;
  return g == 1 ? K::initial_position : g == 2 ? K::initial_velocity : K::control_force;
}

}  // namespace

namespace {

// the reference scenes: $ADJ_ASSETS/scenes (tests), else the source tree's
std::string scenes_dir() {
  if (const char* a = std::getenv("ADJ_ASSETS"); a && *a) return std::string(a) + "/scenes";
  return ADJ_SOURCE_DIR "/assets/scenes";
}

}  // namespace

Editor::Editor() : doc(starter_scene(), "") { cuda_available_ = cuda_available(&cuda_why_); }
Editor::~Editor() = default;

void Editor::message(Severity s, std::string text, int object, int frame) {
  messages.push_back({s, std::move(text), object, frame});
  while (messages.size() > 200) messages.pop_front();
}

void Editor::start_optimization(const std::string& task, int iterations, bool record,
                                const std::optional<OptMethod>& method) {
  stop_replay();  // the replay belongs to the optimization before
  if (record && !recording.active() && has_scene()) {
    // before the optimization starts, so that its first iteration is recorded too
    worker.set_record_rollouts(record_options.fps);
    record_optimization_pending = true;
    record_toggle_requested = true;
  }
  worker.start_optimize(task, iterations, method ? *method : method_of(task));
  sync();  // the worker starts from the revision compiled now
  opt_scene_ = doc.scene();
  opt_scene_revision_ = compiled_revision_;
  doc_is_opt_scene_ = true;
  opt_hidden_noted_ = false;
  opt_objects_differ_ = false;
  if (compiled_)
    opt_counts_ = {int(compiled_->objects.size()), compiled_->model.particle_count(),
                   compiled_->model.rigid.body_count()};
  apply_iteration = -1;
  view_settings.show_optimized = true;
}

bool Editor::open(const std::string& path) {
  auto loaded = scene::load_scene(path);
  if (!loaded) {
    message(Severity::error, loaded.status().message());
    return false;
  }
  // compile before replacing anything: a scene that cannot compile is not opened
  auto cs = scene::compile<float>(*loaded, std::filesystem::path(path).parent_path().string());
  if (!cs) {
    message(Severity::error, path + ": " + cs.status().message());
    return false;
  }
  replace_document(std::move(*loaded), path);
  after_load(path);
  message(Severity::info, "opened " + path);
  return true;
}

void Editor::replace_document(scene::Scene scene, const std::string& path) {
  const uint64_t last = doc.revision();
  doc = Document(std::move(scene), path);
  doc.continue_revisions(last);
  doc.mark_saved(path);
}

bool Editor::revert() {
  if (doc.path().empty()) {
    message(Severity::warning, "revert: the scene has no file yet");
    return false;
  }
  const std::string path = doc.path();
  if (!open(path)) return false;
  message(Severity::info, "reverted to " + path);
  return true;
}

bool Editor::new_from_template(const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(scenes_dir()) / file;
  auto loaded = scene::load_scene(path.string());
  if (!loaded) {
    message(Severity::error, loaded.status().message());
    return false;
  }
  // untitled, so Save asks where; its file references made absolute (the scene has no folder yet)
  scene::rebase_paths(*loaded, path.parent_path().string(), fs::current_path().string());
  auto cs = scene::compile<float>(*loaded, fs::current_path().string());
  if (!cs) {
    message(Severity::error, path.string() + ": " + cs.status().message());
    return false;
  }
  replace_document(std::move(*loaded), "");
  after_load("");
  message(Severity::info, "new scene from the template " + file);
  return true;
}

void Editor::after_load(const std::string& path) {
  selected_ = -1;
  timeline_frame = -1;
  task_index = 0;
  compiled_revision_ = 0;
  restart_pending_ = true;  // a new document always restarts the simulation
  camera_fit_pending = true;
  if (!path.empty()) {
    std::erase(recent_files, path);
    recent_files.insert(recent_files.begin(), path);
    if (recent_files.size() > 8) recent_files.resize(8);
  }
  // the previous scene's optimization (plots, ghosts, the gradient table, Apply) goes with it
  worker.clear_optimization();
  opt_scene_revision_ = 0;
  doc_is_opt_scene_ = opt_objects_differ_ = false;
  task_methods.clear();  // a method is chosen per task: the new scene's tasks start from BPTT
  stop_replay();
  view_settings.show_optimized = false;
  view_settings.gradient = 0;
  apply_iteration = -1;
  worker.play(false);
  sync();
}

bool Editor::save(const std::string& path_in) {
  std::string path = path_in.empty() ? doc.path() : path_in;
  if (path.empty()) {
    message(Severity::error, "save: the scene has no file yet; use File > Save As");
    return false;
  }
  // saved elsewhere: the file references follow (relative to the new file)
  const std::string dir = std::filesystem::path(path).parent_path().string();
  scene::Scene out = doc.scene();
  scene::rebase_paths(out, doc.base_dir(), dir);
  Status st = scene::save_scene(out, path);
  if (!st) {
    message(Severity::error, st.message());
    return false;
  }
  doc.rebase_paths(dir);
  doc.mark_saved(path);
  discard_recovery();
  std::erase(recent_files, path);
  recent_files.insert(recent_files.begin(), path);
  message(Severity::info, "saved " + path);
  return true;
}

void Editor::new_scene() {
  replace_document(starter_scene(), "");
  after_load("");
}

bool Editor::import_obj(const std::string& path) {
  scene::Object o;
  o.name = std::filesystem::path(path).stem().string();
  o.kind = scene::ObjectKind::cloth;
  // relative to the scene file when it has one, so the scene folder can move
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path rel = doc.path().empty() ? fs::path() : fs::relative(fs::absolute(path), doc.base_dir(), ec);
  o.cloth.mesh = rel.empty() || ec ? fs::absolute(path).string() : rel.string();
  o.cloth.position = {0, 1, 0};
  scene::Scene trial = doc.scene();
  trial.objects.push_back(o);
  auto cs = scene::compile<float>(trial, doc.base_dir());
  if (!cs) {
    message(Severity::error, path + ": " + cs.status().message());
    return false;
  }
  selected_ = doc.add_object(o, "Import " + path);
  message(Severity::info, "imported " + path + " as cloth \"" + doc.scene().objects[size_t(selected_)].name + "\"");
  return true;
}

void Editor::sync() {
  if (compiled_ && compiled_revision_ == doc.revision()) return;
  compiled_revision_ = doc.revision();
  auto cs = scene::compile<float>(doc.scene(), doc.base_dir());
  if (!cs) {
    // the document holds an edit the compiler refuses: keep drawing the last good one
    message(Severity::error, cs.status().message());
    return;
  }
  // another set of objects, particles or bodies: the optimization of the old one no longer
  // fits it (its ghosts, plots and Apply go; a new document already cleared it)
  // another set of objects: the optimization's results no longer fit the scene; they are
  // hidden until the document is the optimized scene again (Ctrl+Z), a new one replaces them
  doc_is_opt_scene_ = opt_scene_revision_ != 0 && doc.scene() == opt_scene_;
  const bool topology = compiled_ && (cs->objects.size() != compiled_->objects.size() ||
                                      cs->model.particle_count() != compiled_->model.particle_count() ||
                                      cs->model.rigid.body_count() != compiled_->model.rigid.body_count());
  opt_objects_differ_ =
      opt_scene_revision_ != 0 && opt_counts_ != std::array<int, 3>{int(cs->objects.size()), cs->model.particle_count(),
                                                                    cs->model.rigid.body_count()};
  if (topology && !restart_pending_ && (!snap.loss.empty() || snap.opt_phase != OptPhase::idle)) {
    stop_replay();
    if (!doc_is_opt_scene_ && !std::exchange(opt_hidden_noted_, true))
      message(Severity::info,
              "the optimization's results are hidden while the scene's objects differ from the ones it ran on; "
              "Ctrl+Z brings them back, Start replaces them");
  }
  view_.reset();
  compiled_ = std::make_unique<scene::CompiledScene>(std::move(*cs));
  view_ = std::make_unique<app::SceneView>(doc.scene(), *compiled_);
  // an edit that simulates the same (a name, visibility, a target, a task) keeps playing
  const bool restart = restart_pending_ || !same_simulation(synced_scene_, doc.scene());
  restart_pending_ = false;
  synced_scene_ = doc.scene();
  worker.set_scene(doc.scene(), *compiled_, doc.base_dir(), doc.revision(), restart);
  if (restart) {
    restart_revision_ = compiled_revision_;
    timeline_frame = -1;
    scrub_loaded_ = -1;
  }
  if (selected_ >= int(doc.scene().objects.size())) selected_ = -1;
  task_index = std::clamp(task_index, 0, std::max(0, int(doc.scene().tasks.size()) - 1));
}

OptMethod Editor::method_of(const std::string& task) const {
  const scene::Task* t = doc.scene().find_task(task);
  if (!t || !t->has_policy) return {};
  auto it = task_methods.find(t->name);
  return it == task_methods.end() ? OptMethod{} : it->second;
}

std::string Editor::title() const {
  return "Adjoint - " +
         (doc.path().empty() ? std::string("untitled") : std::filesystem::path(doc.path()).filename().string());
}

bool Editor::opt_fits() const {
  if (snap.opt_generation == 0) return false;
  if (snap.opt_generation == doc.revision()) return true;
  return snap.opt_generation == opt_scene_revision_ && doc_is_opt_scene_ && compiled_revision_ == doc.revision();
}

std::string Editor::media_folder() const {
  namespace fs = std::filesystem;
  fs::path dir;
  if (!media_dir.empty())
    dir = media_dir;
  else if (!doc.path().empty())
    dir = fs::absolute(doc.path()).parent_path();
  else if (const char* v = std::getenv("XDG_VIDEOS_DIR"); v && *v)
    dir = v;
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = fs::path(h) / "Videos";
  else
    dir = fs::temp_directory_path();
  std::error_code ec;
  return fs::absolute(dir, ec).lexically_normal().string();
}

std::optional<glm::vec3> Editor::shown_selection_center() {
  if (!compiled_ || selected_ < 0 || selected_ >= int(compiled_->objects.size())) return std::nullopt;
  const scene::ObjectRange& r = compiled_->objects[size_t(selected_)];
  const State& st = display_state();
  if (r.particle_end > r.particle_begin && st.particle_count() >= r.particle_end) {
    const vec3<float> c = app::particle_centre(r, st);
    return glm::vec3(c.x, c.y, c.z);
  }
  if (r.kind == scene::ObjectKind::robot && r.body_end > r.body_begin) {
    const int selected_body = robot_selected_body(*this);
    const int body = selected_body >= r.body_begin && selected_body < r.body_end ? selected_body : r.body_begin;
    auto path = app::robot_com_path(compiled_->model.rigid, {robot_display_state(*this)}, body);
    if (!path.empty()) return glm::vec3(path[0].x, path[0].y, path[0].z);
  }
  glm::vec3 c;
  if (selection_center(&c)) return c;
  return std::nullopt;
}

void Editor::follow_selection() {
  if (!view_settings.follow) return;
  if (auto c = shown_selection_center()) camera.target = *c;
}

namespace {
// hides a column's panels, remembering which were open, or shows those again
void toggle_column(bool* open[3], bool hidden[3]) {
  const bool shown = *open[0] || *open[1] || *open[2];
  for (int i = 0; i < 3; ++i) {
    if (shown) hidden[i] = *open[i];
    *open[i] = !shown && hidden[i];
  }
}
}  // namespace

void Editor::toggle_left_panels() {
  bool* open[3] = {&panels.outliner, &panels.inspector, &panels.visualization};
  toggle_column(open, panels.left_hidden);
}

void Editor::toggle_right_panels() {
  bool* open[3] = {&panels.simulation, &panels.optimization, &panels.stats};
  toggle_column(open, panels.right_hidden);
}

std::string Editor::overlay_hint() const {
  const int g = view_settings.gradient;
  if (g > 0) {
    using K = scene::ParamKind;
    const K want = gradient_kind(g);
    const char* name = g == 1 ? "dL/dx0" : g == 2 ? "dL/dv0" : "dL/du";
    const bool has = std::any_of(snap.blocks.begin(), snap.blocks.end(), [&](const auto& b) { return b.kind == want; });
    if (snap.grad.empty() || !(opt_fits() || attach_fits()))
      return std::string("gradient arrows: run an optimization to see ") + name;
    if (!has)
      return std::string("gradient arrows: the task does not optimize ") + scene::to_string(want) + " (" + name + ")";
  }
  if (view_settings.ghosts && snap.ghost_paths.empty())
    return "ghosts: run an optimization to see its iterations' paths";
  return {};
}

void Editor::start_replay() {
  replay_request_ = worker.replay(apply_iteration);
  replay = {.active = true, .playing = true, .frame = 0, .carry = 0};
  replay_loaded_ = -1;
  worker.play(false);
}

void Editor::stop_replay() {
  replay = {};
  replay_loaded_ = -1;
  before_after = BeforeAfter::off;
  before_after_record_pending = false;
}

Status Editor::start_before_after() {
  if (recording.active()) return Status::error("record before/after: already recording");
  if (snap.loss.size() < 2) return Status::error("record before/after: optimize for at least two iterations first");
  apply_iteration = 0;
  start_replay();
  replay.playing = false;  // the recording steps it, one rollout frame per video frame
  before_after = BeforeAfter::before;
  before_after_record_pending = true;
  record_options.with_ui = false;
  record_options.overlays = false;
  return Status::ok();
}

bool Editor::continue_before_after() {
  if (before_after != BeforeAfter::before) {
    before_after = BeforeAfter::off;
    return false;
  }
  apply_iteration = -1;  // the best
  start_replay();
  replay.playing = false;
  before_after = BeforeAfter::after;
  return true;
}

void Editor::advance_replay(double seconds) {
  if (!replay_ready() || !replay.playing || !compiled_) return;
  replay.carry += seconds * speed;
  const double dt = double(compiled_->frame_dt);
  const int frames = int(replay.carry / dt);
  replay.carry -= frames * dt;
  step_replay(frames);
}

void Editor::step_replay(int frames) {
  const int last = snap.replay.frames - 1;
  replay.frame = std::min(replay.frame + frames, std::max(0, last));
  if (replay.frame >= last) replay.playing = false;  // holds the last frame
}

const State& Editor::display_state() {
  const int n = compiled_ ? compiled_->model.particle_count() : 0;
  if (const State* attached_frame = attach_display_state()) return *attached_frame;
  if (replay_ready()) {  // the replayed rollout's frame (particles and joints)
    if (replay_loaded_ != replay.frame || replay_run_ != snap.replay.run) {
      if (worker.replay_state(replay.frame, replay_state_))
        replay_loaded_ = replay.frame, replay_run_ = snap.replay.run;
    }
    if (replay_loaded_ == replay.frame && replay_state_.particle_count() == n) return replay_state_;
  }
  // the optimized result of this very revision (once its parameters are applied, or the
  // scene edited, the simulation of the scene as it now is shows)
  if (view_settings.show_optimized && snap.has_opt_final_state && snap.opt_final_state.particle_count() == n &&
      opt_fits())
    return snap.opt_final_state;
  if (timeline_frame >= 0) {
    if (scrub_loaded_ != timeline_frame) {
      if (worker.recorded_state(timeline_frame, scrub_state_)) scrub_loaded_ = timeline_frame;
    }
    if (scrub_loaded_ == timeline_frame && scrub_state_.particle_count() == n) return scrub_state_;
  }
  if (snap_current() && snap.state.particle_count() == n) return snap.state;
  if (scrub_state_.particle_count() != n || scrub_loaded_ != -2) {
    scrub_state_ = compiled_->model.make_state();
    scrub_loaded_ = -2;  // the initial state, until the worker publishes this revision
  }
  return scrub_state_;
}

const Contacts* Editor::display_contacts() {
  if (attach_replay.active) return attach_display_contacts();  // an attached run sends its rollout's
  // a timeline frame, the optimized end state or a replay: no contacts are kept for them
  const bool optimized = view_settings.show_optimized && snap.has_opt_final_state && opt_fits();
  if (timeline_frame >= 0 || optimized || replay.active || !snap_current()) return nullptr;
  return &snap.contacts;
}

const Array<vec3<float>>* Editor::arrow_field(const State& shown) {
  const int n = shown.particle_count();
  const Array<vec3<float>>* f = nullptr;
  const int g = view_settings.gradient;
  if (g > 0 && !snap.grad.empty() && (opt_fits() || attach_fits())) {
    using K = scene::ParamKind;
    const K want = gradient_kind(g);
    field_.assign(size_t(n), vec3<float>());
    bool any = false;
    for (const auto& b : snap.blocks) {
      if (b.kind != want || b.width != 3) continue;
      // per-frame inputs: the scrubbed frame's (an attached replay's: its frame's)
      const int frame = attach_replay.active ? attach_replay.frame : std::max(timeline_frame, 0);
      if (size_t(b.offset + b.count) > snap.grad.size()) continue;
      // a knotted block's gradient drawn per frame as its knots' interpolation: how each frame's
      // input moves under a gradient step on the knots
      const float* grad = snap.grad.data() + b.offset;
      if (b.knots > 0) {
        frame_grad_.resize(size_t(optim::frame_block(b).count));
        optim::knots_to_frames(b, grad, frame_grad_.data());
        grad = frame_grad_.data();
      }
      const int t = std::clamp(g == 3 ? frame : 0, 0, b.frames - 1);
      for (int e = 0; e < b.elements; ++e) {
        const size_t k = size_t((t * b.elements + e) * 3);
        if (b.index[size_t(e)] >= n) continue;
        field_[size_t(b.index[size_t(e)])] = {grad[k], grad[k + 1], grad[k + 2]};
        any = true;
      }
    }
    if (any) f = &field_;
  }
  if (!f && view_settings.velocity_arrows) f = &shown.particle_qd;
  legend_max = 0.0f;
  if (f)
    for (const auto& v : *f) legend_max = std::max(legend_max, std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z));
  return f;
}

void Editor::undo() {
  std::string label = doc.undo_label();
  if (doc.undo()) message(Severity::info, "undone: " + label);
}

void Editor::redo() {
  std::string label = doc.redo_label();
  if (doc.redo()) message(Severity::info, "redone: " + label);
}

void Editor::duplicate_selected() {
  if (selected_ < 0) return;
  selected_ = doc.duplicate_object(selected_);
}

void Editor::delete_selected() {
  if (selected_ < 0) return;
  doc.delete_object(selected_);
  selected_ = -1;
}

Status Editor::set_field(const std::string& path, const std::string& value) {
  scene::Scene s = doc.scene();
  if (Status st = set_by_path(s, path, value); !st) return st;
  doc.end_merge();
  doc.replace(std::move(s), "Set " + path);
  return Status::ok();
}

std::string Editor::recovery_dir() {
  namespace fs = std::filesystem;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return (fs::path(x) / "adjoint").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".local/state/adjoint").string();
  return (fs::temp_directory_path() / "adjoint").string();
}

void Editor::autosave_tick(double now_s) {
  if (last_autosave_s_ < 0) last_autosave_s_ = now_s;
  if (now_s - last_autosave_s_ < k_autosave_period_s) return;
  last_autosave_s_ = now_s;
  if (doc.dirty() && doc.revision() != autosaved_revision_) write_recovery();
}

bool Editor::write_recovery() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(recovery_dir(), ec);
  Status st = scene::save_scene(doc.scene(), (fs::path(recovery_dir()) / "recovery.json").string());
  if (!st) {
    message(Severity::warning, "autosave: " + st.message());
    return false;
  }
  std::ofstream(fs::path(recovery_dir()) / "recovery.path") << doc.path();
  autosaved_revision_ = doc.revision();
  return true;
}

void Editor::check_recovery() {
  recovery_offered_ = std::filesystem::exists(std::filesystem::path(recovery_dir()) / "recovery.json");
  recovery_prompt_ = recovery_offered_;
}

bool Editor::restore_recovery() {
  namespace fs = std::filesystem;
  auto rec = scene::load_scene((fs::path(recovery_dir()) / "recovery.json").string());
  recovery_offered_ = false;
  if (!rec) {
    message(Severity::error, "recovery: " + rec.status().message());
    return false;
  }
  std::string path;
  std::getline(std::ifstream(fs::path(recovery_dir()) / "recovery.path"), path);
  // the file as it is on disk (if any), then the recovered edits as one undoable step
  scene::Scene base = starter_scene();
  if (!path.empty()) {
    if (auto on_disk = scene::load_scene(path)) base = std::move(*on_disk);
  }
  replace_document(std::move(base), path);
  doc.replace(std::move(*rec), "Restore unsaved work");
  after_load("");
  message(Severity::info, "restored unsaved work" + (path.empty() ? std::string() : " of " + path));
  return true;
}

void Editor::discard_recovery() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove(fs::path(recovery_dir()) / "recovery.json", ec);
  fs::remove(fs::path(recovery_dir()) / "recovery.json.values.json", ec);  // its sidecar, if any
  fs::remove(fs::path(recovery_dir()) / "recovery.path", ec);
  recovery_offered_ = false;
  autosaved_revision_ = 0;
}

}  // namespace adj::editor

namespace adj::editor {

bool Editor::apply_optimized() {
  if (!compiled_ || snap.best_theta.empty() || !opt_fits()) {
    message(Severity::warning, "nothing to apply: optimize the current scene first");
    return false;
  }
  // the best evaluated iterate (not the last step's parameters, which no rollout measured),
  // or the one picked on the loss plot
  std::vector<float> theta = snap.best_theta;
  int iteration = snap.best_iteration;
  double loss = snap.best_loss;
  if (apply_iteration >= 0 && apply_iteration < int(snap.loss.size()) &&
      worker.iteration_theta(apply_iteration, theta)) {
    iteration = apply_iteration;
    loss = snap.loss[size_t(iteration)];
  } else {
    theta = snap.best_theta;
  }
  scene::Scene s = doc.scene();
  std::vector<std::string> notes = apply_optimization(snap, theta, *compiled_, s);
  for (const std::string& n : notes) message(Severity::warning, n);
  if (s == doc.scene()) {
    message(Severity::warning, "nothing applied: the scene already holds these parameters");
    return false;
  }
  doc.replace(std::move(s), "Apply optimized parameters");
  char text[200];
  if (iteration == snap.best_iteration)
    std::snprintf(text, sizeof text,
                  "applied the parameters of iteration %d (loss %.6g, the lowest of %d); Ctrl+Z undoes", iteration,
                  loss, int(snap.loss.size()));
  else
    std::snprintf(text, sizeof text,
                  "applied the parameters of iteration %d, picked on the plot (loss %.6g; the lowest, %.6g, was "
                  "iteration %d); Ctrl+Z undoes",
                  iteration, loss, snap.best_loss, snap.best_iteration);
  message(Severity::info, text);
  applied_loss = loss;
  return true;
}

}  // namespace adj::editor

namespace adj::editor {

// ---- the unsaved-changes prompt and Save As

void Editor::answer_prompt(Answer answer) {
  const Pending action = pending_;
  const std::string path = pending_path_;
  if (action == Pending::none) return;
  pending_ = Pending::none;
  switch (answer) {
    case Answer::save:
      if (doc.path().empty()) {  // untitled: ask for a path, then go on
        after_save_ = action;
        after_save_path_ = path;
        open_save_as();
      } else if (save("")) {
        perform(action, path);
      }
      break;
    case Answer::discard:
      discard_recovery();
      perform(action, path);
      break;
    case Answer::cancel:
      break;
  }
}

void Editor::open_save_as() { show_dialog(FileDialog::save_as); }

void Editor::show_dialog(FileDialog d) {
  dialog_request_ = d;
  if (d == FileDialog::save_as) save_as_active_ = true;
}

bool Editor::answer_save_as(const std::string& path) {
  save_as_active_ = false;
  if (dialog_request_ == FileDialog::save_as) dialog_request_.reset();
  const Pending action = std::exchange(after_save_, Pending::none);
  const std::string then = std::exchange(after_save_path_, "");
  if (path.empty()) {
    if (action != Pending::none) message(Severity::info, "not saved; the scene stays open");
    return false;
  }
  if (!save(path)) return false;  // the error is a message; the pending action does not run
  if (action != Pending::none) perform(action, then);
  return true;
}

// ---- loss terms

scene::LossTerm Editor::default_loss_term() const {
  scene::LossTerm t;
  for (const scene::Object& o : doc.scene().objects) {
    if (t.object.empty() && (o.kind == scene::ObjectKind::cloth || o.kind == scene::ObjectKind::soft ||
                             o.kind == scene::ObjectKind::particles))
      t.object = o.name;
    if (t.target.empty() && o.kind == scene::ObjectKind::target) t.target = o.name;
  }
  if (t.target.empty()) t.kind = scene::LossKind::velocity;
  if (!t.object.empty() || !compiled_) return t;
  // no particles: the first robot's base, onto the first target, else travelling along +x
  const auto& objs = doc.scene().objects;
  for (size_t i = 0; i < objs.size() && i < compiled_->objects.size(); ++i) {
    const scene::ObjectRange& r = compiled_->objects[i];
    if (objs[i].kind != scene::ObjectKind::robot || r.body_end <= r.body_begin) continue;
    t.object = objs[i].name;
    t.body = compiled_->model.rigid.body_name[size_t(r.body_begin)];
    t.kind = t.target.empty() ? scene::LossKind::distance : scene::LossKind::position;
    break;
  }
  return t;
}

void Editor::bound_inputs(scene::ParamSpec& p) {
  const scene::Object* o = doc.scene().find(p.object);
  if (!o) return;
  if (auto b = robot_input_bounds(*this, *o)) {
    p.lower = b->lower, p.upper = b->upper;
    p.lower_each = b->lower_each, p.upper_each = b->upper_each;
    message(Severity::info, p.object + "'s inputs bounded " + b->why);
  }
}

std::vector<std::string> Editor::robot_bodies(const std::string& robot) const {
  std::vector<std::string> names;
  const scene::ObjectRange* r = compiled_ ? compiled_->find(robot) : nullptr;
  if (!r || r->kind != scene::ObjectKind::robot) return names;
  for (int b = r->body_begin; b < r->body_end; ++b) names.push_back(compiled_->model.rigid.body_name[size_t(b)]);
  return names;
}

std::vector<std::string> Editor::particle_objects() const {
  std::vector<std::string> names;
  if (compiled_)
    for (const scene::ObjectRange& r : compiled_->objects)
      if (r.particle_end > r.particle_begin) names.push_back(r.name);
  return names;
}

bool Editor::set_task_policy(int index, const std::string& robot) {
  if (index < 0 || index >= int(doc.scene().tasks.size())) return false;
  scene::Task t = doc.scene().tasks[size_t(index)];
  const scene::Object* o = robot.empty() ? nullptr : doc.scene().find(robot);
  if (!robot.empty() && (!o || o->kind != scene::ObjectKind::robot)) {
    message(Severity::warning, "policy: \"" + robot + "\" is not a robot");
    return false;
  }
  // a policy replaces the robot's per-frame inputs, and per-frame inputs the policy
  std::string was;
  for (const scene::ParamSpec& p : t.parameters)
    if (p.kind == scene::ParamKind::policy) was = p.object;
  if (t.has_policy == !robot.empty() && was == robot) return false;  // already so
  std::erase_if(t.parameters, [&](const scene::ParamSpec& p) {
    return p.kind == scene::ParamKind::policy ||
           (!robot.empty() && p.kind == scene::ParamKind::actuator_control && p.object == robot);
  });
  std::erase_if(t.values, [](const scene::ParamValues& v) { return v.kind == scene::ParamKind::policy; });
  t.has_policy = !robot.empty();
  if (t.has_policy) {
    t.parameters.push_back({scene::ParamKind::policy, robot});
  } else if (!was.empty()) {
    t.parameters.push_back({scene::ParamKind::actuator_control, was});
    bound_inputs(t.parameters.back());
  }
  doc.end_merge();
  doc.set_task(index, t, t.has_policy ? "Policy for " + robot : std::string("Per-frame inputs"));
  return true;
}

namespace {

// what the panel refuses: the errors the task runner would give later, said now
Status check_loss_term(const scene::Scene& s, const scene::LossTerm& t) {
  using K = scene::LossKind;
  const std::string kind = scene::to_string(t.kind);
  if (t.kind != K::effort) {
    const scene::Object* o = s.find(t.object);
    if (!o) return Status::error(kind + " term: no object named \"" + t.object + "\"");
    if (o->kind == scene::ObjectKind::target || o->kind == scene::ObjectKind::collider)
      return Status::error(kind + " term: \"" + t.object + "\" is a " + scene::to_string(o->kind) +
                           ", which does not move");
  }
  if (t.kind == K::position || t.kind == K::reach || (t.kind == K::shape && !t.target.empty())) {
    const scene::Object* g = s.find(t.target);
    if (!g || g->kind != scene::ObjectKind::target)
      return Status::error(kind + " term: \"" + t.target + "\" is not a target object");
  }
  if (!(t.weight >= 0) || !std::isfinite(t.weight)) return Status::error(kind + " term: the weight must be >= 0");
  return Status::ok();
}

}  // namespace

bool Editor::add_loss_term(const scene::LossTerm& term) {
  if (task_index < 0 || task_index >= int(doc.scene().tasks.size())) {
    message(Severity::warning, "add loss term: the scene has no task");
    return false;
  }
  if (Status st = check_loss_term(doc.scene(), term); !st) {
    message(Severity::warning, st.message());
    return false;
  }
  return doc.add_loss_term(task_index, term) >= 0;
}

bool Editor::remove_loss_term(int index) { return doc.remove_loss_term(task_index, index); }

bool Editor::set_loss_term(int index, const scene::LossTerm& term, uint64_t merge_key) {
  if (Status st = check_loss_term(doc.scene(), term); !st) {
    message(Severity::warning, st.message());
    return false;
  }
  return doc.set_loss_term(task_index, index, term, std::string("Loss term ") + scene::to_string(term.kind), merge_key);
}

// ---- backends

bool Editor::backend_available(const std::string& name, std::string* why) const {
  if (name == "cpu") return true;
  if (name == "cuda") {
    if (!cuda_available_ && why) *why = cuda_why_;
    return cuda_available_;
  }
  if (why) *why = "no backend named \"" + name + "\" (cpu, cuda)";
  return false;
}

bool Editor::set_backend(const std::string& name) {
  std::string why;
  if (!backend_available(name, &why)) {
    message(Severity::warning, "backend " + name + ": " + why);
    return false;
  }
  scene::Settings st = doc.scene().settings;
  st.backend = name;
  doc.end_merge();
  doc.set_settings(st, "Backend " + name);
  return true;
}

}  // namespace adj::editor
