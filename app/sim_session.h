#pragma once
// The scene the editor shows: its document, the compiled model, the current state and
// the solver that advances it. Loading a new file replaces everything only on success, so
// a broken file leaves the current scene untouched.
// TODO(editor issue): simulation moves to a worker thread that publishes snapshots; for
// now the UI thread steps it (fine for the small reference scenes).
#include <memory>
#include <string>

#include "app/scene_view.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"
#include "engine/solver/solver.h"

namespace adj::app {

class SimSession {
 public:
  // load and compile; on error the session keeps its previous scene
  Status load(const std::string& path);
  bool loaded() const { return compiled_ != nullptr; }

  Status step();   // one frame (settings.substeps solver substeps)
  void reset();    // back to the initial state

  const scene::Scene& document() const { return *doc_; }
  const scene::CompiledScene& compiled() const { return *compiled_; }
  const State& state() const { return state_; }
  const Contacts& contacts() const { return contacts_; }
  SceneView& view() { return *view_; }
  int frame() const { return frame_; }
  double time() const { return frame_ * double(compiled_->frame_dt); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<scene::Scene> doc_;
  std::unique_ptr<scene::CompiledScene> compiled_;
  std::unique_ptr<SceneView> view_;
  std::unique_ptr<Solver> solver_;
  State state_, next_;
  Control control_;
  Contacts contacts_;
  int frame_ = 0;
};

}  // namespace adj::app
