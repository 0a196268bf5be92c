// many worlds (engine/solver/worlds.h) and domain randomization (engine/model/randomize.h): one
// world is the scene stepped alone, bit for bit; identical worlds equal it too (so worlds placed
// at the same spot never touch), at 1 and 2 threads; randomized worlds differ, the same seed gives
// the same bits, and a world's parameters depend on the seed and its index alone; gradients per
// world against central differences in double on a coupled scene (a robot arm pushing a soft
// ball) with randomized parameters; settings.randomize read, written and refused with its path
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "engine/scene/scene_json.h"
#include "engine/solver/worlds.h"
#include "tests/engine/asset_scene.h"

using namespace adj;
using namespace adj::test;

namespace {

template <class S>
bool same_bits(const StateT<S>& a, const StateT<S>& b) {
  auto eq = [](const auto& x, const auto& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  return eq(a.particle_q, b.particle_q) && eq(a.particle_qd, b.particle_qd) && eq(a.joint_q, b.joint_q) &&
         eq(a.joint_qd, b.joint_qd);
}

// `frames` steps of the scene alone (one solver, the scene's model)
template <class S>
StateT<S> alone(const scene::CompiledSceneT<S>& cs, const ModelT<S>& model, int frames) {
  SolverT<S> solver({.substeps = cs.substeps});
  StateT<S> a = model.make_state(), b;
  const ControlT<S> control = model.make_hold_control();
  for (int t = 0; t < frames; ++t) {
    Status st = solver.step(model, a, b, control, cs.frame_dt);
    INFO(st.message());
    REQUIRE(st.is_ok());
    std::swap(a, b);
  }
  return a;
}

// `frames` steps of every world
template <class S>
void advance(WorldsT<S>& worlds, S dt, int frames) {
  std::vector<StateT<S>> next(std::size_t(worlds.world_count()));
  for (int t = 0; t < frames; ++t) {
    Status st = worlds.run([&](int w, SolverT<S>& solver) {
      const ControlT<S> control = worlds.model(w).make_hold_control();
      Status s = solver.step(worlds.model(w), worlds.state(w), next[std::size_t(w)], control, dt);
      if (s) std::swap(worlds.state(w), next[std::size_t(w)]);
      return s;
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
  }
}

Randomization some_randomization() {
  Randomization r;
  r.body_mass = {0.7, 1.3};
  r.particle_mass = {0.8, 1.25};
  r.contact_ke = {0.5, 2.0, true};
  r.contact_mu = {0.6, 1.0};
  r.joint_damping = {0.5, 1.5};
  r.actuator_kp = {0.8, 1.2};
  r.gravity = {0.9, 1.1};
  return r;
}

}  // namespace

TEST_CASE("worlds: one world and identical worlds equal the scene stepped alone, at 1 and 2 threads", "[worlds]") {
  // particles only, bodies only, and both (a robot arm pushing a soft ball; a box on a hammock)
  for (const char* file : {"bounce.json", "robot_arm_push.json", "robot_arm_push_soft.json", "box_on_cloth.json"}) {
    INFO(file);
    AssetScene<float> s(file);
    const int frames = 6;
    const StateT<float> ref = alone(s.cs, s.cs.model, frames);
    for (int threads : {1, 2})
      for (int count : {1, 3}) {
        INFO(count << " worlds, " << threads << " threads");
        auto worlds = ok(Worlds::create(
            s.cs.model, {.world_count = count, .thread_count = threads, .solver = {.substeps = s.cs.substeps}}));
        CHECK_FALSE(worlds.randomized());
        advance(worlds, s.cs.frame_dt, frames);
        // every world sits at the same spot as the others: were contact to cross worlds, the
        // copies would push each other apart and differ from the scene alone
        for (int w = 0; w < count; ++w) CHECK(same_bits(worlds.state(w), ref));
      }
    CHECK_FALSE(same_bits(ref, s.cs.model.make_state()));  // the scene moved
  }
}

TEST_CASE("worlds: randomized worlds differ, the same seed gives the same bits, a world draws its own", "[worlds]") {
  AssetScene<float> s("robot_arm_push_soft.json");
  const Randomization r = some_randomization();
  auto run = [&](int count, int threads, std::uint64_t seed) {
    auto worlds = ok(Worlds::create(s.cs.model, {.world_count = count,
                                                 .thread_count = threads,
                                                 .seed = seed,
                                                 .randomize = r,
                                                 .solver = {.substeps = s.cs.substeps}}));
    advance(worlds, s.cs.frame_dt, 5);
    return worlds;
  };
  auto a = run(4, 2, 7), b = run(4, 1, 7), c = run(6, 2, 7), d = run(4, 2, 8);
  REQUIRE(a.randomized());
  for (int w = 0; w < 4; ++w) {
    INFO("world " << w);
    CHECK(same_bits(a.state(w), b.state(w)));        // threads do not matter
    CHECK(same_bits(a.state(w), c.state(w)));        // nor how many worlds run
    CHECK_FALSE(same_bits(a.state(w), d.state(w)));  // the seed does
    // each world is the scene alone with the world's parameters
    CHECK(same_bits(a.state(w), alone(s.cs, a.model(w), 5)));
    for (int v = 0; v < w; ++v) CHECK_FALSE(same_bits(a.state(w), a.state(v)));
  }
  // the factors: within their ranges, different per world, log-uniform within its range
  const auto& q = random_quantities();
  for (std::size_t k = 0; k < q.size(); ++k) {
    const RandomRange& rr = r.*(q[k].range);
    double lo = 1e9, hi = -1e9;
    for (int w = 0; w < 200; ++w) {
      double f = random_factor(r, 7, w, int(k));
      lo = std::min(lo, f);
      hi = std::max(hi, f);
    }
    INFO(q[k].name);
    CHECK(lo >= rr.lo);
    CHECK(hi <= rr.hi);
    if (rr.active()) CHECK(hi - lo > 0.8 * (rr.hi - rr.lo));  // 200 draws span the range
  }
  // the model's values are the scene's times the factors
  const int body_mass = 0, gravity = 10;
  REQUIRE(std::string(q[body_mass].name) == "body_mass");
  REQUIRE(std::string(q[gravity].name) == "gravity");
  CHECK(a.model(2).rigid.body_mass[1] == s.cs.model.rigid.body_mass[1] * float(random_factor(r, 7, 2, body_mass)));
  CHECK(a.model(2).gravity.y == s.cs.model.gravity.y * float(random_factor(r, 7, 2, gravity)));
}

TEST_CASE("worlds: gradients per world against central differences (coupled scene, randomized, double)",
          "[worlds][grad]") {
  AssetScene<double> s("robot_arm_push_soft.json");
  const int frames = 2;
  // the ball starts pressed against the ground and the arm moving: contact in every world
  auto worlds = ok(WorldsT<double>::create(s.cs.model, {.world_count = 3,
                                                        .thread_count = 2,
                                                        .seed = 3,
                                                        .randomize = some_randomization(),
                                                        .solver = {.substeps = s.cs.substeps}}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const StateT<double> start = worlds.state(0);
  std::vector<double> wq(start.particle_q.size() * 3 + start.joint_q.size());
  for (double& x : wq) x = u(rng);
  // L = a fixed random functional of the final positions
  auto loss = [&](const ModelT<double>& m, const StateT<double>& in, const ControlT<double>& c) {
    SolverT<double> solver({.substeps = s.cs.substeps});
    StateT<double> a = in, b;
    for (int t = 0; t < frames; ++t) {
      REQUIRE(solver.step(m, a, b, c, s.cs.frame_dt).is_ok());
      std::swap(a, b);
    }
    double l = 0;
    std::size_t k = 0;
    for (auto& p : a.particle_q) l += wq[k] * p.x + wq[k + 1] * p.y + wq[k + 2] * p.z, k += 3;
    for (double x : a.joint_q) l += wq[k++] * x;
    return l;
  };
  std::vector<double> dl_dact0(3);
  for (int w = 0; w < 3; ++w) {
    INFO("world " << w);
    const ModelT<double>& m = worlds.model(w);
    ControlT<double> c = m.make_hold_control();
    for (std::size_t k = 0; k < c.joint_act.size(); ++k) c.joint_act[k] += 0.2 * u(rng);
    // forward keeping the states, then the reverse from dL/d final state
    std::vector<StateT<double>> tape(frames + 1);
    tape[0] = worlds.state(w);
    for (std::size_t k = 0; k < tape[0].joint_qd.size(); ++k) tape[0].joint_qd[k] = 0.5 * u(rng);
    SolverT<double> solver({.substeps = s.cs.substeps});
    for (int t = 0; t < frames; ++t) REQUIRE(solver.step(m, tape[t], tape[t + 1], c, s.cs.frame_dt).is_ok());
    StateT<double> adj = m.make_state(), adj_in;
    adj.zero();
    std::size_t k = 0;
    for (auto& p : adj.particle_q) p = {wq[k], wq[k + 1], wq[k + 2]}, k += 3;
    for (double& x : adj.joint_q) x = wq[k++];
    ControlT<double> adj_c = m.make_control();
    ModelGradT<double> adj_m = m.make_grad();
    for (int t = frames - 1; t >= 0; --t) {
      Status st = solver.step_adjoint(m, tape[t], c, s.cs.frame_dt, adj, adj_in, adj_c, adj_m);
      INFO(st.message());
      REQUIRE(st.is_ok());
      std::swap(adj, adj_in);
    }
    const double eps = 1e-6;
    double scale = 0;
    std::vector<std::pair<double, double>> rows;  // (adjoint, central difference)
    for (std::size_t a = 0; a < c.joint_act.size(); ++a) {
      ControlT<double> cp = c, cm = c;
      cp.joint_act[a] += eps;
      cm.joint_act[a] -= eps;
      rows.push_back({adj_c.joint_act[a], (loss(m, tape[0], cp) - loss(m, tape[0], cm)) / (2 * eps)});
    }
    dl_dact0[std::size_t(w)] = adj_c.joint_act[0];
    for (std::size_t j = 0; j < tape[0].joint_qd.size(); ++j) {
      StateT<double> p = tape[0], n = tape[0];
      p.joint_qd[j] += eps;
      n.joint_qd[j] -= eps;
      rows.push_back({adj.joint_qd[j], (loss(m, p, c) - loss(m, n, c)) / (2 * eps)});
    }
    for (int i : {0, 7, 20}) {
      if (i >= tape[0].particle_count()) continue;
      StateT<double> p = tape[0], n = tape[0];
      p.particle_q[i].y += eps;
      n.particle_q[i].y -= eps;
      rows.push_back({adj.particle_q[i].y, (loss(m, p, c) - loss(m, n, c)) / (2 * eps)});
    }
    {  // the world's own (randomized) particle contact stiffness
      ModelT<double> mp = m, mm = m;
      const double h = 1e-4 * m.contact_ke;
      mp.contact_ke += h;
      mm.contact_ke -= h;
      rows.push_back({adj_m.contact_ke, (loss(mp, tape[0], c) - loss(mm, tape[0], c)) / (2 * h)});
    }
    for (auto& r : rows) scale = std::max(scale, std::fabs(r.second));
    REQUIRE(scale > 0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      INFO("entry " << r << ": adjoint " << rows[r].first << ", central difference " << rows[r].second);
      CHECK(std::fabs(rows[r].first - rows[r].second) <= 1e-6 * scale + 1e-4 * std::fabs(rows[r].second));
    }
  }
  // the worlds' parameters differ, and so do their gradients
  CHECK(dl_dact0[0] != dl_dact0[1]);
  CHECK(dl_dact0[1] != dl_dact0[2]);
}

TEST_CASE("worlds: settings.randomize is read, written back and refused with its JSON path", "[worlds][scene]") {
  const std::string base = R"({"format": "adjoint-scene", "version": 1, "name": "r", "settings": {"randomize": )";
  auto load = [&](const std::string& r) { return scene::parse_scene(base + r + "}, \"objects\": []}", "r.json"); };
  auto good = load(R"({"body_mass": [0.8, 1.2], "contact_ke": {"range": [0.5, 2], "distribution": "log_uniform"}})");
  INFO(good.status().message());
  REQUIRE(good.is_ok());
  const Randomization& r = good->settings.randomize;
  CHECK(r.body_mass == RandomRange{0.8, 1.2, false});
  CHECK(r.contact_ke == RandomRange{0.5, 2, true});
  CHECK_FALSE(r.contact_mu.active());
  auto again = scene::parse_scene(scene::to_json(*good), "again.json");
  REQUIRE(again.is_ok());
  CHECK(again->settings.randomize == r);
  struct Bad {
    const char* json;
    const char* says;
  };
  for (Bad b : {Bad{R"({"body_mas": [0.8, 1.2]})", "settings.randomize.body_mas"},
                Bad{R"({"body_mass": [1.2, 0.8]})", "settings.randomize.body_mass"},
                Bad{R"({"body_mass": [0, 1]})", "0 < lo <= hi"},
                Bad{R"({"gravity": {"range": [0.9, 1.1], "distribution": "normal"}})",
                    "settings.randomize.gravity.distribution"},
                Bad{R"({"contact_ke": {"distribution": "log_uniform"}})", "settings.randomize.contact_ke.range"},
                Bad{R"({"contact_kd": 2})", "expected [lo, hi]"}}) {
    auto bad = load(b.json);
    INFO(b.json);
    REQUIRE_FALSE(bad.is_ok());
    INFO(bad.status().message());
    CHECK(bad.status().message().find(b.says) != std::string::npos);
    CHECK(bad.status().message().find("r.json") != std::string::npos);
  }
}

TEST_CASE("worlds: a bodies-only step's record reverses to the same bits as a recompute", "[worlds][grad]") {
  for (const char* file : {"robot_arm_push.json", "locomotion/ant.json"}) {
    INFO(file);
    AssetScene<float> s(file);
    const ModelT<float>& m = s.cs.model;
    SolverT<float> solver({.substeps = s.cs.substeps});
    ControlT<float> c = m.make_hold_control();
    for (std::size_t k = 0; k < c.joint_act.size(); ++k) c.joint_act[k] += 0.1f * float(k % 3);
    StateT<float> a = m.make_state(), b, b_rec;
    for (int t = 0; t < 3; ++t) {  // a state in motion
      REQUIRE(solver.step(m, a, b, c, s.cs.frame_dt).is_ok());
      std::swap(a, b);
    }
    StepRecordT<float> record;
    REQUIRE(solver.step(m, a, b, c, s.cs.frame_dt).is_ok());
    REQUIRE(solver.step(m, a, b_rec, c, s.cs.frame_dt, nullptr, &record).is_ok());
    CHECK(same_bits(b, b_rec));
    CHECK(record.bytes() > 0);
    StateT<float> seed = m.make_state(), adj_a, adj_b;
    for (std::size_t k = 0; k < seed.joint_q.size(); ++k) seed.joint_q[k] = 0.3f + 0.1f * float(k);
    for (std::size_t k = 0; k < seed.joint_qd.size(); ++k) seed.joint_qd[k] = -0.2f + 0.05f * float(k);
    ControlT<float> gc_a = m.make_control(), gc_b = m.make_control();
    ModelGradT<float> gm_a = m.make_grad(), gm_b = m.make_grad();
    REQUIRE(solver.step_adjoint(m, a, c, s.cs.frame_dt, seed, adj_a, gc_a, gm_a).is_ok());
    REQUIRE(solver.step_adjoint(m, a, c, s.cs.frame_dt, seed, adj_b, gc_b, gm_b, &record).is_ok());
    CHECK(same_bits(adj_a, adj_b));
    CHECK(gc_a.joint_act == gc_b.joint_act);
    CHECK(gm_a.rigid.body_mass == gm_b.rigid.body_mass);
    CHECK(gm_a.rigid.contact_ke == gm_b.rigid.contact_ke);
    // a record of another substep count is refused, not misread
    SolverT<float> other({.substeps = s.cs.substeps + 1});
    CHECK_FALSE(other.step_adjoint(m, a, c, s.cs.frame_dt, seed, adj_b, gc_b, gm_b, &record).is_ok());
  }
}
