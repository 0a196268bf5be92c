// RunClient: the viewer's side of the run server (app/serve/run_server.h): polls a run for
// its records (history first, then live) and its newest snapshot, and sends control commands.
// One ZeroMQ DEALER socket; every reply is decoded as hostile input (app/serve/wire.h):
// malformed replies are dropped and counted. Used by `adjoint watch` and the editor's
// File > Attach (on the editor's attach thread).
//
//   auto c = RunClient::connect("127.0.0.1:5555", token);
//   for (;;) {
//     auto u = (*c)->poll(std::chrono::milliseconds(500));  // what arrived, in order, once each
//     if (!u) { report(u.status()); break; }                  // refused (wrong token)
//     for (auto& r : u->records) show(r);
//     if (u->ended) break;
//   }
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/serve/wire.h"
#include "engine/core/status.h"

namespace adj::app {

struct RunUpdate {
  std::vector<nlohmann::json> records;  // new records, seq order, none twice
  bool has_snapshot = false;
  wire::Rollout snapshot;          // the newest snapshot, when one arrived
  std::size_t snapshot_bytes = 0;  // the size of the reply that carried it
  bool paused = false;
  bool ended = false;      // the end record has arrived
  bool answered = false;   // the run answered within the timeout
  std::int64_t total = 0;  // records the run holds
};

class RunClient {
 public:
  // connects (ZeroMQ connects in the background: a run that starts later is found then)
  static Result<std::unique_ptr<RunClient>> connect(const std::string& address, const std::string& token);
  virtual ~RunClient() = default;
  // waits up to `timeout` for the run's answer; an error when the run refused the viewer
  virtual Result<RunUpdate> poll(std::chrono::milliseconds timeout) = 0;
  // a control command; the run's answer (accepted, or why not)
  virtual Result<wire::Reply> control(wire::Command command, std::chrono::milliseconds timeout) = 0;
  virtual std::int64_t malformed() const = 0;             // replies dropped as malformed
  virtual const std::string& last_malformed() const = 0;  // why the last one was
  virtual const std::string& endpoint() const = 0;
};

}  // namespace adj::app
