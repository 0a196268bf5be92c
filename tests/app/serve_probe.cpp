// serve_probe ADDRESS N: N hostile frames to a served run (app/serve/run_server.h) over a
// proper ZeroMQ connection: random bytes, JSON that is not a request, requests with wrong
// fields, frame sets of the wrong shape, deep nesting and an oversized frame. The run must
// go on undisturbed (tests/app/serve.sh compares its results).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <zmq.hpp>

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: serve_probe tcp://HOST:PORT N\n"), 2;
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.connect(argv[1]);
  std::mt19937 rng(7);
  const std::string shaped[] = {"{}",
                                "[]",
                                "null",
                                "{\"type\":1}",
                                "{\"type\":\"poll\"}",
                                "{\"type\":\"poll\",\"since\":-4}",
                                "{\"type\":\"poll\",\"since\":1e300}",
                                "{\"type\":\"control\",\"command\":\"explode\"}",
                                "{\"type\":\"poll\",\"since\":0,\"token\":7}",
                                std::string(100, '[') + std::string(100, ']'),
                                std::string(200000, 'x'),
                                "{\"type\":\"poll\",\"since\":\"3\"}"};
  const int n = std::atoi(argv[2]);
  int sent = 0;
  for (int i = 0; i < n; ++i) {
    std::string payload;
    if (i % 3 == 0) {
      payload = shaped[(i / 3) % std::size(shaped)];
    } else {
      payload.resize(rng() % 512);
      for (char& c : payload) c = char(rng());
    }
    // every fifth is a frame set of three frames. The oversized frame makes the run drop the
    // connection (ZeroMQ's limit); the socket connects again, and while it does a frame may
    // not go out: sent counts those that did
    bool ok = true;
    if (i % 5 == 4)
      ok = bool(s.send(zmq::buffer(std::string("x")), zmq::send_flags::sndmore | zmq::send_flags::dontwait));
    if (ok) ok = bool(s.send(zmq::buffer(payload), zmq::send_flags::dontwait));
    sent += ok;
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // the answers to what was well-formed enough to answer are read and thrown away
  for (int i = 0; i < 200; ++i) {
    zmq::message_t m;
    if (!s.recv(m, zmq::recv_flags::dontwait)) break;
  }
  std::printf("serve_probe: %d of %d frame sets sent\n", sent, n);
  return 0;
}
