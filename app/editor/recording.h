#pragma once
// Recording the editor's viewport (Ctrl+R, the Record button): while recording, the
// simulation advances a fixed simulation time per video frame in lockstep with the
// capture, so the video plays at true speed however slow the machine is. The UI is never
// blocked: a frame is captured when the worker has taken the steps of the previous one.
// While the optimizer runs, the video shows its iterations instead (rollout_video.h): each
// iteration's rollout in turn, one video frame per UI frame, the optimizer waiting for the
// video when it is ahead by Worker::k_rollout_queue iterations.
#include <chrono>
#include <memory>
#include <string>

#include "app/editor/rollout_video.h"
#include "app/recorder.h"
#include "engine/core/status.h"
#include "render/frame_loop.h"

namespace adj::editor {

class Worker;
struct Snapshot;

struct RecordingOptions {
  std::string path;        // .mp4 or PNG frames (app/recorder.h)
  int fps = 60;
  bool with_ui = false;    // keep the panels in the video (else only the viewport)
  bool caption = true;     // without panels: a caption bar (time, frame; a replay's iteration and loss)
  bool overlays = false;   // without panels: the editor's gizmo and selection outline too
  bool optimization = false;  // "record optimization": the optimization started with it is the
                              // video, which stops when its last iteration is in the file
};

class Recording {
 public:
  // frames of `width` x `height` (rounded down to even for H.264); the simulation advances
  // round(1 / (fps * frame_dt)) frames per video frame. Pauses the worker's free play and
  // asks it for the rollouts of optimizer iterations.
  Status start(const RecordingOptions& options, uint32_t width, uint32_t height, double frame_dt, Worker& worker,
               const Snapshot& snap);
  bool active() const { return recorder_ != nullptr; }
  bool with_ui() const { return options_.with_ui; }
  bool caption() const { return options_.caption; }
  bool overlays() const { return options_.overlays; }  // the gizmo and selection in a bare video

  // once per UI frame, before the UI: the optimizer's rollouts or the simulation; true
  // when a "record optimization" video is complete (the caller stops it)
  bool update(Worker& worker, const Snapshot& snap);
  // the optimizer's rollout this UI frame shows instead of the simulation, or null
  RolloutVideo* rollout() { return active() && rollout_mode_ && rollouts_.showing() ? &rollouts_ : nullptr; }
  // this UI frame shows the state the next video frame needs: capture it
  bool ready(const Snapshot& snap) const;
  // after the captured frame was submitted: the next rollout frame, or the next steps
  void advance(Worker& worker, const Snapshot& snap);
  // captured frames go to the encoder (cropped to the video size); false on failure
  bool push(render::Capture frame);
  // finish the file and stop the worker's rollouts; the recorder's error, if any
  Status stop(Worker& worker);

  // frames encoded so far; after stop(), all of the last recording's
  int frames() const;
  double elapsed_s() const;
  const std::string& path() const { return options_.path; }
  int steps_per_frame() const { return steps_per_frame_; }  // simulation frames per video frame

 private:
  RecordingOptions options_;
  std::unique_ptr<app::Recorder> recorder_;
  int steps_per_frame_ = 1;
  int expected_frame_ = 0;
  int stopped_frames_ = 0;
  RolloutVideo rollouts_;
  bool rollout_mode_ = false;  // this UI frame belongs to the optimizer's video
  uint64_t awaited_run_ = 0;   // "record optimization": the run it waits for (Snapshot::opt_run)
  uint32_t width_ = 0, height_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace adj::editor
