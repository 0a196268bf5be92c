// the locomotion suite's reward terms (engine/optim/loss.h: forward_velocity,
// up_projection, heading, height_reward) and policy observation terms
// (engine/optim/policy.h) on DiffRL's Ant (assets/scenes/locomotion/ant.json): the reward
// and the observation of a hand-made state against the spec's formulas, and each term's
// gradient with respect to the state against central differences in double
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "engine/core/spatial.h"
#include "engine/grad/fd_check.h"
#include "engine/optim/loss.h"
#include "engine/optim/policy.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/shac.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string k_dir = std::string(ADJ_ASSET_SCENES) + "/locomotion";

struct Ant {
  scene::Scene doc;
  scene::CompiledSceneT<double> cs;
  int torso = -1;
};

Ant load_ant() {
  Ant a;
  auto doc = scene::load_scene(k_dir + "/ant.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  a.doc = std::move(doc.value());
  auto cs = scene::compile<double>(a.doc, k_dir);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  a.cs = std::move(cs.value());
  for (int b = 0; b < a.cs.model.rigid.body_count(); ++b)
    if (a.cs.model.rigid.body_name[b] == "torso") a.torso = b;
  REQUIRE(a.torso == 0);
  return a;
}

scene::LossTerm term(scene::LossKind kind, scene::V3 axis, double weight) {
  scene::LossTerm l;
  l.kind = kind;
  l.object = "ant";
  l.body = "torso";
  l.axis = axis;
  l.weight = weight;
  return l;
}

// the Ant's reward as loss terms over one frame: v_x + 0.1 u + h + (height - 0.27); the torso's
// forward is its body x, its up its body z (the file's frame, z up)
scene::Task ant_reward(const std::vector<scene::LossKind>& only = {}) {
  scene::Task t;
  t.name = "ant reward";
  t.horizon = 1;
  t.parameters.push_back({scene::ParamKind::actuator_control, "ant"});
  using K = scene::LossKind;
  scene::LossTerm height = term(K::height_reward, {0, 0, 0}, 1);
  height.value = 0.27;
  const scene::LossTerm all[] = {term(K::forward_velocity, {1, 0, 0}, 1), term(K::up_projection, {0, 0, 1}, 0.1),
                                 term(K::heading, {1, 0, 0}, 1), height};
  for (const scene::LossTerm& l : all)
    if (only.empty() || std::find(only.begin(), only.end(), l.kind) != only.end()) t.loss.push_back(l);
  return t;
}

LossT<double> make_loss(const Ant& a, const scene::Task& t) {
  auto params = ParametersT<double>::create(a.cs, t);
  INFO(params.status().message());
  REQUIRE(params.is_ok());
  auto loss = LossT<double>::create(a.cs, t, *params);
  INFO(loss.status().message());
  REQUIRE(loss.is_ok());
  return std::move(loss.value());
}

double loss_at(LossT<double>& loss, const StateT<double>& s0, const StateT<double>& s) {
  loss.begin();
  loss.observe(0, s0);
  loss.observe(1, s);
  return loss.value({});
}

// the torso at `height`, turned by yaw about its up (body z) then tilted by roll about its
// forward (body x), its centre moving at world velocity v; the legs at the start pose
StateT<double> torso_state(const Ant& a, double height, double yaw, double roll, const vec3<double>& v) {
  const RigidModelT<double>& m = a.cs.model.rigid;
  StateT<double> s = a.cs.model.make_state();
  const mat33<double> RJ = m.joint_rot[0];
  const rigid::quat<double> qz(std::cos(yaw / 2), 0, 0, std::sin(yaw / 2)),
      qx(std::cos(roll / 2), std::sin(roll / 2), 0, 0);
  const rigid::quat<double> q = rigid::qmul(qz, qx);
  // world position p = pJ + RJ q3: keep x, z of the rest pose, move the height
  const vec3<double> p0 = m.joint_pos[0] + RJ * vec3<double>(s.joint_q[0], s.joint_q[1], s.joint_q[2]);
  const vec3<double> q3 = transpose(RJ) * (vec3<double>(p0.x, height, p0.z) - m.joint_pos[0]);
  s.joint_q[0] = q3.x, s.joint_q[1] = q3.y, s.joint_q[2] = q3.z;
  s.joint_q[3] = q.w, s.joint_q[4] = q.x, s.joint_q[5] = q.y, s.joint_q[6] = q.z;
  // the free joint's linear velocity is in the joint frame: v = RJ^T v_world
  const vec3<double> vb = transpose(RJ) * v;
  for (int k = 0; k < 6; ++k) s.joint_qd[k] = 0;
  s.joint_qd[0] = vb.x, s.joint_qd[1] = vb.y, s.joint_qd[2] = vb.z;
  return s;
}

}  // namespace

TEST_CASE("locomotion terms: the Ant's reward of a hand-made state is v_x + 0.1 u + h + (height - 0.27)",
          "[optim][locomotion]") {
  const Ant a = load_ant();
  LossT<double> loss = make_loss(a, ant_reward());
  const StateT<double> s0 = a.cs.model.make_state();
  // at rest: upright (u = 1), facing +x (h = 1), the torso 0.75 m up
  const vec3<double> c = rigid_body_probe(a.cs.model.rigid, s0.joint_q, s0.joint_qd, a.torso).c;
  CHECK(c.y == Approx(0.75));
  CHECK(-loss_at(loss, s0, s0) == Approx(0.1 + 1 + (0.75 - 0.27)));
  // yaw 0.4 (h = cos 0.4), roll 0.3 (u = cos 0.3), 0.5 m up, moving at (1.5, -0.2, 0.3) m/s
  const double yaw = 0.4, roll = 0.3;
  const StateT<double> s = torso_state(a, 0.5, yaw, roll, {1.5, -0.2, 0.3});
  const double expected = 1.5 + 0.1 * std::cos(roll) + std::cos(yaw) + (0.5 - 0.27);
  CHECK(-loss_at(loss, s0, s) == Approx(expected).epsilon(1e-12));
  // each term on its own (the loss's term values)
  const std::vector<double>& v = loss.term_values();
  REQUIRE(v.size() == 4);
  CHECK(-v[0] == Approx(1.5));
  CHECK(-v[1] == Approx(0.1 * std::cos(roll)));
  CHECK(-v[2] == Approx(std::cos(yaw)));
  CHECK(-v[3] == Approx(0.5 - 0.27));
}

TEST_CASE("locomotion terms: height_reward's clipped-quadratic form (the Humanoid's and the Hopper's)",
          "[optim][locomotion]") {
  const Ant a = load_ant();
  scene::Task t = ant_reward({scene::LossKind::height_reward});
  // the Humanoid's: d = clip(height - 0.84, -1, 0.1); -200 d^2 below, 10 d above
  scene::LossTerm& h = t.loss[0];
  h.value = 0.84, h.lower = -1, h.upper = 0.1, h.above = 10, h.below = 0, h.quadratic = 200;
  LossT<double> loss = make_loss(a, t);
  const StateT<double> s0 = a.cs.model.make_state();
  const vec3<double> v0{};
  CHECK(-loss_at(loss, s0, torso_state(a, 0.80, 0, 0, v0)) == Approx(-200 * 0.04 * 0.04));
  CHECK(-loss_at(loss, s0, torso_state(a, 0.90, 0, 0, v0)) == Approx(10 * 0.06));
  CHECK(-loss_at(loss, s0, torso_state(a, 1.50, 0, 0, v0)) == Approx(10 * 0.1));  // clipped above
}

TEST_CASE("locomotion terms: each reward term's state gradient matches central differences (double)",
          "[optim][locomotion][fd]") {
  const Ant a = load_ant();
  using K = scene::LossKind;
  const StateT<double> s0 = a.cs.model.make_state();
  // a tilted, turned, moving torso with the legs off the start pose and spinning
  StateT<double> s = torso_state(a, 0.6, 0.4, 0.3, {1.5, -0.2, 0.3});
  for (int k = 7; k < 15; ++k) s.joint_q[k] += 0.05 * (k - 10);
  for (int k = 0; k < 14; ++k) s.joint_qd[k] += 0.1 * std::sin(1.3 * k);
  for (K kind : {K::forward_velocity, K::up_projection, K::heading, K::height_reward}) {
    const scene::Task t = ant_reward({kind});
    LossT<double> loss = make_loss(a, t);
    INFO(scene::to_string(kind));
    StateT<double> adj = s;
    for (double& x : adj.joint_q) x = 0;
    for (double& x : adj.joint_qd) x = 0;
    loss_at(loss, s0, s);
    loss.seed(1, s, adj);
    double largest = 0;
    for (double g : adj.joint_q) largest = std::max(largest, std::abs(g));
    for (double g : adj.joint_qd) largest = std::max(largest, std::abs(g));
    CHECK(largest > 0.05);  // the term reads the state
    const double eps = 1e-6;
    auto fd = [&](Array<double> StateT<double>::*field, int k) {
      StateT<double> p = s, m = s;
      (p.*field)[k] += eps;
      (m.*field)[k] -= eps;
      return (loss_at(loss, s0, p) - loss_at(loss, s0, m)) / (2 * eps);
    };
    for (int k = 0; k < int(s.joint_q.size()); ++k) {
      INFO("q[" << k << "]");
      CHECK(adj.joint_q[k] == Approx(fd(&StateT<double>::joint_q, k)).margin(1e-7));
    }
    for (int k = 0; k < int(s.joint_qd.size()); ++k) {
      INFO("qd[" << k << "]");
      CHECK(adj.joint_qd[k] == Approx(fd(&StateT<double>::joint_qd, k)).margin(1e-7));
    }
  }
}

namespace {

// the Ant's observation (the spec's 37 entries): torso height, quaternion, velocity, angular
// velocity, joint positions, 0.1 x joint velocities, up and heading projections, previous action
scene::Task ant_observation() {
  scene::Task t = ant_reward();
  t.has_policy = true;
  t.policy.hidden = {8};
  t.policy.phases = 0;
  using O = scene::ObservationKind;
  auto term = [](O kind, double scale = 1.0) {
    scene::ObservationTerm o;
    o.kind = kind;
    o.body = "torso";
    o.scale = scale;
    return o;
  };
  t.policy.observation = {term(O::height),           term(O::orientation),        term(O::velocity),
                          term(O::angular_velocity), term(O::joint_positions),    term(O::joint_velocities, 0.1),
                          term(O::up_projection),    term(O::heading_projection), term(O::previous_action)};
  t.policy.observation[6].axis = {0, 0, 1};  // the torso's up: body z
  t.parameters = {{scene::ParamKind::policy, "ant"}};
  return t;
}

}  // namespace

TEST_CASE("locomotion terms: the Ant's observation layout at a hand-made state", "[optim][locomotion]") {
  const Ant a = load_ant();
  auto pol = PolicyT<double>::create(a.cs, ant_observation());
  INFO(pol.status().message());
  REQUIRE(pol.is_ok());
  CHECK(pol->input_size() == 1 + 4 + 3 + 3 + 8 + 8 + 1 + 1 + 8);  // the spec's 37
  const double yaw = 0.4, roll = 0.3;
  StateT<double> s = torso_state(a, 0.5, yaw, roll, {1.5, -0.2, 0.3});
  const vec3<double> wb{0.2, -0.1, 0.3};  // body-frame angular velocity
  s.joint_qd[3] = wb.x, s.joint_qd[4] = wb.y, s.joint_qd[5] = wb.z;
  for (int k = 0; k < 8; ++k) s.joint_qd[6 + k] = 0.5 * k - 1;
  std::vector<double> obs, prev(8);
  for (int k = 0; k < 8; ++k) prev[std::size_t(k)] = 0.25 * k - 0.9;
  pol->observe(0, s, obs, &prev);
  REQUIRE(obs.size() == 37);
  CHECK(obs[0] == Approx(0.5));
  for (int k = 0; k < 4; ++k) CHECK(obs[1 + k] == s.joint_q[3 + k]);
  // the torso's origin is its centre of mass: its velocity is the one set, plus w x 0
  CHECK(obs[4 + 1] == Approx(1.5));
  CHECK(obs[4 + 2] == Approx(-0.2));
  CHECK(obs[4 + 3] == Approx(0.3));
  const rigid::quat<double> q(s.joint_q[3], s.joint_q[4], s.joint_q[5], s.joint_q[6]);
  const vec3<double> ww = a.cs.model.rigid.joint_rot[0] * rigid::qmat(q) * wb;
  for (int k = 0; k < 3; ++k) CHECK(obs[8 + k] == Approx(ww[k]));
  for (int k = 0; k < 8; ++k) {
    CHECK(obs[11 + k] == s.joint_q[7 + k]);
    CHECK(obs[19 + k] == Approx(0.1 * s.joint_qd[6 + k]));
  }
  CHECK(obs[27] == Approx(std::cos(roll)));
  CHECK(obs[28] == Approx(std::cos(yaw)));
  for (int k = 0; k < 8; ++k) CHECK(obs[29 + k] == prev[std::size_t(k)]);
  // an episode's first frame has no previous action: zeros
  pol->observe(0, s, obs);
  for (int k = 0; k < 8; ++k) CHECK(obs[29 + k] == 0);
}

TEST_CASE("locomotion terms: the Ant's run task observes the spec's 37 entries", "[optim][locomotion]") {
  const Ant a = load_ant();
  const scene::Task* run = a.doc.find_task("run");
  REQUIRE(run);
  auto pol = PolicyT<double>::create(a.cs, *run);
  INFO(pol.status().message());
  REQUIRE(pol.is_ok());
  CHECK(pol->input_size() == 37);
  CHECK(pol->reads_previous_action());
}

TEST_CASE("locomotion terms: each observation term's state gradient matches central differences (double)",
          "[optim][locomotion][fd]") {
  const Ant a = load_ant();
  // every row of the robots' observation table is among the terms checked (a new row fails
  // here until its term is added to ant_observation); the rows that read a particle object
  // are checked on a coupled scene (coupled_policy_test.cpp)
  int object_rows = 0;
  for (const ObsRowT<double>& row : body_observation_rows<double>()) {
    if (row.create && std::string(row.name).rfind("object_", 0) == 0) {
      ++object_rows;
      continue;
    }
    bool listed = false;
    for (const scene::ObservationTerm& o : ant_observation().policy.observation)
      listed = listed || std::string(scene::to_string(o.kind)) == row.name;
    INFO(row.name);
    CHECK(listed);
  }
  auto pol = PolicyT<double>::create(a.cs, ant_observation());
  REQUIRE(pol.is_ok());
  CHECK(object_rows == 2);
  CHECK(pol->observation_terms().size() == body_observation_rows<double>().size() - object_rows + 1);  // and the phases
  StateT<double> s = torso_state(a, 0.6, 0.4, 0.3, {1.5, -0.2, 0.3});
  for (int k = 7; k < 15; ++k) s.joint_q[k] += 0.05 * (k - 10);
  for (int k = 0; k < 14; ++k) s.joint_qd[k] += 0.1 * std::sin(1.3 * k);
  std::vector<double> d_obs(std::size_t(pol->input_size()));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& x : d_obs) x = u(rng);
  StateT<double> adj = s;
  for (double& x : adj.joint_q) x = 0;
  for (double& x : adj.joint_qd) x = 0;
  std::vector<double> prev(8), d_prev(8, 0.0);
  for (double& x : prev) x = u(rng);
  pol->observe_adjoint(s, d_obs, adj, &d_prev);
  auto inner = [&](const StateT<double>& x, const std::vector<double>& pa) {
    std::vector<double> obs;
    pol->observe(0, x, obs, &pa);
    double r = 0;
    for (std::size_t k = 0; k < obs.size(); ++k) r += d_obs[k] * obs[k];
    return r;
  };
  const double eps = 1e-6;
  for (std::size_t k = 0; k < prev.size(); ++k) {
    std::vector<double> p = prev, m = prev;
    p[k] += eps, m[k] -= eps;
    INFO("previous action[" << k << "]");
    CHECK(d_prev[k] == Approx((inner(s, p) - inner(s, m)) / (2 * eps)).margin(1e-7));
  }
  for (int k = 0; k < int(s.joint_q.size()); ++k) {
    StateT<double> p = s, m = s;
    p.joint_q[k] += eps, m.joint_q[k] -= eps;
    INFO("q[" << k << "]");
    CHECK(adj.joint_q[k] == Approx((inner(p, prev) - inner(m, prev)) / (2 * eps)).margin(1e-7));
  }
  for (int k = 0; k < int(s.joint_qd.size()); ++k) {
    StateT<double> p = s, m = s;
    p.joint_qd[k] += eps, m.joint_qd[k] -= eps;
    INFO("qd[" << k << "]");
    CHECK(adj.joint_qd[k] == Approx((inner(p, prev) - inner(m, prev)) / (2 * eps)).margin(1e-7));
  }
}

TEST_CASE("locomotion terms: randomized starts stay within the spec's ranges and reach them", "[optim][locomotion]") {
  const Ant a = load_ant();
  const double angle = M_PI / 24;
  auto env = ScenePolicyEnvT<double>::create(
      a.cs, ant_observation(),
      {.env_count = 1, .q_range = 0.2, .qd_range = 0.25, .root_position_range = 0.1, .root_angle_range = angle});
  INFO(env.status().message());
  REQUIRE(env.is_ok());
  const StateT<double> s0 = a.cs.model.make_state();
  std::mt19937_64 rng(3);
  double max_dp = 0, max_angle = 0, max_dq = 0, max_qd = 0;
  for (int k = 0; k < 300; ++k) {
    (*env)->reset(0, &rng);
    const StateT<double>& s = (*env)->state(0);
    for (int i = 0; i < 3; ++i) max_dp = std::max(max_dp, std::abs(s.joint_q[i] - s0.joint_q[i]));
    // the turn between the start's quaternion and this one: 2 acos |<q0, q>|
    double d = 0;
    for (int i = 3; i < 7; ++i) d += s.joint_q[i] * s0.joint_q[i];
    max_angle = std::max(max_angle, 2 * std::acos(std::min(1.0, std::abs(d))));
    for (int i = 7; i < 15; ++i) max_dq = std::max(max_dq, std::abs(s.joint_q[i] - s0.joint_q[i]));
    for (double v : s.joint_qd) max_qd = std::max(max_qd, std::abs(v));
  }
  CHECK(max_dp <= 0.1);
  CHECK(max_dp > 0.095);
  CHECK(max_angle <= angle + 1e-12);
  CHECK(max_angle > 0.9 * angle);
  CHECK(max_dq <= 0.2 + 1e-12);
  CHECK(max_dq > 0.19);
  CHECK(max_qd <= 0.25);
  CHECK(max_qd > 0.24);
  // without an rng: the nominal start
  (*env)->reset(0, nullptr);
  CHECK((*env)->state(0).joint_q == s0.joint_q);
}

// the Ant's task (ant.json "run"): without actions it folds and its torso sinks below 0.27 m,
// which ends the episode at that frame; SHAC cuts those copies' windows there (no terminal
// value) and restarts them
TEST_CASE("locomotion terms: an Ant episode terminates when the torso sinks below 0.27 m, SHAC cuts the window",
          "[optim][locomotion][shac]") {
  const Ant a = load_ant();
  const scene::Task* run = a.doc.find_task("run");
  REQUIRE(run);
  REQUIRE(run->termination.body == "torso");
  auto env = ScenePolicyEnvT<double>::create(a.cs, *run, {.env_count = 1});
  INFO(env.status().message());
  REQUIRE(env.is_ok());
  ScenePolicyEnvT<double>& e = **env;
  e.reset(0, nullptr);
  const std::vector<double> still(8, 0.0);
  int ended = -1;
  double before = 0, after = 0;
  for (int t = 0; t < 240 && ended < 0; ++t) {
    const StateT<double>& s = e.state(0);
    before = rigid_body_probe(a.cs.model.rigid, s.joint_q, s.joint_qd, a.torso).c.y;
    REQUIRE(e.step(0, still).is_ok());
    if (e.terminated(0)) {
      ended = t;
      after = rigid_body_probe(a.cs.model.rigid, e.state(0).joint_q, e.state(0).joint_qd, a.torso).c.y;
    }
  }
  INFO("ended after frame " << ended << ": torso " << before << " -> " << after);
  REQUIRE(ended > 0);
  CHECK(before >= 0.27);
  CHECK(after < 0.27);
  e.reset(0, nullptr);
  CHECK(!e.terminated(0));

  // SHAC on 3 copies: the falling Ants end their episodes inside windows of 32 frames
  auto task = make_task(a.cs, *run);
  REQUIRE(task.is_ok());
  BatchShacOptions so;
  so.window = 32;
  so.critic_hidden = {16};
  so.thread_count = 1;
  auto shac = BatchShacTrainerT<double>::create(**task, so, {.env_count = 3});
  INFO(shac.status().message());
  REQUIRE(shac.is_ok());
  int terminated = 0;
  long long frames = 0;
  for (int k = 0; k < 4; ++k) {
    BatchShacStats st = *shac->step();
    terminated += st.terminated;
    frames = st.sim_steps / a.doc.settings.substeps;
  }
  CHECK(terminated > 0);
  CHECK(frames < 4 * 3 * 32);  // the cut windows ran fewer frames
  CHECK(frames > 0);
}

// the previous action observed: the action at frame t feeds the observation at t + 1, so the
// window's gradient carries it back through the policy of frame t + 1 to frame t's action (the
// run task observes it); SHAC's actor loss against central differences in double, mid-episode
// (previous actions non-zero at the window's start, the normalizer and critic in use)
TEST_CASE("locomotion terms: the previous action's gradient through a SHAC window matches central differences",
          "[optim][locomotion][shac][fd]") {
  const Ant a = load_ant();
  scene::Task run = *a.doc.find_task("run");
  run.policy.hidden = {16};
  auto task = make_task(a.cs, run);
  REQUIRE(task.is_ok());
  BatchShacOptions so;
  so.window = 6;
  so.critic_hidden = {8};
  so.action_noise = 0;  // actor_loss must be a function of w alone
  so.thread_count = 1;
  so.seed = 2;
  auto shac = BatchShacTrainerT<double>::create(**task, so, {.env_count = 2, .q_range = 0.2, .qd_range = 0.25});
  INFO(shac.status().message());
  REQUIRE(shac.is_ok());
  for (int k = 0; k < 2; ++k) REQUIRE(shac->step().is_ok());
  // a policy whose actions are large enough to matter to the next observation
  std::vector<double> w = shac->weights();
  for (std::size_t k = 0; k < w.size(); ++k) w[k] *= 3;
  test::check_actor_loss_grad(*shac, w, 24, 7);
}

// the learned exploration std (SHAC's stochastic actor: a = tanh(z + exp(log_std) eps), z the
// network's output before its tanh, the same draws eps for every call): the window's gradient with
// respect to log_std and the weights against central differences in double
TEST_CASE("locomotion terms: the learned std's window gradient matches central differences",
          "[optim][locomotion][shac][fd]") {
  const Ant a = load_ant();
  scene::Task run = *a.doc.find_task("run");
  run.policy.hidden = {16};
  auto task = make_task(a.cs, run);
  REQUIRE(task.is_ok());
  BatchShacOptions so;
  so.window = 6;
  so.critic_hidden = {8};
  so.learned_std = true;
  so.log_std_init = -1.0;
  so.thread_count = 1;
  so.seed = 5;
  auto shac = BatchShacTrainerT<double>::create(**task, so, {.env_count = 2, .q_range = 0.2, .qd_range = 0.25});
  INFO(shac.status().message());
  REQUIRE(shac.is_ok());
  for (int k = 0; k < 2; ++k) REQUIRE(shac->step().is_ok());
  const std::vector<double> w = shac->weights(), ls0 = shac->log_std();
  REQUIRE(ls0.size() == 8);
  std::vector<double> g, g_ls;
  REQUIRE(shac->actor_loss(w, &g, &g_ls).is_ok());
  REQUIRE(g_ls.size() == 8);
  const double eps = 1e-6;
  std::vector<double> ad, fd;
  for (std::size_t k = 0; k < ls0.size(); ++k) {
    std::vector<double> ls = ls0;
    ls[k] = ls0[k] + eps;
    shac->set_log_std(ls);
    const double fp = shac->actor_loss(w, nullptr).value();
    ls[k] = ls0[k] - eps;
    shac->set_log_std(ls);
    const double fm = shac->actor_loss(w, nullptr).value();
    ad.push_back(g_ls[k]);
    fd.push_back((fp - fm) / (2 * eps));
  }
  shac->set_log_std(ls0);
  test::sample_actor_loss_fd(*shac, w, g, 12, 11, ad, fd);  // the weights too, under the same noise
  test::check_against_largest(ad, fd, test::largest_entry(ad));
}

// SHAC's stochastic actor squashes after the noise: the action applied (and observed as the
// previous action) is a = tanh(z + std eps), z the network's output before its tanh, so it stays
// within (-1, 1) however large the std. Three trainers from the same seed draw the same eps for
// their first frame: std ~ 0 gives z = atanh(a0), and the other two must give the same eps =
// (atanh(a) - z) / std (the noise added after the tanh would not: a = tanh(z) + std eps)
TEST_CASE("locomotion terms: SHAC's stochastic actor applies tanh(z + std eps)", "[optim][locomotion][shac]") {
  const Ant a = load_ant();
  scene::Task run = *a.doc.find_task("run");
  run.policy.hidden = {16};
  auto task = make_task(a.cs, run);
  REQUIRE(task.is_ok());
  auto first_actions = [&](double log_std) {
    BatchShacOptions so;
    so.window = 1;
    so.critic_hidden = {8};
    so.learned_std = true;
    so.log_std_init = log_std;
    so.thread_count = 1;
    so.seed = 3;
    auto shac = BatchShacTrainerT<double>::create(**task, so, {.env_count = 3, .q_range = 0.2, .qd_range = 0.25});
    INFO(shac.status().message());
    REQUIRE(shac.is_ok());
    // larger weights: actions of either sign, some near saturation
    std::vector<double> w = shac->weights();
    for (double& x : w) x *= 8;
    shac->set_weights(w);
    REQUIRE(shac->step().is_ok());
    std::vector<double> actions;
    for (int i = 0; i < 3; ++i)
      for (double x : shac->env().episode(i).action) actions.push_back(x);
    return actions;
  };
  const std::vector<double> a0 = first_actions(-40), a1 = first_actions(-1), a2 = first_actions(1.0);
  REQUIRE(a0.size() == 24);
  double largest = 0;
  for (std::size_t k = 0; k < a0.size(); ++k) {
    INFO("action entry " << k << ": " << a0[k] << ", " << a1[k] << ", " << a2[k]);
    CHECK(std::abs(a1[k]) < 1);
    CHECK(std::abs(a2[k]) < 1);
    const double z = std::atanh(a0[k]);
    const double e1 = (std::atanh(a1[k]) - z) / std::exp(-1.0), e2 = (std::atanh(a2[k]) - z) / std::exp(1.0);
    CHECK(std::abs(e1 - e2) < 1e-7 * std::max(1.0, std::abs(e1)));
    largest = std::max(largest, std::abs(a2[k]));
  }
  CHECK(largest > 0.9);  // the large std saturates some actions
}
