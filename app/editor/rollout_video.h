#pragma once
// The video of an optimization inside an editor recording: the worker's recorded rollouts
// (Worker::set_record_rollouts), shown one video frame per UI frame, iteration after
// iteration, with the ghost trajectories of the iterations so far coloured by loss, a
// caption (task, iteration, loss, time) and the loss plot (log scale): the look of
// `adjoint optimize --record` (app/optimize_video.cpp), in the editor's own viewport.
#include <vector>

#include <glm/glm.hpp>

#include "app/editor/worker.h"
#include "render/line_builder.h"

namespace adj::editor {

class RolloutVideo {
 public:
  // once per UI frame: when the current rollout has been shown, the next finished one from
  // the worker; true while there is a frame to show (and capture) in this UI frame
  bool update(Worker& worker);
  bool showing() const { return frame_ < rollout_.states.size(); }
  // the frame to show (showing() only)
  const State& state() const { return rollout_.states[frame_]; }
  // scenes with robots: the frame's joints (null when it has none)
  const State* rigid_state() const { return showing() && !state().joint_q.empty() ? &state() : nullptr; }
  // the frame was captured: the next one
  void advance() { ++frame_; }
  void reset();

  // ghost trajectories: earlier iterations, and this one up to the frame shown
  void ghosts(render::LineBuilder& out);
  // the caption window with the loss plot inset, at `pos` [px] with ImGui's `pivot`
  void draw_caption(glm::vec2 pos, glm::vec2 pivot) const;

 private:
  RecordedRollout rollout_;
  size_t frame_ = 0;                           // index into rollout_.states
  uint64_t run_ = 0;                           // the optimization the history belongs to
  std::vector<std::vector<glm::vec3>> paths_;  // one per shown iteration, the current one last
  std::vector<float> losses_;                  // of those iterations
};

}  // namespace adj::editor
