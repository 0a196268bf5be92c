#include "app/editor/attach.h"

#include <chrono>
#include <limits>
#include <optional>

#include "app/serve/run_client.h"

namespace adj::editor {

using nlohmann::json;

RunAttachment::~RunAttachment() { detach(); }

Status RunAttachment::attach(const std::string& address, const std::string& token) {
  detach();
  auto client = app::RunClient::connect(address, token);
  if (!client) return client.status();
  {
    std::lock_guard lk(mu_);
    view_ = AttachView{};
    view_.attached = true;
    view_.endpoint = (*client)->endpoint();
    rollout_ = {};
    pending_control_.reset();
    quit_ = false;
  }
  // the client lives on the attachment's thread only
  thread_ = std::thread([this, owned = std::move(*client)]() {
    for (;;) {
      std::optional<app::wire::Command> command;
      {
        std::lock_guard lk(mu_);
        if (quit_) break;
        command = pending_control_;
        pending_control_.reset();
      }
      if (command) {
        auto r = owned->control(*command, std::chrono::seconds(5));
        std::lock_guard lk(mu_);
        view_.control_answer = !r ? r.status().message()
                                  : std::string(app::wire::to_string(*command)) +
                                        (r->accepted ? ": accepted" : ": not accepted: " + r->reason);
      }
      bool ended;
      {
        std::lock_guard lk(mu_);
        ended = view_.ended || !view_.error.empty();
      }
      if (ended) {  // nothing more will come: wait for a detach (or a command)
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, std::chrono::milliseconds(200), [&] { return quit_ || pending_control_.has_value(); });
        continue;
      }
      auto u = owned->poll(std::chrono::milliseconds(200));
      std::lock_guard lk(mu_);
      view_.malformed = owned->malformed();
      if (!u) {
        view_.error = u.status().message();
        continue;
      }
      view_.answered = view_.answered || u->answered;
      if (u->answered) view_.paused = u->paused;
      for (const json& r : u->records) {
        const std::string kind = r["kind"];
        if (kind == "hello") {
          view_.has_hello = true;
          view_.scene_path = r.value("scene_path", std::string());
          view_.scene_text = r.value("scene", std::string());
          view_.method = r.value("method", std::string());
          const json opts = r.value("options", json::object());
          if (opts.is_object()) {
            view_.task = opts.value("task", std::string());
            for (const char* k : {"iterations", "windows", "horizon"})
              if (auto it = opts.find(k); it != opts.end() && it->is_number_integer()) {
                view_.planned = it->get<int>();
                break;
              }
          }
        } else if (kind == "iteration") {
          auto num = [&](const char* k) {
            auto it = r.find(k);
            return it != r.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
          };
          ++view_.iterations;
          if (auto l = num("loss")) view_.loss.push_back(*l);
          if (auto g = num("grad_norm")) view_.grad_norm.push_back(*g);
          if (view_.method == "shac" || view_.method == "ahac")
            view_.train_return.push_back(num("train_return").value_or(std::numeric_limits<double>::quiet_NaN()));
          view_.last_ms = num("ms").value_or(0.0);
          view_.skipped_windows = int(num("skipped_windows").value_or(view_.skipped_windows));
          if (auto c = r.find("checkpoint_window"); c != r.end() && c->is_number_integer())
            view_.checkpoints.push_back("window " + std::to_string(c->get<int>()) + ": " +
                                        r.value("checkpoint_dir", std::string()));
        } else if (kind == "end") {
          view_.ended = true;
          view_.end_status = r.value("status", std::string("ended"));
        }
      }
      if (u->has_snapshot) {
        rollout_ = std::move(u->snapshot);
        ++view_.rollouts;
        view_.rollout_iteration = rollout_.iteration;
      }
    }
  });
  return {};
}

void RunAttachment::detach() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lk(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard lk(mu_);
  view_.attached = false;
}

void RunAttachment::view(AttachView& out) const {
  std::lock_guard lk(mu_);
  out = view_;
}

bool RunAttachment::rollout(std::uint64_t have, app::wire::Rollout& out, std::uint64_t* number) const {
  std::lock_guard lk(mu_);
  if (view_.rollouts == 0 || view_.rollouts == have) return false;
  out = rollout_;
  *number = view_.rollouts;
  return true;
}

void RunAttachment::control(app::wire::Command command) {
  {
    std::lock_guard lk(mu_);
    pending_control_ = command;
    view_.control_answer.clear();
  }
  cv_.notify_all();
}

}  // namespace adj::editor
