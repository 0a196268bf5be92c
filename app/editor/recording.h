#pragma once
// Recording the editor's viewport (Ctrl+R, the Record button): while recording, the
// simulation advances a fixed simulation time per video frame in lockstep with the
// capture, so the video plays at true speed however slow the machine is. The UI is never
// blocked: a frame is captured when the worker has taken the steps of the previous one.
#include <chrono>
#include <memory>
#include <string>

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
  bool caption = true;     // without panels: a caption bar (time, frame, optimizer iteration and loss)
};

class Recording {
 public:
  // frames of `width` x `height` (rounded down to even for H.264); the simulation advances
  // round(1 / (fps * frame_dt)) frames per video frame. Pauses the worker's free play.
  Status start(const RecordingOptions& options, uint32_t width, uint32_t height, double frame_dt, Worker& worker,
               const Snapshot& snap);
  bool active() const { return recorder_ != nullptr; }
  bool with_ui() const { return options_.with_ui; }
  bool caption() const { return options_.caption; }

  // this UI frame shows the state the next video frame needs: capture it
  bool ready(const Snapshot& snap) const;
  // after the captured frame was submitted: ask the worker for the next steps
  void advance(Worker& worker, const Snapshot& snap);
  // captured frames go to the encoder (cropped to the video size); false on failure
  bool push(render::Capture frame);
  // finish the file; the recorder's error, if any
  Status stop();

  int frames() const;
  double elapsed_s() const;
  const std::string& path() const { return options_.path; }

 private:
  RecordingOptions options_;
  std::unique_ptr<app::Recorder> recorder_;
  int steps_per_frame_ = 1;
  int expected_frame_ = 0;
  uint32_t width_ = 0, height_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace adj::editor
