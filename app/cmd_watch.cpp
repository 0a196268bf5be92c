// `adjoint watch ADDRESS [--token T]`: prints a served run's records as they come (the
// history first, then live) and exits 0 when the run ends. `--send pause|resume|stop` sends
// one control command instead (the run needs --serve-control).
#include "app/cmd_watch.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "app/serve/run_client.h"

namespace adj::app {

namespace {

using nlohmann::json;

// the record's numbers after its iteration and loss, as "key value" pairs
std::string extras(const json& r) {
  std::string s;
  for (const auto& [key, v] : r.items()) {
    if (key == "seq" || key == "kind" || key == "iteration" || key == "loss") continue;
    if (!v.is_number() && !v.is_boolean() && !v.is_string()) continue;
    s += "  " + key + " " + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return s;
}

void print_record(const json& r) {
  const std::string kind = r["kind"];
  if (kind == "hello") {
    const json opts = r.value("options", json::object());
    std::printf("run: %s, method %s, options %s\n", r.value("scene_path", std::string("?")).c_str(),
                r.value("method", std::string("?")).c_str(), opts.dump().c_str());
  } else if (kind == "iteration") {
    const json& loss = r.contains("loss") ? r["loss"] : json();
    std::printf("iteration %lld", static_cast<long long>(r["iteration"].get<std::int64_t>()));
    if (loss.is_number()) std::printf("  loss %.9g", loss.get<double>());
    std::printf("%s\n", extras(r).c_str());
  } else {
    std::printf("end: %s%s\n", r.value("status", std::string("?")).c_str(), extras(r).c_str());
  }
}

// what a snapshot holds: "snapshot of iteration I: P parameters, F frames" and, where it has
// them, its contacts (summed over the frames), gradient entries and training copies' rollouts
void print_snapshot(const wire::Rollout& s, std::size_t bytes) {
  std::printf("snapshot of iteration %lld: %zu parameters, %zu frames", static_cast<long long>(s.iteration),
              s.parameters.size(), s.particle_q.size());
  long long contacts = 0, body_contacts = 0;
  for (const auto& c : s.contacts) contacts += c.count();
  for (const auto& c : s.body_contacts) body_contacts += c.count();
  if (!s.contacts.empty()) std::printf(", %lld particle contacts", contacts);
  if (!s.body_contacts.empty()) std::printf(", %lld body contacts", body_contacts);
  if (!s.gradient_blocks.empty()) std::printf(", gradient of %zu entries", s.gradient.size());
  if (!s.worlds.empty()) std::printf(", %zu worlds of %zu frames", s.worlds.size(), s.worlds[0].particle_q.size());
  std::printf(" (%.0f kB)\n", double(bytes) / 1e3);
}

wire::Command parse_command(const std::string& s) {
  if (s == "resume") return wire::Command::resume;
  if (s == "stop") return wire::Command::stop;
  if (s == "checkpoint") return wire::Command::checkpoint;
  return wire::Command::pause;
}

}  // namespace

int run_watch(const WatchOptions& o) {
  std::string token = o.token;
  if (token.empty())
    if (const char* env = std::getenv("ADJ_TOKEN")) token = env;
  auto client = RunClient::connect(o.address, token);
  if (!client) return std::fprintf(stderr, "adjoint watch: %s\n", client.status().message().c_str()), 1;
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000));
  if (!o.send.empty()) {
    auto reply = (*client)->control(parse_command(o.send), timeout);
    if (!reply) return std::fprintf(stderr, "adjoint watch: %s\n", reply.status().message().c_str()), 1;
    std::printf("%s: %s%s%s\n", o.send.c_str(), reply->accepted ? "accepted" : "not accepted",
                reply->reason.empty() ? "" : ": ", reply->reason.c_str());
    return reply->accepted ? 0 : 3;
  }
  std::printf("watching %s\n", (*client)->endpoint().c_str());
  std::fflush(stdout);
  auto last_answer = std::chrono::steady_clock::now();
  bool was_paused = false;
  for (;;) {
    auto u = (*client)->poll(std::chrono::milliseconds(500));
    if (!u) return std::fprintf(stderr, "adjoint watch: %s\n", u.status().message().c_str()), 1;
    const auto now = std::chrono::steady_clock::now();
    if (u->answered) last_answer = now;
    for (const json& r : u->records) print_record(r);
    if (u->has_snapshot) print_snapshot(u->snapshot, u->snapshot_bytes);
    if (u->answered && u->paused != was_paused) std::printf("%s\n", u->paused ? "paused" : "resumed");
    if (u->answered) was_paused = u->paused;
    std::fflush(stdout);
    if (u->ended) break;
    if (now - last_answer > timeout) {
      std::fprintf(stderr, "adjoint watch: no answer from %s for %g s\n", (*client)->endpoint().c_str(), o.timeout);
      if ((*client)->malformed() > 0)
        std::fprintf(stderr, "adjoint watch: %lld malformed replies dropped, the last: %s\n",
                     static_cast<long long>((*client)->malformed()), (*client)->last_malformed().c_str());
      return 1;
    }
  }
  if ((*client)->malformed() > 0)
    std::printf("%lld malformed replies dropped, the last: %s\n", static_cast<long long>((*client)->malformed()),
                (*client)->last_malformed().c_str());
  return 0;
}

}  // namespace adj::app
