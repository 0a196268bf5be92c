#include "app/serve/run_client.h"

#include "app/serve/address.h"

#if ADJ_HAS_ZMQ
#include <zmq.hpp>
#endif

namespace adj::app {

#if ADJ_HAS_ZMQ

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto k_resend = std::chrono::seconds(2);  // a poll not answered this long is sent again

class ZmqRunClient final : public RunClient {
 public:
  ZmqRunClient(std::string endpoint, std::string token) : endpoint_(std::move(endpoint)), token_(std::move(token)) {}

  Status open() {
    try {
      socket_ = zmq::socket_t(context_, zmq::socket_type::dealer);
      socket_.set(zmq::sockopt::linger, 0);
      socket_.set(zmq::sockopt::maxmsgsize, std::int64_t(512) << 20);
      socket_.connect(endpoint_);
    } catch (const zmq::error_t& e) {
      return Status::error(endpoint_ + ": " + e.what());
    }
    return {};
  }

  Result<RunUpdate> poll(std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    if (!outstanding_ || Clock::now() - sent_at_ > k_resend) {
      if (Status st = send(wire::encode_poll(token_, next_, snapshot_)); !st) return st;
      outstanding_ = true;
      sent_at_ = Clock::now();
    }
    while (outstanding_) {
      auto r = receive(deadline);
      if (!r) return r.status();
      if (!*r) break;  // the time is up
    }
    RunUpdate u = std::move(pending_);
    pending_ = {};
    u.ended = ended_;
    return u;
  }

  Result<wire::Reply> control(wire::Command c, std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    if (Status st = send(wire::encode_control(token_, c)); !st) return st;
    control_reply_.reset();
    while (!control_reply_) {
      auto r = receive(deadline);
      if (!r) return r.status();
      if (!*r) return Status::error(endpoint_ + ": no answer to " + wire::to_string(c));
    }
    return *control_reply_;
  }

  std::int64_t malformed() const override { return malformed_; }
  const std::string& last_malformed() const override { return last_malformed_; }
  const std::string& endpoint() const override { return endpoint_; }

 private:
  Status send(const std::string& payload) {
    try {
      (void)socket_.send(zmq::buffer(payload), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      return Status::error(endpoint_ + ": " + e.what());
    }
    return {};
  }

  // one reply handled; false when none came before the deadline, an error when refused
  Result<bool> receive(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (left.count() <= 0 || zmq::poll(&item, 1, left) <= 0) return false;
    zmq::message_t m;
    if (!socket_.recv(m, zmq::recv_flags::dontwait)) return false;
    if (m.more()) {  // a reply is one frame: drop the rest
      ++malformed_;
      for (zmq::message_t rest; m.more() && socket_.recv(rest, zmq::recv_flags::dontwait);) m = std::move(rest);
      return true;
    }
    auto reply = wire::decode_reply(m.to_string_view());
    if (!reply) {
      ++malformed_;
      last_malformed_ = reply.status().message();
      return true;
    }
    switch (reply->kind) {
      case wire::Reply::Kind::refused:
        return Status::error(endpoint_ + " refused this viewer: " + reply->reason);
      case wire::Reply::Kind::control:
        control_reply_ = std::move(*reply);
        return true;
      case wire::Reply::Kind::batch:
        take(std::move(*reply), m.size());
        return true;
    }
    return true;
  }

  // the records not seen yet, in order; the snapshot when newer
  void take(wire::Reply&& b, std::size_t bytes) {
    outstanding_ = false;
    pending_.answered = true;
    pending_.paused = b.paused;
    pending_.total = b.total;
    for (auto& r : b.records) {
      if (r["seq"].get<std::int64_t>() != next_) continue;  // a repeat (a poll sent twice), or out of order
      if (r["kind"] == "end") ended_ = true;
      pending_.records.push_back(std::move(r));
      ++next_;
    }
    if (b.has_snapshot && b.snapshot.id > snapshot_) {
      snapshot_ = b.snapshot.id;
      pending_.snapshot = std::move(b.snapshot);
      pending_.has_snapshot = true;
      pending_.snapshot_bytes = bytes;
    }
  }

  std::string endpoint_, token_, last_malformed_;
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::int64_t next_ = 0, snapshot_ = -1, malformed_ = 0;
  bool outstanding_ = false, ended_ = false;
  Clock::time_point sent_at_;
  RunUpdate pending_;
  std::optional<wire::Reply> control_reply_;
};

}  // namespace

Result<std::unique_ptr<RunClient>> RunClient::connect(const std::string& address, const std::string& token) {
  auto a = parse_serve_address(address);
  if (!a) return Status::error(address + ": " + a.status().message());
  if (a->port == 0) return Status::error(address + ": no port (the run printed \"serving on tcp://HOST:PORT\")");
  if (a->host == "*" || a->host == "0.0.0.0") a->host = "127.0.0.1";
  auto c = std::make_unique<ZmqRunClient>(a->endpoint(), token);
  if (Status st = c->open(); !st) return st;
  return std::unique_ptr<RunClient>(std::move(c));
}

#else

Result<std::unique_ptr<RunClient>> RunClient::connect(const std::string& address, const std::string&) {
  return Status::error(address +
                       ": this adjoint was built without ZeroMQ (install libzmq3-dev and cppzmq-dev: "
                       "scripts/setup.sh, then rebuild)");
}

#endif

}  // namespace adj::app
