#pragma once
// `adjoint optimize --record progress.mp4`: each iteration's rollout in turn, with ghost
// trajectories of earlier iterations (coloured by loss), a loss plot inset and a caption.
#include <memory>
#include <string>
#include <vector>

#include "app/offscreen.h"
#include "app/recorder.h"
#include "app/scene_view.h"
#include "engine/scene/compile.h"

namespace adj::app {

struct OptimizeVideoOptions {
  std::string path;
  uint32_t width = 1280, height = 720;
  int fps = 60;
  int stride = 0;            // simulation frames per video frame; 0 = about 1 s of video per iteration
  bool validation = false;
};

class OptimizeVideo {
 public:
  static Result<std::unique_ptr<OptimizeVideo>> open(const scene::Scene& doc, const scene::CompiledScene& cs,
                                                     const scene::Task& task, OptimizeVideoOptions options);
  // one iteration: the rollout its evaluate measured (optim::TaskT::frames(), t = 0..horizon),
  // whose loss is `loss`
  Status add_iteration(const std::vector<State>& frames, int iteration, double loss);
  Status close();
  int frames() const { return recorder_->frames_written(); }
  int validation_errors() const { return gpu_->validation_errors(); }

 private:
  OptimizeVideo() = default;
  Status push_ready();
  // one video frame of the rollout: the list with the ghosts so far, the caption and loss inset
  Status render_frame(render::DrawList list, int iteration, double loss, double time);

  OptimizeVideoOptions options_;
  const scene::CompiledScene* cs_ = nullptr;
  std::string task_name_;
  int tracked_begin_ = 0, tracked_end_ = 0;  // the particles whose centre of mass is traced
  bool tracks_particles_ = true;              // else the body below
  int tracked_body_ = -1;                     // robot tasks: the body whose centre of mass is
  glm::vec3 frame_lo_{1e30f}, frame_hi_{-1e30f};  // what the camera frames so far
  std::unique_ptr<Offscreen> gpu_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<SceneView> view_;
  render::Camera camera_;
  std::vector<std::vector<glm::vec3>> trajectories_;  // one per recorded iteration
  std::vector<float> losses_;
};

}  // namespace adj::app
