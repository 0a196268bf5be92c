#include "app/editor/landscape_job.h"

namespace adj::editor {

LandscapeJob::~LandscapeJob() {
  cancel();
  join();
}

void LandscapeJob::join() {
  if (thread_.joinable()) thread_.join();
}

void LandscapeJob::cancel() { cancel_ = true; }

void LandscapeJob::start(scene::Scene doc, std::string base_dir, std::string task, optim::LandscapeOptions options,
                         std::uint64_t generation) {
  cancel();
  join();
  cancel_ = false;
  {
    std::lock_guard lock(mu_);
    view_.running = true;
    view_.done = 0;
    view_.total = 0;
    view_.task = task;
    view_.error.clear();
  }
  thread_ = std::thread([this, doc = std::move(doc), base_dir = std::move(base_dir), task = std::move(task),
                         options = std::move(options), generation] {
    auto progress = [this](int done, int total) {
      std::lock_guard lock(mu_);
      view_.done = done;
      view_.total = total;
    };
    auto l = optim::compute_landscape<float>(doc, base_dir, task, options, progress, &cancel_);
    std::lock_guard lock(mu_);
    view_.running = false;
    if (l) {
      view_.result = std::make_shared<const optim::Landscape>(std::move(*l));
      view_.generation = generation;
    } else {
      view_.error = l.status().message();
    }
  });
}

LandscapeJob::View LandscapeJob::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

}  // namespace adj::editor
