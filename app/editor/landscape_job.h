#pragma once
// A loss landscape computed off the UI thread (engine/optim/landscape.h): the editor starts
// one on a copy of the document, polls its progress each frame, may cancel it, and reads
// the result when it is done. Starting another cancels the one running.
//
//   job.start(doc.scene(), doc.base_dir(), "hit_target", options, doc.revision());
//   auto v = job.view();  // running, done / total, error, result
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/optim/landscape.h"

namespace adj::editor {

class LandscapeJob {
 public:
  LandscapeJob() = default;
  ~LandscapeJob();
  LandscapeJob(const LandscapeJob&) = delete;
  LandscapeJob& operator=(const LandscapeJob&) = delete;

  void start(scene::Scene doc, std::string base_dir, std::string task, optim::LandscapeOptions options,
             std::uint64_t generation);
  void cancel();  // returns at once; the job stops after the rollouts in flight

  struct View {
    bool running = false;
    int done = 0, total = 0;
    std::string task, error;                         // error: why the last one failed
    std::shared_ptr<const optim::Landscape> result;  // the last one that finished
    std::uint64_t generation = 0;                    // document revision it was computed on
  };
  View view() const;

 private:
  void join();
  mutable std::mutex mu_;
  View view_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace adj::editor
