#include "app/sim_session.h"

#include <filesystem>

#include "engine/scene/scene_json.h"

namespace adj::app {

Status SimSession::load(const std::string& path) {
  auto doc = scene::load_scene(path);
  if (!doc) return doc.status();
  auto cs = scene::compile<float>(*doc, std::filesystem::path(path).parent_path().string());
  if (!cs) return Status::error(path + ": " + cs.status().message());
  path_ = path;
  doc_ = std::make_unique<scene::Scene>(std::move(*doc));
  compiled_ = std::make_unique<scene::CompiledScene>(std::move(*cs));
  view_ = std::make_unique<SceneView>(*doc_, *compiled_);
  solver_ = std::make_unique<Solver>(SolverOptions{.substeps = compiled_->substeps});
  control_ = compiled_->model.make_control();
  reset();
  return Status::ok();
}

void SimSession::reset() {
  state_ = compiled_->model.make_state();
  next_ = compiled_->model.make_state();
  contacts_.clear();
  frame_ = 0;
}

Status SimSession::step() {
  Status st = solver_->step(compiled_->model, state_, next_, control_, compiled_->frame_dt, &contacts_);
  if (!st) return Status::error("frame " + std::to_string(frame_) + ": " + st.message());
  std::swap(state_, next_);
  ++frame_;
  return Status::ok();
}

}  // namespace adj::app
