#include "app/recorder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "app/image_io.h"

namespace adj::app {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_queue_frames = 8;  // frames waiting for the encoder, at most

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// the program's path when it is found in PATH (or is a path itself), else empty
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

Status check_folder(const fs::path& folder, const std::string& what) {
  fs::path dir = folder.empty() ? fs::path(".") : folder;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::error(what + ": folder " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0) return Status::error(what + ": folder " + dir.string() + " is not writable");
  return Status::ok();
}

}  // namespace

VideoFormat video_format(const std::string& path) {
  for (const char* e : {".mp4", ".MP4", ".mov", ".mkv"})
    if (ends_with(path, e)) return VideoFormat::mp4;
  return VideoFormat::png_sequence;
}

void even_size(VideoFormat f, uint32_t& width, uint32_t& height, std::string* notice) {
  if (notice) notice->clear();
  if (f != VideoFormat::mp4 || (width % 2 == 0 && height % 2 == 0)) return;
  uint32_t w = width + width % 2, h = height + height % 2;
  if (notice)
    *notice = "H.264 needs even sizes: " + std::to_string(width) + "x" + std::to_string(height) + " rounded to " +
              std::to_string(w) + "x" + std::to_string(h);
  width = w;
  height = h;
}

Result<std::unique_ptr<Recorder>> Recorder::open(const RecorderOptions& o) {
  std::unique_ptr<Recorder> r(new Recorder(o));
  r->format_ = video_format(o.path);
  if (o.width == 0 || o.height == 0) return Status::error(o.path + ": empty frame size");

  if (r->format_ == VideoFormat::png_sequence) {
    // "dir/" -> dir/00000.png; "x_%05d.png" as given; "x.png" -> x_00000.png
    std::string p = o.path;
    if (ends_with(p, "/")) p += "%05d.png";
    else if (p.find('%') == std::string::npos) p = (ends_with(p, ".png") ? p.substr(0, p.size() - 4) : p) + "_%05d.png";
    r->png_pattern_ = p;
    if (Status st = check_folder(fs::path(p).parent_path(), o.path); !st) return st;
  } else {
    if (o.width % 2 || o.height % 2) return Status::error(o.path + ": H.264 needs even width and height");
    if (Status st = check_folder(fs::path(o.path).parent_path(), o.path); !st) return st;
    std::string ffmpeg = find_program(o.ffmpeg);
    if (ffmpeg.empty())
      return Status::error(o.path + ": MP4 needs ffmpeg, which is not installed (Debian package: ffmpeg, "
                                    "`apt-get install ffmpeg`); or write PNG frames instead, e.g. --out frames/%05d.png");
    // fragmented MP4: playable up to the last fragment even if ffmpeg dies; a keyframe a second
    std::string cmd = shell_quote(ffmpeg) + " -hide_banner -loglevel error -y -f rawvideo -pix_fmt rgba -s " +
                      std::to_string(o.width) + "x" + std::to_string(o.height) + " -framerate " +
                      std::to_string(o.fps) + " -i - -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -g " +
                      std::to_string(o.fps) + " -movflags +frag_keyframe+empty_moov+default_base_moof -flush_packets 1 " +
                      shell_quote(o.path);
    std::signal(SIGPIPE, SIG_IGN);  // a dead ffmpeg must be an error from fwrite, not a signal
    r->pipe_ = popen(cmd.c_str(), "w");
    if (!r->pipe_) return Status::error(o.path + ": cannot start ffmpeg");
  }
  r->thread_ = std::thread([p = r.get()] { p->run(); });
  return r;
}

Recorder::~Recorder() { close(); }

bool Recorder::push(render::Capture frame) {
  std::unique_lock lock(mutex_);
  if (failed_ || closing_) return false;
  if (frame.width != options_.width || frame.height != options_.height) {
    failed_ = true;
    error_ = options_.path + ": frame " + std::to_string(written_ + queue_.size()) + " is " +
             std::to_string(frame.width) + "x" + std::to_string(frame.height) + ", the video " +
             std::to_string(options_.width) + "x" + std::to_string(options_.height);
    return false;
  }
  cv_.wait(lock, [&] { return queue_.size() < k_queue_frames || failed_; });
  if (failed_) return false;
  queue_.push_back(std::move(frame));
  cv_.notify_all();
  return true;
}

void Recorder::run() {
  for (int index = 0;; ++index) {
    render::Capture c;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing and drained
      c = std::move(queue_.front());
      queue_.pop_front();
      cv_.notify_all();
    }
    bool ok = write_frame(c, index);
    std::lock_guard lock(mutex_);
    if (!ok) {
      failed_ = true;
      queue_.clear();
      cv_.notify_all();
      return;
    }
    ++written_;
  }
}

bool Recorder::write_frame(const render::Capture& c, int index) {
  if (format_ == VideoFormat::png_sequence) {
    char name[4096];
    std::snprintf(name, sizeof name, png_pattern_.c_str(), index);
    std::string err;
    if (!write_png(name, c.width, c.height, c.rgba, &err)) {
      std::lock_guard lock(mutex_);
      error_ = err + " (frame " + std::to_string(index) + "; the frames before it are written)";
      return false;
    }
    return true;
  }
  if (std::fwrite(c.rgba.data(), 1, c.rgba.size(), pipe_) != c.rgba.size()) {
    std::lock_guard lock(mutex_);
    error_ = options_.path + ": ffmpeg stopped taking frames at frame " + std::to_string(index) +
             " (killed, or the disk is full?); the file holds what was written before";
    return false;
  }
  return true;
}

Status Recorder::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return error_.empty() ? Status::ok() : Status::error(error_);
    closed_ = closing_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  if (pipe_) {
    int status = pclose(pipe_);
    pipe_ = nullptr;
    if (error_.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      error_ = options_.path + ": ffmpeg failed (exit status " +
               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
  }
  return error_.empty() ? Status::ok() : Status::error(error_);
}

int Recorder::frames_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

}  // namespace adj::app
