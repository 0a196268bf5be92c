#pragma once
// `adjoint optimize --record progress.mp4`: each iteration's rollout in turn, with ghost
// trajectories of earlier iterations (coloured by loss), a loss plot inset and a caption.
#include <memory>
#include <string>
#include <vector>

#include "app/offscreen.h"
#include "app/recorder.h"
#include "app/scene_view.h"
#include "engine/optim/rigid_task.h"
#include "engine/optim/trainer.h"

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
  // render the rollout at parameters theta (whose loss is `loss`) of the runner's task
  Status add_iteration(const optim::TaskRunnerT<float>& runner, const std::vector<float>& theta, int iteration,
                       double loss);
  // a robot task's iteration: the rollout the runner's last iterate() measured (its frames)
  Status add_robot_iteration(const optim::RigidTaskRunnerT<float>& runner, int iteration, double loss);
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
  int tracked_body_ = -1;                     // robot tasks: the body whose centre of mass is
  glm::vec3 robot_lo_{1e30f}, robot_hi_{-1e30f};  // robot tasks: what the camera frames so far
  std::unique_ptr<Offscreen> gpu_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<SceneView> view_;
  render::Camera camera_;
  std::vector<std::vector<glm::vec3>> trajectories_;  // one per recorded iteration
  std::vector<float> losses_;
};

}  // namespace adj::app
