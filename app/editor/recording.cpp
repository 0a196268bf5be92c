#include "app/editor/recording.h"

#include <cmath>
#include <cstring>

#include "app/editor/worker.h"

namespace adj::editor {

Status Recording::start(const RecordingOptions& o, uint32_t width, uint32_t height, double frame_dt, Worker& worker,
                        const Snapshot& snap) {
  if (active()) return Status::error("already recording to " + options_.path);
  options_ = o;
  width_ = width;
  height_ = height;
  if (app::video_format(o.path) == app::VideoFormat::mp4) {  // H.264: even sizes, by cropping
    width_ -= width_ % 2;
    height_ -= height_ % 2;
  }
  auto rec = app::Recorder::open({o.path, width_, height_, o.fps});
  if (!rec) {
    worker.set_record_rollouts(0);  // a "record optimization" asked for them already
    return rec.status();
  }
  recorder_ = std::move(*rec);
  worker.set_record_rollouts(o.fps);
  rollouts_.reset();
  // the optimization started in this UI frame is published as the next run; until then
  // the video waits for it
  awaited_run_ = o.optimization ? snap.opt_run + 1 : 0;
  rollout_mode_ = o.optimization;
  steps_per_frame_ = std::max(1, int(std::lround(1.0 / (o.fps * frame_dt))));
  worker.play(false);
  expected_frame_ = snap.frame;
  start_ = std::chrono::steady_clock::now();
  return Status::ok();
}

bool Recording::update(Worker& worker, const Snapshot& snap) {
  if (!active()) return false;
  const bool waiting = snap.opt_run < awaited_run_;  // the optimization is not published yet
  const bool showing = rollouts_.update(worker);
  rollout_mode_ = showing || waiting || snap.recording_rollouts || worker.rollouts_queued() > 0;
  if (!options_.optimization || rollout_mode_) return false;
  // complete: nothing queued, nothing shown, and the worker has nothing left to do (idle()
  // also covers requests posted but not yet published)
  return snap.opt_phase != OptPhase::paused && worker.idle() && worker.rollouts_queued() == 0;
}

bool Recording::ready(const Snapshot& snap) const {
  if (!active()) return false;
  if (rollout_mode_) return rollouts_.showing();
  return snap.pending_steps == 0 && snap.frame >= expected_frame_;
}

void Recording::advance(Worker& worker, const Snapshot& snap) {
  if (rollout_mode_) {
    rollouts_.advance();
    return;
  }
  expected_frame_ = snap.frame + steps_per_frame_;
  worker.step(steps_per_frame_);
}

bool Recording::push(render::Capture frame) {
  if (!active()) return false;
  if (frame.width != width_ || frame.height != height_) {
    // crop to the video's size (the window may have an odd width, or have been resized)
    render::Capture c;
    c.frame = frame.frame;
    c.width = width_;
    c.height = height_;
    c.rgba.assign(size_t(width_) * height_ * 4, 0);
    uint32_t w = std::min(width_, frame.width), h = std::min(height_, frame.height);
    for (uint32_t y = 0; y < h; ++y)
      std::memcpy(&c.rgba[size_t(y) * width_ * 4], &frame.rgba[size_t(y) * frame.width * 4], size_t(w) * 4);
    frame = std::move(c);
  }
  return recorder_->push(std::move(frame));
}

Status Recording::stop(Worker& worker) {
  if (!active()) return Status::ok();
  worker.set_record_rollouts(0);
  rollouts_.reset();
  rollout_mode_ = false;
  Status st = recorder_->close();
  stopped_frames_ = recorder_->frames_written();
  recorder_.reset();
  return st;
}

int Recording::frames() const { return recorder_ ? recorder_->frames_written() : stopped_frames_; }

double Recording::elapsed_s() const {
  return active() ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() : 0.0;
}

}  // namespace adj::editor
