#pragma once
// RunAttachment: the editor attached to a served run (`adjoint optimize --serve`, File >
// Attach to run...). A thread of its own polls the run (app/serve/run_client.h) and keeps
// what arrived: the hello (the scene's JSON text), every iteration's loss and gradient norm,
// the newest rollout. The UI copies it each frame (view(), rollout()); it never waits on the
// network. Detaching closes the connection and leaves the run alone.
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/serve/wire.h"
#include "engine/core/status.h"

namespace adj::editor {

struct AttachView {
  bool attached = false;
  std::string endpoint;
  std::string error;  // refused, or the connection lost; the attachment then stops polling
  bool has_hello = false;
  std::string scene_path, scene_text, method, task;
  int planned = 0;                      // the iterations (windows, frames) the run was asked for; 0 unknown
  int iterations = 0;                   // iteration records received (receding horizon: frames flown)
  std::vector<double> loss, grad_norm;  // per iteration record that has them, in order
  // SHAC, AHAC: per iteration record, the training return (NaN in a record without one)
  std::vector<double> train_return;
  double last_ms = 0;       // the last record's time [ms], where sent
  int skipped_windows = 0;  // SHAC: windows skipped so far for an exploding gradient
  bool answered = false;    // the run has answered at least once
  bool paused = false, ended = false;
  std::string end_status;      // finished | stopped | error
  std::uint64_t rollouts = 0;  // snapshots received
  std::int64_t rollout_iteration = -1;
  std::int64_t malformed = 0;  // replies dropped as malformed
  std::string control_answer;  // the run's answer to the last control command
  // the checkpoints the run wrote ("window K: DIR"), oldest first (`--resume DIR` continues one)
  std::vector<std::string> checkpoints;
};

class RunAttachment {
 public:
  RunAttachment() = default;
  ~RunAttachment();
  RunAttachment(const RunAttachment&) = delete;
  RunAttachment& operator=(const RunAttachment&) = delete;

  // connects and starts polling (an earlier attachment is detached first); errors: the address
  Status attach(const std::string& address, const std::string& token);
  void detach();
  bool attached() const { return thread_.joinable(); }
  void view(AttachView& out) const;
  // the newest rollout when it is newer than `have` (its number: AttachView::rollouts)
  bool rollout(std::uint64_t have, app::wire::Rollout& out, std::uint64_t* number) const;
  // sent by the attachment's thread; the answer lands in AttachView::control_answer
  void control(app::wire::Command command);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  AttachView view_;
  app::wire::Rollout rollout_;
  std::optional<app::wire::Command> pending_control_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace adj::editor
