#pragma once
// Video out of captured frames: MP4 (H.264) through an ffmpeg process fed raw RGBA, or a
// PNG sequence. Frames are encoded on a thread of their own, so the caller only queues
// them; the file is always finalized by close(), and an MP4 is written fragmented so that
// even a killed ffmpeg leaves a playable file of what it got.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/core/status.h"
#include "render/frame_loop.h"

namespace adj::app {

struct RecorderOptions {
  std::string path;          // "demo.mp4", or PNG frames: "frames/%05d.png" or "frames/"
  uint32_t width = 0, height = 0;
  int fps = 60;
  std::string ffmpeg = "ffmpeg";  // program name or path
};

enum class VideoFormat { mp4, png_sequence };

// mp4 for *.mp4 (and *.mov, *.mkv), PNG frames otherwise
VideoFormat video_format(const std::string& path);
// H.264 with yuv420p needs even sizes: rounds up and says so in notice (else leaves it empty)
void even_size(VideoFormat f, uint32_t& width, uint32_t& height, std::string* notice);

class Recorder {
 public:
  // checks the output folder and, for MP4, that ffmpeg exists; starts the encoder thread
  static Result<std::unique_ptr<Recorder>> open(const RecorderOptions& options);
  ~Recorder();  // closes if still open

  // queue one frame (its size must match); false once the recorder has failed
  bool push(render::Capture frame);
  // flush the queue, end the stream, wait for ffmpeg; the error of the first failure
  Status close();

  int frames_written() const;
  const RecorderOptions& options() const { return options_; }

 private:
  explicit Recorder(RecorderOptions options) : options_(std::move(options)) {}
  void run();
  bool write_frame(const render::Capture& c, int index);

  RecorderOptions options_;
  VideoFormat format_ = VideoFormat::mp4;
  std::string png_pattern_;  // printf pattern for PNG frames
  FILE* pipe_ = nullptr;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<render::Capture> queue_;
  bool closing_ = false;
  bool closed_ = false;
  bool failed_ = false;
  std::string error_;
  int written_ = 0;
};

}  // namespace adj::app
