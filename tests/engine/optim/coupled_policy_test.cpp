// a robot policy over a scene with particles (engine/optim/policy_env.h ScenePolicyEnvT on a
// coupled scene): assets/scenes/robot_arm_push_soft_policy.json, the 3-link arm hanging behind
// a soft ball of 13 particles on springs, its policy observing the joints and the ball's centre
// of mass. The frame cost sums the robot terms read on (s_t, s_t+1) and the particle terms read
// as L(s_t+1) - L(s_t): the env's window gradient with both sides in the cost holds against
// central differences in double over three copies, an episode's costs sum to the terms'
// definitions, BPTT's closed loop differentiates the same task, SHAC lowers its evaluation
// cost, and PODS-2 (which needs the step's tangent form) is refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/grad/fd_check.h"
#include "engine/optim/body_probe.h"
#include "engine/optim/pods.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "tests/engine/asset_scene.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;
using adj::test::ok;

namespace {

void must(const Status& s) {
  INFO(s.message());
  REQUIRE(s.is_ok());
}

// the scene's policy task with its horizon cut, a small network, and a robot term that reads
// the state beside the particle term: reach (link2's com to the goal, a running cost); the arm
// starts swinging towards the ball (link0 at 1.5 rad/s), so the window holds arm-ball contact
struct Coupled : adj::test::AssetScene<double> {
  explicit Coupled(int horizon, bool swing = true)
      : adj::test::AssetScene<double>("robot_arm_push_soft_policy.json", "push (policy)", horizon) {
    task.policy.hidden = {8};
    scene::LossTerm reach;
    reach.kind = scene::LossKind::reach;
    reach.object = "arm";
    reach.body = "link2";
    reach.target = "goal";
    reach.weight = 0.5;
    task.loss.push_back(reach);
    if (!swing) return;
    const scene::ObjectRange* arm = cs.find("arm");
    REQUIRE(arm);
    REQUIRE(cs.model.joint_qd.size() == std::size_t(cs.model.rigid.dof_count()));
    cs.model.joint_qd[std::size_t(cs.model.rigid.joint_dof_start[arm->body_begin])] = 1.5;
  }
};

// J(w): the summed frame costs of `frames` frames on every copy from where its episode stands,
// under the policy's actions (the copies rewound after); d_w: dJ/dw through the env's backward
// pass (the observations' adjoint included)
double window_cost(PolicyEnvT<double>& env, const std::vector<double>& w, int frames, std::vector<double>* d_w) {
  const MlpT<double>& net = env.mlp();
  double sum = 0;
  if (d_w) d_w->assign(w.size(), 0.0);
  std::vector<double> act, d_action, d_obs;
  for (int i = 0; i < env.env_count(); ++i) {
    std::vector<std::vector<double>> obs(static_cast<std::size_t>(frames));
    for (int t = 0; t < frames; ++t) {
      env.observe(i, obs[std::size_t(t)]);
      net.forward(w.data(), obs[std::size_t(t)], act);
      sum += ok(env.step(i, act));
    }
    if (d_w) {
      env.begin_backward(i);
      for (int t = frames - 1; t >= 0; --t) {
        must(env.backward_step(i, 1.0, d_action));
        net.backward(w.data(), obs[std::size_t(t)], d_action, d_w->data(), d_obs);
        env.add_observation_adjoint(i, d_obs);
      }
    }
    env.rewind(i);
  }
  return sum;
}

// centre of mass of an object's particles (the ball's masses are equal)
template <class S>
vec3<S> ball_com(const scene::CompiledSceneT<S>& cs, const StateT<S>& s) {
  const scene::ObjectRange* b = cs.find("ball");
  vec3<S> c;
  S m = 0;
  for (int i = b->particle_begin; i < b->particle_end; ++i) {
    c += s.particle_q[std::size_t(i)] * cs.model.particle_mass[std::size_t(i)];
    m += cs.model.particle_mass[std::size_t(i)];
  }
  return c * (S(1) / m);
}

}  // namespace

TEST_CASE("coupled policy: the env's window gradient with a particle and a robot term vs FD, three copies",
          "[optim][policy][coupling][fd]") {
  Coupled e(40);
  // and with the actions reaching the joints through a scale and offset (PolicySpec::action_scale)
  if (GENERATE(false, true)) {
    e.task.policy.action_scale = {0.5, 2.0, -1.5};
    e.task.policy.action_offset = {0.1, -0.2, 0.05};
  }
  auto task = ok(make_task(e.cs, e.task));
  PolicyEnvOptions eo = training_starts(e.task, 3);
  auto env = ok(task->policy_env(eo));
  REQUIRE_FALSE(env->has_action_hvp());
  std::vector<double> w(static_cast<std::size_t>(env->mlp().weight_count()));
  env->mlp().init_weights(w.data(), 7);
  for (double& x : w) x *= 3;  // outputs of a few tenths of a radian: the arm moves the ball
  // three copies from randomized starts, 4 frames into their episodes (the particle terms read
  // the episode's start, not the window's)
  std::mt19937_64 rng(3);
  std::vector<double> act, obs;
  for (int i = 0; i < env->env_count(); ++i) {
    env->reset(i, &rng);
    for (int t = 0; t < 4; ++t) {
      env->observe(i, obs);
      env->mlp().forward(w.data(), obs, act);
      ok(env->step(i, act));
    }
    env->clear_tape(i);
  }
  const int frames = 8;
  std::vector<double> g;
  const double j0 = window_cost(*env, w, frames, &g);
  REQUIRE(window_cost(*env, w, frames, nullptr) == j0);  // rewound: the same window again
  std::vector<double> fd(w.size());
  double largest = 0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    const double eps = 1e-5;  // 1e-6 leaves rounding noise of 4e-8 on the smallest entries
    std::vector<double> x = w;
    x[k] = w[k] + eps;
    const double jp = window_cost(*env, x, frames, nullptr);
    x[k] = w[k] - eps;
    const double jm = window_cost(*env, x, frames, nullptr);
    fd[k] = (jp - jm) / (2 * eps);
    largest = std::max(largest, std::abs(fd[k]));
  }
  INFO("J = " << j0 << ", " << w.size() << " weights, largest |dJ/dw| " << largest);
  CHECK(largest > 1e-3);  // the check compares gradients, not noise
  FdReport r = compare_gradients(g, fd, 1e-8, 1e-4);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE(
    "coupled policy: an action reaches its joint as action_offset + action_scale x action, and a wrong count "
    "is refused",
    "[optim][policy][coupling]") {
  Coupled e(10, false);
  e.task.policy.action_scale = {0.5, 2.0, -1.5};
  e.task.policy.action_offset = {0.1, -0.2, 0.05};
  PolicyT<double> policy = ok(PolicyT<double>::create(e.cs, e.task));
  const scene::ObjectRange* arm = e.cs.find("arm");
  REQUIRE(arm);
  REQUIRE(arm->actuator_end - arm->actuator_begin == 3);
  const std::vector<double> action{0.3, -0.4, 0.2};
  ControlT<double> c = e.cs.model.make_control(), g = e.cs.model.make_control();
  policy.apply_outputs(action, c);
  std::vector<double> d_action;
  for (int k = 0; k < 3; ++k) {
    const std::size_t j = std::size_t(arm->actuator_begin + k);
    CHECK(c.joint_act[j] == Approx(e.task.policy.action_offset[std::size_t(k)] +
                                   e.task.policy.action_scale[std::size_t(k)] * action[std::size_t(k)]));
    g.joint_act[j] = double(k + 1);
  }
  policy.output_grads(g, d_action);  // dL/d action = scale x dL/d control
  CHECK(d_action == std::vector<double>{0.5, 4.0, -4.5});
  e.task.policy.action_offset = {0.1};
  auto bad = PolicyT<double>::create(e.cs, e.task);
  REQUIRE_FALSE(bad.is_ok());
  INFO(bad.status().message());
  CHECK(bad.status().message() ==
        "task 'push (policy)': policy.action_offset has 1 entries; the policy has 3 outputs (robot \"arm\"'s "
        "actuators), one entry each");
}

TEST_CASE("coupled policy: the ball's centre-of-mass observations' state gradient vs FD (double)",
          "[optim][policy][coupling][fd]") {
  Coupled e(10, false);
  // the scene's observation: joints, then object_position and object_velocity of the ball (all
  // its particles, or three of them)
  if (GENERATE(false, true))
    for (scene::ObservationTerm& o : e.task.policy.observation)
      if (scene::reads_object(o.kind)) o.particles = {0, 3, 7};
  auto pol = ok(PolicyT<double>::create(e.cs, e.task));
  int object_terms = 0;
  for (const ObsTermT<double>& t : pol.observation_terms())
    object_terms += std::string(t.row->name).rfind("object_", 0) == 0;
  REQUIRE(object_terms == 2);
  StateT<double> s = e.cs.model.make_state();
  std::mt19937_64 rng(9);
  auto u = [&] { return double(rng() >> 11) * 0x1.0p-52 - 0.5; };
  for (vec3<double>& x : s.particle_q) x += vec3<double>(u(), u(), u()) * 0.1;
  for (vec3<double>& v : s.particle_qd) v = vec3<double>(u(), u(), u());
  std::vector<double> d_obs(static_cast<std::size_t>(pol.input_size())), obs;
  for (double& x : d_obs) x = u();
  StateT<double> adj = zero_like(s);
  pol.observe_adjoint(s, d_obs, adj);
  auto inner = [&](const StateT<double>& x) {
    pol.observe(0, x, obs);
    double r = 0;
    for (std::size_t k = 0; k < obs.size(); ++k) r += d_obs[k] * obs[k];
    return r;
  };
  std::vector<double> ad, fd;
  for (int velocity = 0; velocity < 2; ++velocity)
    for (std::size_t i = 0; i < s.particle_q.size(); ++i)
      for (int a = 0; a < 3; ++a) {
        StateT<double> x = s;
        double& v = velocity ? x.particle_qd[i][a] : x.particle_q[i][a];
        const double v0 = v, eps = 1e-6;
        v = v0 + eps;
        const double fp = inner(x);
        v = v0 - eps;
        const double fm = inner(x);
        fd.push_back((fp - fm) / (2 * eps));
        ad.push_back(velocity ? adj.particle_qd[i][a] : adj.particle_q[i][a]);
      }
  double largest = 0;
  for (double x : fd) largest = std::max(largest, std::abs(x));
  CHECK(largest > 0.01);
  FdReport r = compare_gradients(ad, fd, 1e-9, 1e-6);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE(
    "coupled policy: an object observation over listed particles reads their centre of mass, and an index "
    "past the object is refused",
    "[optim][policy][coupling]") {
  Coupled e(10, false);
  std::size_t offset = 0;  // where object_position's entries start
  for (scene::ObservationTerm& o : e.task.policy.observation)
    if (o.kind == scene::ObservationKind::object_position) o.particles = {2, 5};
  auto pol = ok(PolicyT<double>::create(e.cs, e.task));
  for (const ObsTermT<double>& t : pol.observation_terms())
    if (std::string(t.row->name) == "object_position") offset = std::size_t(t.offset);
  StateT<double> s = e.cs.model.make_state();
  const scene::ObjectRange* ball = e.cs.find("ball");
  REQUIRE(ball);
  const std::size_t p2 = std::size_t(ball->particle_begin + 2), p5 = std::size_t(ball->particle_begin + 5);
  s.particle_q[p2] = {0.1, 0.2, 0.3};
  s.particle_q[p5] = {0.5, -0.2, 0.1};
  std::vector<double> obs;
  pol.observe(0, s, obs);
  const double m2 = e.cs.model.particle_mass[p2], m5 = e.cs.model.particle_mass[p5];
  for (int a = 0; a < 3; ++a)
    CHECK(obs[offset + std::size_t(a)] == Approx((m2 * s.particle_q[p2][a] + m5 * s.particle_q[p5][a]) / (m2 + m5)));
  const int count = ball->particle_end - ball->particle_begin;
  for (scene::ObservationTerm& o : e.task.policy.observation)
    if (o.kind == scene::ObservationKind::object_position) o.particles = {1, count};
  auto bad = PolicyT<double>::create(e.cs, e.task);
  REQUIRE_FALSE(bad.is_ok());
  INFO(bad.status().message());
  CHECK(bad.status().message().find("(object_position): particles[1] is " + std::to_string(count) + " but 'ball' has " +
                                    std::to_string(count) + " particles") != std::string::npos);
}

TEST_CASE("coupled policy: an episode's frame costs sum to its terms' definitions, and BPTT's loss agrees",
          "[optim][policy][coupling]") {
  Coupled e(30);
  auto task = ok(make_task(e.cs, e.task));
  REQUIRE(std::string(task->kind()) == "robot + particles, coupled");
  auto env = ok(task->policy_env({}));
  const std::vector<double> w(task->theta().begin(), task->theta().end());  // the policy's initial weights
  const scene::ObjectRange* arm = e.cs.find("arm");
  int link2 = -1;
  for (int b = arm->body_begin; b < arm->body_end; ++b)
    if (e.cs.model.rigid.body_name[std::size_t(b)] == "link2") link2 = b;
  REQUIRE(link2 >= 0);
  const scene::ObjectRange* goal = e.cs.find("goal");
  const vec3<double> g(goal->target[0], goal->target[1], goal->target[2]);
  double sum = 0, reach = 0, effort = 0;
  std::vector<double> obs, act;
  const vec3<double> c0 = ball_com(e.cs, env->state(0));
  for (int t = 0; t < e.task.horizon; ++t) {
    env->observe(0, obs);
    env->mlp().forward(w.data(), obs, act);
    sum += ok(env->step(0, act));
    const StateT<double>& s = env->state(0);
    reach += length_sq(rigid_body_probe(e.cs.model.rigid, s.joint_q, s.joint_qd, link2).c - g);
    for (double a : act) effort += a * a;
  }
  const vec3<double> c1 = ball_com(e.cs, env->state(0));
  // position [ball -> goal] (weight wp): telescoped, L(end) - L(start); reach [arm.link2 -> goal]
  // (0.5): each frame's cost of s_t+1; effort (we): each frame's |a|^2
  REQUIRE(e.task.loss[0].kind == scene::LossKind::position);
  REQUIRE(e.task.loss[1].kind == scene::LossKind::effort);
  const double wp = e.task.loss[0].weight, we = e.task.loss[1].weight;
  const double particles = wp * (length_sq(c1 - g) - length_sq(c0 - g));
  const double robots = 0.5 * reach + we * effort;
  INFO("frame costs " << sum << ", particles " << particles << ", robots " << robots);
  CHECK(std::abs(c1.x - c0.x) > 1e-3);  // the swing moved the ball
  CHECK(sum == Approx(particles + robots).epsilon(1e-10));
  // BPTT's loss reads the position at the end and the running reach as a mean over the frames
  const double loss = ok(task->evaluate(task->theta()));
  CHECK(loss == Approx(wp * length_sq(c1 - g) + 0.5 * reach / e.task.horizon + we * effort).epsilon(1e-10));
}

TEST_CASE("coupled policy: BPTT's closed-loop gradient on the coupled task vs FD", "[optim][policy][coupling][fd]") {
  Coupled e(12);
  auto task = ok(make_task(e.cs, e.task));
  optim::test::check_report_rows(ok(task->check_grad(24, 1e-6, 5)), 1e-9, 1e-4);
}

TEST_CASE("coupled policy: SHAC over copies lowers the evaluation cost of the push",
          "[optim][policy][coupling][shac]") {
  // the scene's task on a 60-frame horizon, trained as `adjoint optimize --method shac` trains it
  // (its shac block: 30-frame windows, action noise 0.1), 8 copies, 40 windows. The evaluation
  // episode's mean frame cost is 100 (|c(end) - goal|^2 - |c(0) - goal|^2) / 60 plus the effort:
  // 0 for the arm hanging still, -0.273 for the ball pushed onto the goal
  adj::test::AssetScene<float> e("robot_arm_push_soft_policy.json", "push (policy)", 60);
  auto task = ok(make_task(e.cs, e.task));
  auto shac = ok(make_shac_trainer(*task, {.envs = 8, .windows = 40, .seed = 1, .thread_count = 1}));
  const double before = ok(shac.evaluate());
  for (int k = 0; k < 40; ++k) ok(shac.step());
  float x = 0;
  const double after =
      ok(shac.evaluate([&](int, const PolicyEnvT<float>& env) { x = ball_com(e.cs, env.state(0)).x; }));
  INFO("evaluation mean frame cost before " << before << ", after " << after << "; the ball ends at x = " << x
                                            << " (from 0.495; the goal at 0.9)");
  CHECK(std::abs(before) < 1e-3);
  CHECK(after < -0.15);
  CHECK(x > 0.65);
}

TEST_CASE("coupled policy: SHAC gives the same weights on 1 and 2 threads", "[optim][policy][coupling][shac]") {
  adj::test::AssetScene<float> e("robot_arm_push_soft_policy.json", "push (policy)", 30);
  auto task = ok(make_task(e.cs, e.task));
  auto train = [&](int threads) {
    auto shac = ok(make_shac_trainer(*task, {.envs = 4, .windows = 3, .seed = 2, .thread_count = threads}));
    for (int k = 0; k < 3; ++k) ok(shac.step());
    return shac.weights();
  };
  const std::vector<float> one = train(1), two = train(2);
  CHECK(one == two);
}

// AHAC's stiffness measure counts the arm's contacts with the ball: the arm swinging into the
// ball under zero actions (it touches nothing else) reads the pairs' forces; hanging still, 0
TEST_CASE("coupled policy: AHAC's contact measure counts the arm's contacts with the particles",
          "[optim][policy][coupling][ahac]") {
  for (bool swing : {true, false}) {
    Coupled e(40, swing);
    auto task = ok(make_task(e.cs, e.task));
    auto env = ok(task->policy_env({.env_count = 1}));
    env->measure_contacts(true);
    env->reset(0, nullptr);
    const std::vector<double> zero(std::size_t(env->action_size()), 0.0);
    double largest = 0;
    for (int t = 0; t < 40; ++t) {
      REQUIRE(env->step(0, zero).is_ok());
      largest = std::max(largest, env->contact_measure(0));
    }
    INFO("swing " << swing << ": the largest measure " << largest << " N");
    if (swing)
      CHECK(largest > 0.1);
    else
      CHECK(largest == 0);
  }
}

TEST_CASE("coupled policy: PODS-2 is refused by name (the coupled step has no tangent form)",
          "[optim][policy][coupling][pods]") {
  Coupled e(10, false);
  auto task = ok(make_task(e.cs, e.task));
  PodsOptions o;
  o.order = 2;
  o.batch = 2;
  auto pods = PodsTrainerT<double>::create(*task, o);
  REQUIRE_FALSE(pods.is_ok());
  const std::string m = pods.status().message();
  INFO(m);
  CHECK(m.find("task 'push (policy)' (PODS)") != std::string::npos);
  CHECK(m.find("coupled step of robots and particles has none") != std::string::npos);
  // the H v product itself says so too, rather than running a tangent step the solver refuses
  auto env = ok(task->policy_env({}));
  std::vector<double> a(static_cast<std::size_t>(env->action_size()), 0.0), out;
  Status st = env->action_hvp(0, a, a, 1.0, out);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("coupled step") != std::string::npos);
}
