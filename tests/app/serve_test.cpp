// The run server and its client (app/serve): what a viewer receives, whatever the timing;
// the wire decoder's refusals (app/serve/wire.h). The command-line behaviour is in serve.sh.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <string>

#include "app/serve/address.h"
#include "app/serve/publish.h"
#include "app/serve/run_client.h"
#include "app/serve/run_server.h"
#include "app/serve/wire.h"

using namespace adj::app;
using nlohmann::json;

TEST_CASE("wire: requests that are not well-formed are refused with a reason") {
  CHECK(wire::decode_request(R"({"type":"poll","since":2,"token":"t"})").is_ok());
  for (const char* bad :
       {"", "[]", "{", R"({"type":"poll"})", R"({"type":"poll","since":-1})", R"({"type":"poll","since":1.5})",
        R"({"type":"poll","since":0,"token":3})", R"({"type":"control","command":"reboot"})", R"({"type":"what"})"}) {
    auto r = wire::decode_request(bad);
    CHECK_FALSE(r.is_ok());
    CHECK_FALSE(r.status().message().empty());
  }
  CHECK_FALSE(wire::decode_request(std::string(40, '[') + std::string(40, ']')).is_ok());  // too deep
  CHECK_FALSE(wire::decode_request(std::string(wire::k_max_request_bytes + 1, ' ')).is_ok());
}

TEST_CASE("wire: a reply's snapshot must hold whole, equal frames") {
  auto ok = wire::decode_reply(
      R"({"type":"batch","next":0,"total":0,"records":[],"snapshot":{"id":1,"iteration":0,"frames":[{"particle_q":[1,2,3]},{"particle_q":[4,5,6]}]}})");
  REQUIRE(ok.is_ok());
  CHECK(ok->snapshot.particle_q.size() == 2);
  CHECK_FALSE(
      wire::decode_reply(
          R"({"type":"batch","next":0,"total":0,"records":[],"snapshot":{"id":1,"iteration":0,"frames":[{"particle_q":[1,2]}]}})")
          .is_ok());
  CHECK_FALSE(
      wire::decode_reply(
          R"({"type":"batch","next":0,"total":0,"records":[],"snapshot":{"id":1,"iteration":0,"frames":[{"particle_q":[1,2,3]},{"particle_q":[]}]}})")
          .is_ok());
  CHECK_FALSE(wire::decode_reply(R"({"type":"batch","next":2,"total":1,"records":[]})").is_ok());
  CHECK_FALSE(wire::decode_reply(R"({"type":"batch","next":1,"total":1,"records":[{"kind":"iteration"}]})").is_ok());
}

// a snapshot with every part: contacts per frame, the gradient's arrow blocks, training copies
static wire::Rollout full_rollout() {
  wire::Rollout r;
  r.iteration = 7;
  r.parameters = {0.1, -2.5e-7, 3.0};
  r.particle_q = {{0.1f, 0.2f, 0.3f, 1, 2, 3}, {0.4f, 0.5f, 0.6f, 4, 5, 6}};
  r.joint_q = {{}, {}};
  r.contacts = {{{0.1f, 0, 0}, {0, 1, 0}, {0, 9.81f, 0}}, {}};
  r.body_contacts = {{}, {{1, 2, 3, 4, 5, 6}, {0, 0, 1, 0, 0, 1}, {1e-3f, 2, 3, 4, 5, 6}}};
  r.step_grad_norms = {1, 0.5f, 0.25f};
  r.gradient = {1, 2, 3, 4, 5, 6};
  r.gradient_blocks = {{"initial_velocity", 0, 1, 2, {0, 1}}};
  r.worlds = {{0, {{1, 1, 1, 2, 2, 2}}, {{}}}, {1, {{3, 3, 3, 4, 4, 4}}, {{}}}};
  return r;
}

static std::string batch_with(const std::string& snapshot) {
  return R"({"type":"batch","next":0,"total":0,"records":[],"snapshot":)" + snapshot + "}";
}

TEST_CASE("wire: a snapshot's contacts, gradient and worlds read back as they were sent") {
  const wire::Rollout r = full_rollout();
  auto back = wire::decode_reply(batch_with(wire::encode_snapshot(3, r)));
  REQUIRE(back.is_ok());
  const wire::Rollout& b = back->snapshot;
  CHECK(b.id == 3);
  CHECK(b.iteration == 7);
  CHECK(b.parameters == r.parameters);  // doubles: the shortest text reads back to the same bits
  CHECK(b.particle_q == r.particle_q);  // floats too
  REQUIRE(b.contacts.size() == 2);
  CHECK(b.contacts[0].point == r.contacts[0].point);
  CHECK(b.contacts[0].force == r.contacts[0].force);
  CHECK(b.contacts[1].count() == 0);
  REQUIRE(b.body_contacts.size() == 2);
  CHECK(b.body_contacts[1].normal == r.body_contacts[1].normal);
  CHECK(b.body_contacts[1].force == r.body_contacts[1].force);
  CHECK(b.step_grad_norms == r.step_grad_norms);
  CHECK(b.gradient == r.gradient);
  REQUIRE(b.gradient_blocks.size() == 1);
  CHECK(b.gradient_blocks[0].kind == "initial_velocity");
  CHECK(b.gradient_blocks[0].index == std::vector<int>{0, 1});
  REQUIRE(b.worlds.size() == 2);
  CHECK(b.worlds[1].copy == 1);
  CHECK(b.worlds[1].particle_q == r.worlds[1].particle_q);
  // a snapshot of the frames alone has no contacts, gradient or worlds
  wire::Rollout bare;
  bare.particle_q = r.particle_q;
  bare.joint_q = r.joint_q;
  auto plain = wire::decode_reply(batch_with(wire::encode_snapshot(4, bare)));
  REQUIRE(plain.is_ok());
  CHECK(plain->snapshot.contacts.empty());
  CHECK(plain->snapshot.gradient_blocks.empty());
  CHECK(plain->snapshot.worlds.empty());
}

TEST_CASE("publish: a knotted control force's gradient is sent one entry a frame, its knots interpolated") {
  // frames 0 1 2 with knots on 0 and 2: frame 1 is the knots' mean
  adj::optim::ParamBlock b;
  b.kind = adj::scene::ParamKind::control_force;
  b.frames = 3;
  b.knots = 2;
  b.steps = 2;
  b.elements = 1;
  b.width = 3;
  b.count = 6;
  b.offset = 1;  // after one entry of another block
  b.index = {4};
  RunSnapshot out;
  add_gradient(out, {b}, std::vector<double>{9, 1, 2, 3, 5, 6, 8}, std::vector<double>{});
  REQUIRE(out.gradient_blocks.size() == 1);
  CHECK(out.gradient_blocks[0].steps == 3);
  CHECK(out.gradient_blocks[0].offset == 0);
  CHECK(out.gradient_blocks[0].index == std::vector<int>{4});
  CHECK(out.gradient == std::vector<float>{1, 2, 3, 3, 4, 5.5f, 5, 6, 8});
  // without knots, the entries as they are
  b.knots = 0;
  b.steps = 3;
  b.count = 9;
  RunSnapshot plain;
  add_gradient(plain, {b}, std::vector<double>{9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, std::vector<double>{});
  CHECK(plain.gradient == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("wire: a snapshot's contacts, gradient and worlds are refused when they do not add up") {
  auto refused = [](wire::Rollout r, const std::string& why) {
    auto got = wire::decode_reply(batch_with(wire::encode_snapshot(1, r)));
    REQUIRE_FALSE(got.is_ok());
    CHECK_THAT(got.status().message(), Catch::Contains(why));
  };
  wire::Rollout r = full_rollout();
  r.contacts[0].normal.pop_back();
  refused(r, "snapshot.frames[0].contacts");
  r = full_rollout();
  r.contacts[0].point.assign(size_t(3 * (wire::k_max_frame_contacts + 1)), 0.0f);
  refused(r, "more than");
  r = full_rollout();
  r.gradient_blocks[0].elements = 3;  // 9 entries past 6 values
  r.gradient_blocks[0].index = {0, 1, 2};
  refused(r, "run past the values");
  r = full_rollout();
  r.gradient_blocks[0].offset = 2147483647;
  refused(r, "run past the values");
  r = full_rollout();
  r.gradient_blocks[0].index = {0};
  refused(r, "not one particle per element");
  r = full_rollout();
  r.worlds.assign(size_t(wire::k_max_worlds + 1), r.worlds[0]);
  refused(r, "at most");
  r = full_rollout();
  r.worlds[1].particle_q.push_back({1, 2});
  r.worlds[1].joint_q.push_back({});
  refused(r, "snapshot.worlds[1].frames[1]");
}

TEST_CASE("serve address: ports, hosts, and which need a token") {
  CHECK(parse_serve_address("5555")->endpoint() == "tcp://127.0.0.1:5555");
  CHECK(parse_serve_address("5555")->local());
  CHECK(parse_serve_address("0")->endpoint() == "tcp://127.0.0.1:*");
  CHECK_FALSE(parse_serve_address("0.0.0.0:80")->local());
  CHECK(parse_serve_address("[::1]:7")->endpoint() == "tcp://[::1]:7");
  CHECK_FALSE(parse_serve_address("70000").is_ok());
  CHECK_FALSE(parse_serve_address("host:").is_ok());
  CHECK(random_token().size() == 32);
  CHECK(random_token() != random_token());
}

#if ADJ_HAS_ZMQ
TEST_CASE("serve: an address that cannot be bound is an error naming it, not a crash") {
  auto server = RunServer::open({.address = "192.0.2.1:5555"}, serve_hello("x.json", "bptt", {}));
  REQUIRE_FALSE(server.is_ok());
  CHECK(server.status().message().find("--serve 192.0.2.1:5555: cannot listen on tcp://192.0.2.1:5555") !=
        std::string::npos);
  auto taken = RunServer::open({.address = "0"}, serve_hello("x.json", "bptt", {}));
  REQUIRE(taken.is_ok());
  const std::string port = (*taken)->endpoint().substr((*taken)->endpoint().rfind(':') + 1);
  auto again = RunServer::open({.address = port}, serve_hello("x.json", "bptt", {}));
  REQUIRE_FALSE(again.is_ok());
  CHECK(again.status().message().find("another program holds the port") != std::string::npos);
}

TEST_CASE("serve: a late viewer gets every record in order once, and the newest snapshot, under a flood of snapshots") {
  auto server = RunServer::open({.address = "0", .queue_snapshots = 2}, serve_hello("no-such-scene.json", "bptt", {}));
  REQUIRE(server.is_ok());
  RunServer& s = **server;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    s.iteration({{"iteration", i}, {"loss", 1.0 / (1 + i)}});
    s.snapshot({-1, i, {double(i)}, {{float(i), 0, 0}}, {{}}});
  }
  s.end({{"status", "finished"}, {"iterations", n}});
  const std::string endpoint = s.endpoint();
  auto client = RunClient::connect(endpoint, "");
  REQUIRE(client.is_ok());
  std::vector<json> records;
  wire::Rollout last;
  const auto start = std::chrono::steady_clock::now();
  for (bool ended = false; !ended;) {
    REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    auto u = (*client)->poll(std::chrono::milliseconds(200));
    REQUIRE(u.is_ok());
    for (auto& r : u->records) records.push_back(r);
    if (u->has_snapshot) last = u->snapshot;
    ended = u->ended;
  }
  REQUIRE(records.size() == size_t(n + 2));  // hello, every iteration, end
  CHECK(records.front()["kind"] == "hello");
  for (int i = 0; i < n; ++i) {
    CHECK(records[size_t(i + 1)]["seq"] == i + 1);
    CHECK(records[size_t(i + 1)]["iteration"] == i);
  }
  CHECK(records.back()["kind"] == "end");
  // the newest snapshot arrives, whatever was dropped before it
  CHECK(last.iteration == n - 1);
  REQUIRE(last.particle_q.size() == 1);
  CHECK(last.particle_q[0][0] == float(n - 1));
  CHECK((*client)->malformed() == 0);
}
#endif

#if ADJ_HAS_ZMQ
TEST_CASE("serve: a NaN in a record or a snapshot does not stall the viewer") {
  auto server = RunServer::open({.address = "0"}, serve_hello("x.json", "shac", {}));
  REQUIRE(server.is_ok());
  RunServer& s = **server;
  const double nan = std::nan("");
  s.iteration({{"iteration", 0}, {"loss", nan}});
  s.snapshot({-1, 0, {1.0}, {{1, 0, 0}}, {{}}});
  s.iteration({{"iteration", 1}, {"loss", 2.0}});
  s.snapshot({-1, 1, {nan}, {{0, 0, 0}}, {{}}});  // not published: a viewer would refuse it
  s.end({{"status", "finished"}, {"iterations", 2}});
  auto client = RunClient::connect(s.endpoint(), "");
  REQUIRE(client.is_ok());
  std::vector<json> records;
  wire::Rollout last;
  const auto start = std::chrono::steady_clock::now();
  for (bool ended = false; !ended;) {
    REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    auto u = (*client)->poll(std::chrono::milliseconds(200));
    REQUIRE(u.is_ok());
    for (auto& r : u->records) records.push_back(r);
    if (u->has_snapshot) last = u->snapshot;
    ended = u->ended;
  }
  REQUIRE(records.size() == 4);
  CHECK(records[1]["loss"].is_null());
  CHECK(records[2]["loss"] == 2.0);
  CHECK(last.iteration == 0);  // the newest that could be published
  CHECK((*client)->malformed() == 0);
  CHECK(s.counters().snapshots_nonfinite == 1);
}
#endif
