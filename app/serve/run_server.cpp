#include "app/serve/run_server.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/serve/address.h"

#if ADJ_HAS_ZMQ
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "app/serve/wire.h"
#endif

namespace adj::app {

nlohmann::json serve_hello(const std::string& scene_path, const std::string& method, nlohmann::json options) {
  std::ifstream f(scene_path, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  return {{"kind", "hello"},
          {"scene_path", scene_path},
          {"scene", text.str()},
          {"method", method},
          {"options", std::move(options)}};
}

#if ADJ_HAS_ZMQ

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr auto k_park = std::chrono::milliseconds(250);  // a poll with nothing new waits this long
constexpr auto k_linger = std::chrono::seconds(3);       // after the end, at most this long
constexpr auto k_recent = std::chrono::seconds(3);       // a viewer polled this recently waits for the end
constexpr auto k_forget = std::chrono::seconds(30);      // a viewer silent this long is forgotten
constexpr std::size_t k_max_viewers = 256;               // past this many, the longest silent is forgotten
constexpr int k_linger_ms = 1000;                        // closing: replies still queued get this long
constexpr std::size_t k_batch_records = 1000;            // records per reply (a late viewer's history)

bool same_token(const std::string& a, const std::string& b) {
  // every byte compared, so the time does not tell how much of a guess was right
  unsigned diff = unsigned(a.size() != b.size());
  for (std::size_t i = 0; i < a.size(); ++i) diff |= unsigned(char(a[i] ^ (i < b.size() ? b[i] : 0)));
  return diff == 0;
}

class ZmqRunServer final : public RunServer {
 public:
  ZmqRunServer(const ServeOptions& o, std::string token) : options_(o), token_(std::move(token)) {}

  Status bind(const ServeAddress& a) {
    try {
      socket_ = zmq::socket_t(context_, zmq::socket_type::router);
      socket_.set(zmq::sockopt::maxmsgsize, std::int64_t(wire::k_max_request_bytes + 1024));
      // the last replies (the end) still go out when the run exits: at most k_linger_ms later
      socket_.set(zmq::sockopt::linger, k_linger_ms);
      socket_.set(zmq::sockopt::sndhwm, 64);
      socket_.bind(a.endpoint());
      endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t& e) {
      return Status::error(
          "--serve " + options_.address + ": cannot listen on " + a.endpoint() + ": " + e.what() +
          (e.num() == EADDRINUSE ? " (another program holds the port; pick another, or 0 for any)" : ""));
    }
    return {};
  }

  void start(json hello) {
    hello["seq"] = 0;
    history_.push_back(hello.dump());
    thread_ = std::thread([this] { serve(); });
  }

  ~ZmqRunServer() override {
    if (!thread_.joinable()) return;          // never started: the bind failed
    if (!ended_) end({{"status", "error"}});  // the command returned early: its error is printed
    {
      std::lock_guard lk(queue_mu_);
      closing_ = true;
    }
    thread_.join();
    const ServeCounters c = counters();
    std::printf("served %lld polls; dropped %lld malformed frames, refused %lld requests, %lld snapshots\n",
                static_cast<long long>(c.polls), static_cast<long long>(c.malformed), static_cast<long long>(c.refused),
                static_cast<long long>(c.snapshots_dropped + c.snapshots_nonfinite));
  }

  const std::string& endpoint() const override { return endpoint_; }
  const std::string& token() const override { return token_; }

  void iteration(json record) override {
    record["kind"] = "iteration";
    push({false, std::move(record), {}});
  }
  bool snapshot_due(int iteration) const override {
    return options_.snapshot_every > 0 && iteration % options_.snapshot_every == 0;
  }
  void snapshot(RunSnapshot snapshot) override {
    std::lock_guard lk(queue_mu_);
    int waiting = 0;
    for (const Item& i : queue_) waiting += i.snapshot;
    if (waiting >= options_.queue_snapshots) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if (it->snapshot) {
          queue_.erase(it);
          ++dropped_;
          break;
        }
    }
    queue_.push_back({true, {}, std::move(snapshot)});
  }
  void end(json record) override {
    if (ended_) return;
    ended_ = true;
    record["kind"] = "end";
    push({false, std::move(record), {}});
  }

  bool wait_for_viewer(double seconds) override {
    std::unique_lock lk(control_mu_);
    return control_cv_.wait_for(lk, std::chrono::duration<double>(seconds), [&] { return viewer_seen_; });
  }

  bool hold(const std::function<bool()>& give_up) override {
    std::unique_lock lk(control_mu_);
    while (!control_cv_.wait_for(lk, std::chrono::milliseconds(100), [&] { return !paused_ || stop_; }))
      if (give_up && give_up()) break;
    return stop_;
  }

  bool checkpoint_requested() override {
    std::lock_guard lk(control_mu_);
    return std::exchange(checkpoint_, false);
  }

  ServeCounters counters() const override {
    std::lock_guard lk(queue_mu_);
    ServeCounters c = counters_;
    c.snapshots_dropped = dropped_;
    return c;
  }

 private:
  struct Item {
    bool snapshot = false;
    json body;         // a record
    RunSnapshot shot;  // a snapshot
  };
  struct Viewer {
    Clock::time_point seen;
    std::int64_t delivered = 0;  // records sent so far
    bool parked = false;
    Clock::time_point parked_at;
    std::int64_t since = 0, snapshot = -1;
  };

  void push(Item item) {
    std::lock_guard lk(queue_mu_);
    queue_.push_back(std::move(item));
  }

  // the server's thread: take what the run queued, answer requests, linger after the end
  void serve() {
    bool end_seen = false;
    Clock::time_point end_at{};
    for (;;) {
      bool closing = drain(&end_seen);
      if (end_seen && end_at == Clock::time_point{}) end_at = Clock::now();
      answer_parked(false);
      forget_gone();
      if (closing && end_seen && (everyone_has_end() || Clock::now() - end_at > k_linger)) break;
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
      for (int n = 0; n < 256 && receive(); ++n) {
      }
    }
    answer_parked(true);
  }

  // moves the queue into the history; true once the destructor is waiting
  bool drain(bool* end_seen) {
    std::deque<Item> items;
    bool closing;
    {
      std::lock_guard lk(queue_mu_);
      items.swap(queue_);
      closing = closing_;
    }
    for (Item& i : items) {
      if (i.snapshot) {
        if (finite(i.shot))
          snapshot_text_ = wire::encode_snapshot(++snapshot_id_, i.shot);
        else
          count(&ServeCounters::snapshots_nonfinite);  // a viewer would refuse it (wire.h)
      } else {
        if (i.body.value("kind", "") == "end") *end_seen = true;
        i.body["seq"] = std::int64_t(history_.size());
        history_.push_back(i.body.dump(-1, ' ', false, json::error_handler_t::replace));
      }
    }
    return closing;
  }

  // viewers silent for a while are forgotten, so that connections that come and go (or forge
  // identities) cannot grow the table without bound
  void forget_gone() {
    const auto now = Clock::now();
    std::erase_if(viewers_, [&](const auto& kv) { return !kv.second.parked && now - kv.second.seen > k_forget; });
    while (viewers_.size() > k_max_viewers)
      viewers_.erase(std::min_element(viewers_.begin(), viewers_.end(),
                                      [](const auto& a, const auto& b) { return a.second.seen < b.second.seen; }));
  }

  static bool finite(const RunSnapshot& s) {
    auto all = [](const auto& v) { return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }); };
    auto frames = [&](const std::vector<std::vector<float>>& f) { return std::all_of(f.begin(), f.end(), all); };
    auto contacts = [&](const std::vector<wire::FrameContacts>& c) {
      return std::all_of(c.begin(), c.end(),
                         [&](const auto& x) { return all(x.point) && all(x.normal) && all(x.force); });
    };
    return all(s.parameters) && frames(s.particle_q) && frames(s.joint_q) && contacts(s.contacts) &&
           contacts(s.body_contacts) && all(s.step_grad_norms) && all(s.gradient) &&
           std::all_of(s.worlds.begin(), s.worlds.end(),
                       [&](const wire::WorldFrames& w) { return frames(w.particle_q) && frames(w.joint_q); });
  }

  bool everyone_has_end() const {
    const auto now = Clock::now();
    for (const auto& [id, v] : viewers_)
      if (now - v.seen < k_recent && v.delivered < std::int64_t(history_.size())) return false;
    return true;
  }

  // one frame set from the socket: [viewer identity][request]; false when none is waiting
  bool receive() {
    std::vector<zmq::message_t> frames;
    for (;;) {
      zmq::message_t m;
      if (!socket_.recv(m, zmq::recv_flags::dontwait)) return !frames.empty();
      bool more = m.more();
      if (frames.size() < 4) frames.push_back(std::move(m));
      if (!more) break;
    }
    if (frames.size() != 2) return count(&ServeCounters::malformed), true;
    std::string id = frames[0].to_string();
    auto req = wire::decode_request(frames[1].to_string_view());
    if (!req) return count(&ServeCounters::malformed), true;
    if (!token_.empty() && !same_token(req->token, token_)) {
      count(&ServeCounters::refused);
      send(id, wire::encode_refused("wrong or missing token (the run printed it, or set ADJ_TOKEN)"));
      return true;
    }
    if (req->kind == wire::Request::Kind::control) return control(id, req->command), true;
    count(&ServeCounters::polls);
    if (viewers_.empty()) {
      {
        std::lock_guard lk(control_mu_);
        viewer_seen_ = true;
      }
      control_cv_.notify_all();
    }
    Viewer& v = viewers_[id];
    v.seen = Clock::now();
    v.since = std::min<std::int64_t>(req->since, std::int64_t(history_.size()));
    v.snapshot = req->snapshot;
    v.parked = true;
    v.parked_at = v.seen;
    return true;
  }

  void control(const std::string& id, wire::Command c) {
    std::string refusal;
    if (!options_.control)
      refusal = "this run was started without --serve-control";
    else if (c == wire::Command::stop && !options_.stoppable)
      refusal = "this method runs to its end (pause holds it)";
    else if (c == wire::Command::checkpoint && !options_.checkpoints)
      refusal = "this run writes no checkpoints (--checkpoint-dir)";
    if (!refusal.empty()) {
      count(&ServeCounters::refused);
      send(id, wire::encode_control_reply(c, false, refusal));
      return;
    }
    {
      std::lock_guard lk(control_mu_);
      if (c == wire::Command::pause) paused_ = true;
      if (c == wire::Command::resume) paused_ = false;
      if (c == wire::Command::stop) stop_ = true;
      if (c == wire::Command::checkpoint) checkpoint_ = true;
    }
    control_cv_.notify_all();
    send(id, wire::encode_control_reply(c, true, ""));
  }

  // answers each waiting poll that has something new, or has waited long enough (all: at exit)
  void answer_parked(bool all) {
    const auto now = Clock::now();
    const std::int64_t total = std::int64_t(history_.size());
    bool paused;
    {
      std::lock_guard lk(control_mu_);
      paused = paused_;
    }
    for (auto& [id, v] : viewers_) {
      if (!v.parked) continue;
      const bool fresh_snapshot = snapshot_id_ > v.snapshot && !snapshot_text_.empty();
      if (!all && v.since >= total && !fresh_snapshot && now - v.parked_at < k_park) continue;
      const std::size_t count = std::min<std::size_t>(k_batch_records, std::size_t(total - v.since));
      const std::int64_t next = v.since + std::int64_t(count);
      send(id, wire::encode_batch(next, total, paused, history_, std::size_t(v.since), count,
                                  fresh_snapshot ? &snapshot_text_ : nullptr));
      v.delivered = std::max(v.delivered, next);
      v.parked = false;
    }
  }

  void send(const std::string& id, const std::string& payload) {
    try {
      if (!socket_.send(zmq::buffer(id), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return;
      (void)socket_.send(zmq::buffer(payload), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // a viewer gone (EHOSTUNREACH) or slow: it polls again
    }
  }

  void count(std::int64_t ServeCounters::*field) {
    std::lock_guard lk(queue_mu_);
    ++(counters_.*field);
  }

  ServeOptions options_;
  std::string token_, endpoint_;
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::thread thread_;
  bool ended_ = false;  // the run's thread only

  // run thread -> server thread
  mutable std::mutex queue_mu_;
  std::deque<Item> queue_;
  bool closing_ = false;
  std::int64_t dropped_ = 0;
  ServeCounters counters_;

  // viewers -> run thread
  std::mutex control_mu_;
  std::condition_variable control_cv_;
  bool paused_ = false, stop_ = false, viewer_seen_ = false, checkpoint_ = false;

  // the server thread's own
  std::vector<std::string> history_;
  std::string snapshot_text_;
  std::int64_t snapshot_id_ = -1;
  std::map<std::string, Viewer> viewers_;
};

}  // namespace

Result<std::unique_ptr<RunServer>> RunServer::open(const ServeOptions& options, nlohmann::json hello) {
  auto address = parse_serve_address(options.address);
  if (!address) return Status::error("--serve " + options.address + ": " + address.status().message());
  std::string token;
  if (const char* env = std::getenv("ADJ_TOKEN"); env && *env)
    token = env;
  else if (!address->local())
    token = random_token();
  auto server = std::make_unique<ZmqRunServer>(options, token);
  if (Status st = server->bind(*address); !st) return st;
  server->start(std::move(hello));
  return std::unique_ptr<RunServer>(std::move(server));
}

#else

Result<std::unique_ptr<RunServer>> RunServer::open(const ServeOptions& options, nlohmann::json) {
  return Status::error("--serve " + options.address +
                       ": this adjoint was built without ZeroMQ (install libzmq3-dev and cppzmq-dev: "
                       "scripts/setup.sh, then rebuild)");
}

#endif

Result<std::unique_ptr<RunServer>> open_serve(const ServeOptions& options, nlohmann::json hello) {
  if (options.address.empty()) return std::unique_ptr<RunServer>();
  const bool control = options.control;
  auto server = RunServer::open(options, std::move(hello));
  if (!server) {
    std::fprintf(stderr, "%s\n", server.status().message().c_str());
    return server.status();
  }
  std::printf("serving on %s%s\n", (*server)->endpoint().c_str(), control ? " (viewers may pause and stop)" : "");
  if (!(*server)->token().empty() && !std::getenv("ADJ_TOKEN"))
    std::printf("token: %s (adjoint watch ADDRESS --token TOKEN)\n", (*server)->token().c_str());
  std::fflush(stdout);
  if (options.wait_s > 0 && !(*server)->wait_for_viewer(options.wait_s)) {
    std::printf("no viewer came in %g s; the run starts\n", options.wait_s);
    std::fflush(stdout);
  }
  return server;
}

}  // namespace adj::app
