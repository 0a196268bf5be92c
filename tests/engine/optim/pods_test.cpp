// engine/optim/pods.h: the open-loop problem's gradient against central differences of J; its
// exact Hessian-vector products against central differences of that gradient and second
// differences of J, symmetric and linear, on smooth tasks (the cartpole; the payload's running
// costs) and on contact tasks (the arm throw, ball on the paddle; the spring walker, particles on
// the ground); PODS-1 and PODS-2 improve the cartpole's policy, PODS-2 the walker's; deterministic for a seed at any
// thread count; errors
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>

#include "engine/grad/fd_check.h"
#include "engine/optim/pods.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/asset_scene.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;
using adj::test::AssetScene;
using adj::test::ok;

namespace {

// robot_cartpole.json's "swing up (policy)", in double
struct Cartpole : AssetScene<double> {
  explicit Cartpole(int horizon = 0) : AssetScene<double>("robot_cartpole.json", "swing up (policy)", horizon) {}
};

// the spring walker (tests/engine/optim/optim_scenes.h: penalty contact and smoothed friction
// with the ground; its particles fall 2 cm onto it in the first 4 frames), a policy over its 11
// springs, walking along x
Task walker_task(int horizon) {
  Task t;
  t.name = "walker";
  t.horizon = horizon;
  t.has_policy = true;
  t.policy.hidden = {8};
  t.policy.phases = 2;
  t.policy.phase_period = 0.5;
  t.policy.output_scale = 0.3;
  t.parameters = {{ParamKind::policy, "robot"}};
  t.loss = {{LossKind::distance, "robot", "", -1, {1, 0, 0}}};
  t.seed = 5;
  return t;
}

std::vector<double> random_vector(int n, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = scale * (double(rng() >> 11) * 0x1.0p-52 - 1.0);
  return v;
}

// a + s x
std::vector<double> plus(const std::vector<double>& a, double s, const std::vector<double>& x) {
  std::vector<double> out = a;
  for (std::size_t k = 0; k < a.size(); ++k) out[k] += s * x[k];
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

// the gradient of J against central differences on every entry
void check_gradient(ActionSequenceT<double>& seq, const std::vector<double>& a) {
  std::vector<double> g;
  const double j0 = ok(seq.cost(a, &g));
  INFO("J = " << j0 << ", " << a.size() << " action entries");
  std::vector<double> fd(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double eps = 1e-6;
    std::vector<double> x = a;
    x[k] = a[k] + eps;
    const double jp = ok(seq.cost(x));
    x[k] = a[k] - eps;
    const double jm = ok(seq.cost(x));
    fd[k] = (jp - jm) / (2 * eps);
  }
  FdReport gr = compare_gradients(g, fd, 1e-9, 1e-4);
  INFO("gradient: " << gr.message);
  CHECK(gr.ok);
}

// H v (exact, forward over reverse) at a, against what it must agree with:
//  - central differences of the adjoint gradient along v (steps e/|v| and e/2|v|, Richardson's
//    extrapolation of the two), entry by entry, relative to the largest entry: within rtol. The
//    reference's own error (truncation ~e^4 after extrapolation, the gradient's rounding / e) is
//    bounded by the two steps' spread, checked below rtol. A product off by 10 rtol in one entry,
//    or by 2 rtol in every entry, fails the check (tested).
//  - v.Hv against second differences of J alone (no gradient; step h), within rtol_j
//  - symmetry u.Hv = v.Hu and linearity H(2v) = 2 Hv, to rounding (1e-9)
// (the steps: where the differences are most accurate, measured; contact's stiff, kinked J
// needs short ones)
void check_hvp(ActionSequenceT<double>& seq, const std::vector<double>& a, double e, double rtol, double h,
               double rtol_j) {
  const int n = seq.size();
  const std::vector<double> u = random_vector(n, 1.0, 2), v = random_vector(n, 1.0, 3);
  std::vector<double> hu, hv, gp, gm, gp2, gm2;
  REQUIRE(seq.hvp(a, u, hu));
  REQUIRE(seq.hvp(a, v, hv));
  const double s = e / std::sqrt(dot(v, v));
  ok(seq.cost(plus(a, s, v), &gp));
  ok(seq.cost(plus(a, -s, v), &gm));
  ok(seq.cost(plus(a, s / 2, v), &gp2));
  ok(seq.cost(plus(a, -s / 2, v), &gm2));
  std::vector<double> fd(hv.size()), fd2(hv.size()), rich(hv.size());
  for (std::size_t k = 0; k < fd.size(); ++k) {
    fd[k] = (gp[k] - gm[k]) / (2 * s);
    fd2[k] = (gp2[k] - gm2[k]) / s;
    rich[k] = (4 * fd2[k] - fd[k]) / 3;  // the e^2 terms cancel
  }
  const double err = relative_error(hv, rich), spread = relative_error(fd2, rich);
  INFO("H v against differences of the gradient: " << err << " (the two steps' spread " << spread << "), rtol "
                                                   << rtol);
  CHECK(spread < rtol);
  CHECK(err <= rtol);
  // a wrong product would not pass
  std::size_t big = 0;
  for (std::size_t k = 0; k < hv.size(); ++k)
    if (std::abs(hv[k]) > std::abs(hv[big])) big = k;
  std::vector<double> off = hv;
  off[big] += 10 * rtol * std::abs(hv[big]);
  CHECK(relative_error(off, rich) > rtol);
  off = hv;
  for (std::size_t k = 0; k < off.size(); ++k) off[k] += 2 * rtol * std::abs(hv[big]) * (k % 2 ? 1 : -1);
  CHECK(relative_error(off, rich) > rtol);

  // v.Hv = d^2/ds^2 J(a + s v) at 0, by second differences of J alone
  const double j0 = ok(seq.cost(a));
  const double second = (ok(seq.cost(plus(a, h, v))) - 2 * j0 + ok(seq.cost(plus(a, -h, v)))) / (h * h);
  const double vhv = dot(v, hv);
  INFO("v.Hv " << vhv << ", second difference of J " << second);
  CHECK(std::abs(vhv - second) <= rtol_j * std::abs(second));
  const double uhv = dot(u, hv), vhu = dot(v, hu);
  INFO("u.Hv " << uhv << ", v.Hu " << vhu);
  CHECK(std::abs(uhv - vhu) <= 1e-9 * std::max(std::abs(uhv), std::abs(vhu)));
  std::vector<double> h2v, v2 = v;
  for (double& x : v2) x *= 2;
  REQUIRE(seq.hvp(a, v2, h2v));
  CHECK(relative_error(h2v, plus(hv, 1.0, hv)) <= 1e-12);
}

}  // namespace

TEST_CASE("pods: action-sequence gradient and H v, smooth task (cartpole)", "[optim][pods][fd]") {
  Cartpole cp(20);
  auto task = ok(make_task(cp.cs, cp.task));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, cp.task.horizon);
  const std::vector<double> a = random_vector(seq.size(), 2.0, 1);
  check_gradient(seq, a);
  check_hvp(seq, a, 1e-3, 1e-6, 3e-3, 1e-5);  // measured: 2.6e-11 and 3.9e-9
}

// the payload (assets/scenes/robot_payload.json): its reach and speed terms are running costs
// through the body kinematics (their seeds' tangents: second derivatives of the kinematics)
TEST_CASE("pods: H v, smooth task with running costs (payload)", "[optim][pods][fd]") {
  AssetScene<double> e("robot_payload.json", "move payload (policy)", 20);
  auto task = ok(make_task(e.cs, e.task));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, e.task.horizon);
  check_hvp(seq, random_vector(seq.size(), 0.5, 1), 1e-3, 1e-6, 3e-3, 1e-5);  // measured: 3.0e-10 and 1.7e-7
}

// the arm throw (assets/scenes/robot_arm_throw.json) in its first 12 frames: the ball drops onto
// the paddle and is pushed by it (measured: a pressing ball-paddle contact in frames 1-9 but 6;
// it leaves the paddle in frame 10), so H v runs through the contact pair's adjoint on tangent
// numbers, while contact is made and broken
TEST_CASE("pods: H v, contact task (the arm throw, ball on the paddle)", "[optim][pods][fd][contact]") {
  AssetScene<double> e("robot_arm_throw.json", "throw (policy)", 12);
  auto task = ok(make_task(e.cs, e.task));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, e.task.horizon);
  const std::vector<double> a = random_vector(seq.size(), 0.5, 1);
  std::vector<StateT<double>> states;
  ok(seq.cost(a, nullptr, nullptr, &states));
  const RigidModelT<double>& m = e.cs.model.rigid;
  int touching = 0;  // states where the paddle presses on the ball
  for (const StateT<double>& s : states) {
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c));
    bool on = false;
    for (int k = 0; k < c.contact_count(); ++k)
      on = on ||
           (c.other_body[k] >= 0 && length(c.force[k]) > 0.5 &&
            (m.body_name[std::size_t(c.body[k])] == "ball" || m.body_name[std::size_t(c.other_body[k])] == "ball"));
    touching += on;
  }
  CHECK(touching >= 8);
  check_hvp(seq, a, 1e-5, 1e-6, 1e-4, 1e-4);  // measured: 1.1e-8 (plain central) and 6.9e-6
}

// the particle world's H v (SolverT::tangent_step, engine/solver/particle_tangent.cpp): the
// spring walker's particles fall 2 cm onto the ground in its first frames and press on it with
// penalty contact and smoothed friction from then on; the velocity term's seed has a tangent
TEST_CASE("pods: action-sequence gradient and H v on a particle contact task (spring walker)",
          "[optim][pods][fd][contact]") {
  auto cs = robot_scene<double>();
  Task spec = walker_task(12);
  spec.loss.push_back({LossKind::velocity, "robot", "", -1, {1, 0, 0}, 0.5});
  auto task = ok(make_task(cs, spec));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, 12);
  const std::vector<double> a = random_vector(seq.size(), 0.2, 1);
  std::vector<StateT<double>> states;
  ok(seq.cost(a, nullptr, nullptr, &states));
  int touching = 0;  // states with a particle inside its radius of the ground (y = 0)
  for (const StateT<double>& st : states) {
    bool on = false;
    for (int p = 0; p < cs.model.particle_count(); ++p)
      on = on || st.particle_q[std::size_t(p)].y < cs.model.particle_radius[std::size_t(p)];
    touching += on;
  }
  INFO("states in ground contact: " << touching << " of " << states.size());
  CHECK(touching >= 8);
  check_gradient(seq, a);
  check_hvp(seq, a, 1e-4, 1e-6, 1e-4, 1e-4);
}

namespace {

struct Trained {
  double before = 0, after = 0;  // mean frame cost from the task's start
  std::vector<PodsStats> stats;
  std::vector<double> weights;
};

// PODS from the task's start (robot_cartpole.json "swing up (policy)", 240 frames)
Trained train(int order, std::uint64_t seed, int iterations, int threads, int batch = 2, double q_range = 0) {
  Cartpole cp;
  cp.task.seed = seed;
  auto task = ok(make_task(cp.cs, cp.task));
  PodsOptions o;
  o.order = order;
  o.batch = batch;
  o.thread_count = threads;
  auto pods = ok(PodsTrainerT<double>::create(*task, o, {.q_range = q_range, .qd_range = 0.5 * q_range}));
  Trained t;
  t.before = ok(pods.evaluate());
  for (int k = 0; k < iterations; ++k) {
    PodsStats s = ok(pods.step());
    CHECK(s.improved_cost <= s.policy_cost);  // the line search never keeps a worse sequence
    t.stats.push_back(s);
  }
  t.weights = pods.weights();
  t.after = ok(pods.evaluate());
  return t;
}

}  // namespace

// measured (seed 1): the initial policy costs 4.030 (hanging still: 4.0); PODS-1 reaches 4.0011
// in 10 iterations (94k substeps), the hanging optimum that BPTT finds too; PODS-2's first
// Newton step improves the sequence to 4.0004 where PODS-1's first gradient step reaches 4.0114.
// Over 10 iterations (255k substeps, 88 exact H v) PODS-2 leaves the hanging optimum: 4.030 ->
// 3.70. Neither swings the pole up in this budget.
TEST_CASE("pods: PODS-1 lowers the cartpole policy's cost, and PODS-2's Newton step beats its gradient step",
          "[optim][pods][cartpole]") {
  Trained first = train(1, 1, 10, 2);
  INFO("PODS-1: mean frame cost " << first.before << " -> " << first.after);
  CHECK(first.after < first.before - 0.02);
  CHECK(first.stats.front().improved_cost < first.stats.front().policy_cost);
  CHECK(first.stats.back().sim_steps > 0);
  Trained second = train(2, 1, 10, 2);
  INFO("first improved sequence: PODS-1 " << first.stats.front().improved_cost << ", PODS-2 "
                                          << second.stats.front().improved_cost);
  CHECK(second.stats.front().improved_cost < first.stats.front().improved_cost - 0.005);
  CHECK(second.stats.front().hvps > 0);
  // PODS-2 leaves the hanging optimum that PODS-1 (and BPTT) settle in
  double best = second.after;
  for (const PodsStats& s : second.stats) best = std::min(best, s.policy_cost);
  INFO("PODS-2: mean frame cost " << second.before << " -> " << second.after << ", best policy " << best << " ("
                                  << second.stats.back().sim_steps << " substeps, " << second.stats.back().hvps
                                  << " H v)");
  CHECK(best < 3.95);
}

// the soft walker (assets/scenes/soft_walker.json: tets actuated by a phases-only policy, on the
// ground with penalty contact and friction from its first frame on) in its first frames: H v
// through the tet kernels and ground contact on tangent numbers
TEST_CASE("pods: H v on a soft-body contact task (soft walker)", "[optim][pods][fd][contact]") {
  AssetScene<double> e("soft_walker.json", "walk", 6);
  auto task = ok(make_task(e.cs, e.task));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, e.task.horizon);
  const std::vector<double> a = random_vector(seq.size(), 0.3, 1);
  std::vector<StateT<double>> states;
  ok(seq.cost(a, nullptr, nullptr, &states));
  const ModelT<double>& m = e.cs.model;
  int touching = 0;  // states with a particle inside its radius of the ground (y = 0)
  for (const StateT<double>& st : states) {
    bool on = false;
    for (int p = 0; p < m.particle_count(); ++p)
      on = on || st.particle_q[std::size_t(p)].y < m.particle_radius[std::size_t(p)];
    touching += on;
  }
  INFO("states in ground contact: " << touching << " of " << states.size());
  CHECK(touching >= 5);  // measured: 6 of 7 (all but the start)
  check_hvp(seq, a, 1e-4, 1e-6, 1e-4, 1e-4);
}

// PODS-2 on a particle task: the spring walker (60 frames, particles on the ground) walks
// further along x after a few Newton steps on its episode's actions
TEST_CASE("pods: PODS-2 lowers a particle task's policy cost (spring walker)", "[optim][pods][contact]") {
  auto cs = robot_scene<double>();
  auto task = ok(make_task(cs, walker_task(60)));
  auto pods = ok(PodsTrainerT<double>::create(*task, {.order = 2, .batch = 1, .thread_count = 1}));
  const double before = ok(pods.evaluate());
  PodsStats last;
  for (int k = 0; k < 5; ++k) {
    last = ok(pods.step());
    CHECK(last.improved_cost <= last.policy_cost);
  }
  const double after = ok(pods.evaluate());
  INFO("mean frame cost " << before << " -> " << after << " (" << last.hvps << " H v)");
  CHECK(after < before);
  CHECK(last.hvps > 0);
}

// the editor's ghost pair: copy 0's rollout under the policy and under the improved actions,
// from one start, horizon + 1 states each; they part (the step moved the actions)
TEST_CASE("pods: copy 0's policy and improved trajectories start together and part", "[optim][pods]") {
  Cartpole cp;
  auto task = ok(make_task(cp.cs, cp.task));
  auto pods = ok(PodsTrainerT<double>::create(*task, {.batch = 1}, {.q_range = 0.5, .qd_range = 0.25}));
  CHECK(pods.policy_states().empty());
  ok(pods.step());
  const auto& p = pods.policy_states();
  const auto& q = pods.improved_states();
  REQUIRE(p.size() == std::size_t(cp.task.horizon + 1));
  REQUIRE(q.size() == p.size());
  CHECK(p.front().joint_q == q.front().joint_q);
  CHECK(p.front().joint_qd == q.front().joint_qd);
  double apart = 0;
  for (std::size_t k = 0; k < p.back().joint_q.size(); ++k)
    apart = std::max(apart, std::abs(p.back().joint_q[k] - q.back().joint_q[k]));
  CHECK(apart > 1e-6);
}

TEST_CASE("pods: the same seed gives the same weights on 1 and 2 threads", "[optim][pods]") {
  for (int order : {1, 2}) {
    INFO("PODS-" << order);
    // three episodes from different random starts per iteration
    const std::vector<double> a = train(order, 3, 2, 1, 3, 1.0).weights, b = train(order, 3, 2, 2, 3, 1.0).weights,
                              c = train(order, 4, 2, 2, 3, 1.0).weights;
    CHECK(a == b);
    CHECK(a != c);
  }
}

// an episode whose step fails (its start blew up: every start's velocities ~1e200, so the
// first substep overflows) does not end the run: the iteration takes no update, its reason
// names the iteration, the episode and the step's own message, and the count goes on
TEST_CASE("pods: an episode whose step fails skips the iteration's update, named and counted", "[optim][pods]") {
  Cartpole cp;
  auto task = ok(make_task(cp.cs, cp.task));
  auto pods =
      ok(PodsTrainerT<double>::create(*task, {.batch = 2, .thread_count = 1}, {.q_range = 0, .qd_range = 1e200}));
  const std::vector<double> w0 = pods.weights();
  for (int k = 0; k < 2; ++k) {
    PodsStats s = ok(pods.step());
    INFO(s.skip_reason);
    CHECK(s.skipped);
    CHECK(s.skipped_iterations == k + 1);
    CHECK_THAT(s.skip_reason, Catch::StartsWith("PODS iteration " + std::to_string(k) + " skipped: episode 0: "));
    CHECK_THAT(s.skip_reason, Catch::Contains("joint_q"));  // the step's own message: the quantity
  }
  CHECK(pods.weights() == w0);
  // from ordinary starts the same trainer's settings take a step
  auto trains = ok(PodsTrainerT<double>::create(*task, {.batch = 2, .thread_count = 1}));
  PodsStats s = ok(trains.step());
  CHECK(!s.skipped);
  CHECK(s.skipped_iterations == 0);
  CHECK(trains.weights() != w0);
}

TEST_CASE("pods: errors", "[optim][pods]") {
  Cartpole cp;
  auto task = ok(make_task(cp.cs, cp.task));
  PodsOptions o;
  o.order = 3;
  auto r = PodsTrainerT<double>::create(*task, o);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("order 1 or 2"));
  scene::Task open = *cp.doc.find_task("swing up");
  auto open_task = ok(make_task(cp.cs, open));
  r = PodsTrainerT<double>::create(*open_task, {});
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("no policy"));
}

// one H v's wall time against one gradient's (J and dJ/da), on one core, best of 5, on the
// particle walkers and the robot tasks (the ratios engine/optim/pods.h states; hidden: `"[.bench]"`)
TEST_CASE("pods: H v and gradient wall time", "[.bench]") {
  const std::pair<const char*, const char*> cases[] = {{"walker.json", "walk"},
                                                       {"soft_walker.json", "walk"},
                                                       {"robot_payload.json", "move payload (policy)"},
                                                       {"robot_cartpole.json", "swing up (policy)"}};
  for (auto [file, name] : cases) {
    AssetScene<double> e(file, name);
    auto task = ok(make_task(e.cs, e.task, {.thread_count = 1}));
    auto env = ok(task->policy_env({.thread_count = 1}));
    ActionSequenceT<double> seq(*env, 0, e.task.horizon);
    const std::vector<double> a = random_vector(seq.size(), 0.2, 1), v = random_vector(seq.size(), 1.0, 2);
    std::vector<double> g, hv;
    auto best = [](const std::function<void()>& f) {
      double t = 1e30;
      for (int k = 0; k < 5; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t = std::min(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return t;
    };
    const double tg = best([&] { ok(seq.cost(a, &g)); }), th = best([&] { REQUIRE(seq.hvp(a, v, hv)); });
    std::printf("%-22s %4d frames x %d substeps, %4d actions: gradient %.4f s, H v %.4f s (%.2fx)\n", file,
                e.task.horizon, env->substeps(), seq.size(), tg, th, th / tg);
  }
}

TEST_CASE("pods: experiment (ORDER, ITERS, BATCH, QR, STEP, SEED)", "[.experiment]") {
  auto env = [](const char* n, double d) {
    const char* v = std::getenv(n);
    return v ? std::atof(v) : d;
  };
  Cartpole cp;
  cp.task.seed = std::uint64_t(env("SEED", 1));
  auto task = ok(make_task(cp.cs, cp.task));
  PodsOptions o;
  o.order = int(env("ORDER", 1));
  o.batch = int(env("BATCH", 8));
  o.step = o.radius = env("STEP", o.step);
  o.epochs = int(env("EPOCHS", o.epochs));
  o.lr = env("LR", o.lr);
  o.thread_count = 2;
  auto pods = ok(PodsTrainerT<double>::create(*task, o, {.q_range = env("QR", 0), .qd_range = env("QDR", 0)}));
  std::printf("start %.4f\n", ok(pods.evaluate()));
  for (int k = 0; k < int(env("ITERS", 20)); ++k) {
    PodsStats s = ok(pods.step());
    std::printf("%3d policy %.4f improved %.4f step %.4f regr %.5f eval %.4f steps %lld hvps %lld\n", k, s.policy_cost,
                s.improved_cost, s.step_rms, s.regression_loss, ok(pods.evaluate()), s.sim_steps, s.hvps);
    std::fflush(stdout);
  }
}
