// RunServer: a headless run (`adjoint optimize --serve [HOST:]PORT`) published to viewers
// (`adjoint watch`, the editor's File > Attach) over one ZeroMQ ROUTER socket that answers
// polls (app/serve/wire.h).
//
// The run never waits on a viewer: the run's thread hands records and snapshots to a bounded
// queue that the server's own thread drains; when the queue holds too many snapshots, the
// oldest are dropped, iteration records never. Every record is kept in memory, so a viewer
// that attaches late gets the history. With --serve-control a viewer may pause, resume and
// stop the run (the run checks between iterations: hold()).
//
// Security: binds 127.0.0.1 unless a host is given; a bind to any other host needs a token
// (ADJ_TOKEN, else a random one printed at start) that every request must carry; requests
// without it are refused and counted, malformed frames dropped and counted, frames over 64 KiB
// cut off by ZeroMQ itself.
//
//   auto server = RunServer::open({.address = "5555"}, hello);   // hello: serve_hello()
//   for (...) {
//     if (server && (*server)->hold()) break;  // a viewer asked to stop
//     ... one iteration ...
//     (*server)->iteration(record);
//   }
//   (*server)->end(record);  // then the destructor waits briefly for viewers to get it
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/serve/wire.h"
#include "engine/core/status.h"
#include "engine/dist/communicator.h"

namespace adj::app {

struct ServeOptions {
  std::string address;       // [HOST:]PORT; PORT 0: a free port (printed)
  bool control = false;      // --serve-control: viewers may pause, resume, stop
  bool stoppable = true;     // false: the method cannot stop between iterations (stop is refused)
  bool checkpoints = false;  // the run writes checkpoints: a viewer may ask for one (else refused)
  int snapshot_every = 10;   // a snapshot (parameters, one rollout) every this many iterations
  int worlds = 4;            // --serve-worlds: policy methods' training copies whose rollouts a snapshot carries
  int queue_snapshots = 2;   // snapshots waiting for the server's thread before the oldest is dropped
  double wait_s = 0;         // --serve-wait: before the first iteration, wait this long for a viewer
};

// parameters and one rollout (its contacts, gradient, a few training copies' rollouts), as
// the run's thread hands them over (app/serve/publish.h); encoded on the server's thread, so
// the run pays a copy, not the encoding
using RunSnapshot = wire::Rollout;

struct ServeCounters {
  std::int64_t polls = 0;                // requests answered
  std::int64_t malformed = 0;            // frames that were not a request (dropped)
  std::int64_t refused = 0;              // requests with a wrong or missing token, control without --serve-control
  std::int64_t snapshots_dropped = 0;    // the queue was full
  std::int64_t snapshots_nonfinite = 0;  // a NaN or infinity in it (not published)
};

class RunServer {
 public:
  // binds and starts the server's thread; the hello is record 0. Errors: the address, a
  // port in use, a build without ZeroMQ.
  static Result<std::unique_ptr<RunServer>> open(const ServeOptions& options, nlohmann::json hello);
  virtual ~RunServer() = default;

  // the bound endpoint (tcp://HOST:PORT) and the token ("" when none is needed)
  virtual const std::string& endpoint() const = 0;
  virtual const std::string& token() const = 0;

  // one iteration's record ("iteration" and "loss" at least); never dropped
  virtual void iteration(nlohmann::json record) = 0;
  // whether iteration k is one to publish a snapshot of (every snapshot_every-th)
  virtual bool snapshot_due(int iteration) const = 0;
  // parameters and one rollout; the oldest waiting is dropped when the queue is full
  virtual void snapshot(RunSnapshot snapshot) = 0;
  // the last record ("status": finished | stopped | error, "iterations"); the destructor then
  // serves up to a few seconds more, until each viewer seen lately has the end (without one,
  // the destructor sends {"status": "error"}: the command returned early)
  virtual void end(nlohmann::json record) = 0;

  // waits until a viewer has polled, at most `seconds`; false when none came
  virtual bool wait_for_viewer(double seconds) = 0;
  // between iterations: waits while a viewer has paused the run (or until `give_up()`, asked
  // every 100 ms: Ctrl+C); true when a viewer asked to stop
  virtual bool hold(const std::function<bool()>& give_up = {}) = 0;
  // whether a viewer asked for a checkpoint since the last call (the run writes one after the
  // current iteration)
  virtual bool checkpoint_requested() = 0;
  virtual ServeCounters counters() const = 0;
};

// the hello record: the scene file's path and its JSON text, the method and its options
nlohmann::json serve_hello(const std::string& scene_path, const std::string& method, nlohmann::json options);

// under mpirun rank 0 serves: its answer to "does a viewer want this?" (a stop, a checkpoint)
// reaches every rank through a broadcast, so that the ranks stay together. `served`: the run
// has --serve (the same on every rank); without it, or in one process, `mine`
inline Result<bool> agreed_by_ranks(dist::Communicator& comm, bool served, bool mine) {
  if (!served || comm.size() == 1) return mine;
  dist::Bytes flag{std::uint8_t(mine ? 1 : 0)};
  if (Status st = comm.broadcast(flag, 0); !st) return st;
  return !flag.empty() && flag[0] != 0;
}

// opens the server of a command's --serve (nullptr without one), prints where it listens and
// waits for a viewer (ServeOptions::wait_s); an error is printed and returned
Result<std::unique_ptr<RunServer>> open_serve(const ServeOptions& options, nlohmann::json hello);

}  // namespace adj::app
