// whole scenes: a pendulum's period and energy, a box resting on the ground, joint limits,
// PD reaching, determinism, and a cartpole swing-up by trajectory optimization
#include <cstring>

#include "rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

constexpr double kPi = 3.14159265358979323846;

// runs `steps` steps of dt from s (in place), calling f after each
template <class F>
void simulate(const RigidModelT<double>& m, StateT<double>& s, const ControlT<double>& u, double dt, int substeps,
              int steps, F f) {
  SolverT<double> solver({.substeps = substeps});
  const ModelT<double> bodies = world(m);
  StateT<double> next;
  for (int t = 0; t < steps; ++t) {
    Status st = solver.step(bodies, s, next, u, dt);
    INFO(st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
    f(t + 1, s);
  }
}

}  // namespace

TEST_CASE("pendulum: small-angle period is 2 pi sqrt(L/g) within 0.1%", "[rigid][scene]") {
  const double L = 1.0, g = 9.81, dt = 1e-3;
  RigidModelT<double> m = finalize(rigid_pendulum(L, 1.0));
  StateT<double> s = m.make_state();
  s.joint_q[0] = 0.05;
  std::vector<double> up_crossings;  // times theta crosses 0 upwards
  double prev = s.joint_q[0];
  simulate(m, s, m.make_control(), dt, 1, 7000, [&](int t, const StateT<double>& x) {
    double th = x.joint_q[0];
    if (prev < 0 && th >= 0) up_crossings.push_back((t - 1 + -prev / (th - prev)) * dt);
    prev = th;
  });
  REQUIRE(up_crossings.size() >= 3);
  double period = (up_crossings.back() - up_crossings.front()) / double(up_crossings.size() - 1);
  // finite-amplitude correction (1 + theta0^2 / 16) is 1.6e-4, inside the tolerance
  double ref = 2 * kPi * std::sqrt(L / g);
  INFO("period " << period << " s, 2 pi sqrt(L/g) = " << ref << " s");
  CHECK(std::fabs(period - ref) < 1e-3 * ref);
}

TEST_CASE("pendulum: energy is conserved without damping (1 rad swing, 10 s)", "[rigid][scene]") {
  // semi-implicit Euler is symplectic: the energy oscillates by O(h) and does not drift
  RigidModelT<double> m = finalize(rigid_pendulum(1.0, 2.0));
  StateT<double> s = m.make_state();
  s.joint_q[0] = 1.0;
  const double e0 = rigid_energy(m, s), scale = 2.0 * 9.81 * 1.0;  // m g L
  double worst = 0;
  simulate(m, s, m.make_control(), 1e-3, 1, 10000,
           [&](int, const StateT<double>& x) { worst = std::max(worst, std::fabs(rigid_energy(m, x) - e0)); });
  INFO("max |E - E0| / (m g L) = " << worst / scale);
  CHECK(worst / scale < 5e-3);
}

TEST_CASE("spherical pendulum on a ball joint: energy within 1% over 5 s", "[rigid][scene]") {
  RigidBuilder b;
  b.ground = false;
  int bob = b.add_body("bob", {.type = RIGID_JOINT_BALL});
  b.add_shape(bob, {.type = GEOM_CAPSULE, .pos = {0, -0.5, 0}, .size = {0.05, 0.4, 0}, .density = 1000});
  RigidModelT<double> m = finalize(b);
  StateT<double> s = m.make_state();
  s.joint_q = {std::cos(0.4), std::sin(0.4), 0, 0};  // tilted 0.8 rad about x
  s.joint_qd = {0, 2.0, 1.5};                        // spinning and swinging: a conical motion
  const double e0 = rigid_energy(m, s), scale = m.body_mass[0] * 9.81 * 0.5;
  double worst = 0;
  simulate(m, s, m.make_control(), 1e-3, 1, 5000,
           [&](int, const StateT<double>& x) { worst = std::max(worst, std::fabs(rigid_energy(m, x) - e0)); });
  INFO("max |E - E0| / (m g l) = " << worst / scale);
  CHECK(worst / scale < 1e-2);
  double n = 0;
  for (double v : s.joint_q) n += v * v;
  CHECK(std::fabs(n - 1) < 1e-12);  // the quaternion stays normalized
}

TEST_CASE("box on the ground: settles by mg/ke and stays put (drift < 0.01 mm over 1.5 s)", "[rigid][scene]") {
  RigidModelT<double> m = finalize(rigid_free_box({0.1, 0.1, 0.1}, 1000));
  StateT<double> s = m.make_state();
  s.joint_q[1] = 0.1;  // touching
  s.joint_q[0] = 0.3;
  s.joint_q[2] = -0.2;
  StateT<double> settled;
  simulate(m, s, m.make_control(), 1.0 / 60.0, 8, 120, [&](int t, const StateT<double>& x) {
    if (t == 30) settled = x;  // 0.5 s
  });
  double sink = m.body_mass[0] * 9.81 / (4 * m.contact_ke);  // 1.96 mm over 4 corners
  INFO("height " << s.joint_q[1] << ", expected " << 0.1 - sink);
  CHECK(std::fabs(s.joint_q[1] - (0.1 - sink)) < 1e-5);
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(s.joint_q[i] - settled.joint_q[i]) < 1e-5);
  CHECK(std::fabs(s.joint_q[0] - 0.3) < 1e-5);
  CHECK(std::fabs(s.joint_q[2] + 0.2) < 1e-5);
  CHECK(std::fabs(s.joint_q[3] - 1) < 1e-9);  // no rotation
  for (double v : s.joint_qd) CHECK(std::fabs(v) < 1e-4);
}

// the limit is a penalty (limit_ke 1000 N m/rad, C1 ramp of 0.01 rad): it holds within 0.04 rad
// at rest, and within 0.15 rad when the 5 kg m^2 arm swings into it
TEST_CASE("joint limits hold: a PD target past the limit stops within 0.04 rad of it", "[rigid][scene]") {
  RigidModelT<double> m = finalize(rigid_arm3());
  StateT<double> s = m.make_state();
  ControlT<double> u = joint_control<double>({3.0, -3.0, 0.0});  // beyond +2.5 and -2.5
  double hi = -1e9, lo = 1e9;
  simulate(m, s, u, 1.0 / 60.0, 4, 240, [&](int, const StateT<double>& x) {
    hi = std::max(hi, x.joint_q[0]);
    lo = std::min(lo, x.joint_q[1]);
  });
  INFO("max q0 " << hi << ", min q1 " << lo << ", final " << s.joint_q[0] << " " << s.joint_q[1]);
  CHECK(hi < 2.5 + 0.15);
  CHECK(lo > -2.5 - 0.15);
  CHECK(std::fabs(s.joint_q[0] - 2.5) < 0.04);  // at rest against the limit
  CHECK(std::fabs(s.joint_q[1] + 2.5) < 0.04);
}

TEST_CASE("3-link arm: PD actuators reach their targets without gravity", "[rigid][scene]") {
  RigidModelT<double> m = finalize(rigid_arm3());
  m.gravity = {0, 0, 0};
  StateT<double> s = m.make_state();
  for (double& kd : m.actuator_kd) kd = 20;  // well damped
  ControlT<double> u = joint_control<double>({0.5, -0.3, 0.8});
  simulate(m, s, u, 1.0 / 60.0, 4, 300, [](int, const StateT<double>&) {});
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(s.joint_q[i] - u.joint_act[i]) < 1e-3);
}

TEST_CASE("determinism: two quadruped runs give identical bytes (states and gradients)", "[rigid][scene]") {
  RigidModelT<double> m = finalize(rigid_quadruped());
  StateT<double> s0 = m.make_state();
  s0.joint_q[1] = 0.46;
  std::vector<ControlT<double>> u;
  for (int t = 0; t < 30; ++t) {
    ControlT<double> c = m.make_control();
    for (int a = 0; a < 8; ++a) c.joint_act[a] = 0.4 * std::sin(0.2 * t + a);
    u.push_back(c);
  }
  std::vector<double> runs[2];
  for (auto& out : runs) {
    const ModelT<double> r_world = world(m);
    RolloutT<double> r(r_world, {.steps = 30, .dt = 1.0 / 60.0, .substeps = 8});
    REQUIRE(r.forward(s0, u).is_ok());
    REQUIRE(r.backward([](int, const StateT<double>& s, StateT<double>& adj) {
               adj.joint_q[0] += 1;
               adj.joint_q[1] += s.joint_q[1];
             }).is_ok());
    out = r.final_state().joint_q;
    out.insert(out.end(), r.final_state().joint_qd.begin(), r.final_state().joint_qd.end());
    out.insert(out.end(), r.grad_initial().joint_qd.begin(), r.grad_initial().joint_qd.end());
    out.insert(out.end(), r.grad_model().rigid.actuator_kp.begin(), r.grad_model().rigid.actuator_kp.end());
    out.push_back(r.grad_model().rigid.contact_mu);
  }
  REQUIRE(runs[0].size() == runs[1].size());
  CHECK(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(double)) == 0);
}

TEST_CASE("cartpole swing-up: trajectory optimization of the forces lowers the loss (SHAC dt 1/60, 4 substeps)",
          "[rigid][scene][optim]") {
  RigidModelT<double> m = finalize(rigid_cartpole());
  const int T = 120;  // 2 s
  StateT<double> s0 = m.make_state();
  s0.joint_q = {0.0, kPi};  // hanging down
  std::vector<ControlT<double>> u(T, joint_control<double>({0.0}));
  for (int t = 0; t < T; ++t) u[t].joint_act[0] = 0.5 * std::sin(2 * kPi * t / 60.0);  // a first push
  // loss: upright pole (1 - cos theta), cart near 0, small forces; averaged over the horizon
  auto stage = [&](const StateT<double>& s) {
    return (1 - std::cos(s.joint_q[1]) + 0.05 * s.joint_q[0] * s.joint_q[0]) / T;
  };
  const double wu = 1e-3;
  std::vector<double> mom(T, 0.0), var(T, 0.0), losses;
  const double lr = 0.03, b1 = 0.9, b2 = 0.999;
  for (int it = 0; it < 10; ++it) {
    const ModelT<double> r_world = world(m);
    RolloutT<double> r(r_world, {.steps = T, .dt = 1.0 / 60.0, .substeps = 4, .body_param_grads = false});
    double loss = 0;
    REQUIRE(r.forward(s0, u, [&](int, const StateT<double>& s) { loss += stage(s); }).is_ok());
    for (const auto& c : u) loss += wu * c.joint_act[0] * c.joint_act[0];
    losses.push_back(loss);
    REQUIRE(r.backward([&](int, const StateT<double>& s, StateT<double>& adj) {
               adj.joint_q[1] += std::sin(s.joint_q[1]) / T;
               adj.joint_q[0] += 0.1 * s.joint_q[0] / T;
             }).is_ok());
    // Adam on the per-step forces
    for (int t = 0; t < T; ++t) {
      double g = r.grad_controls()[t].joint_act[0] + 2 * wu * u[t].joint_act[0];
      mom[t] = b1 * mom[t] + (1 - b1) * g;
      var[t] = b2 * var[t] + (1 - b2) * g * g;
      double mh = mom[t] / (1 - std::pow(b1, it + 1)), vh = var[t] / (1 - std::pow(b2, it + 1));
      u[t].joint_act[0] -= lr * mh / (std::sqrt(vh) + 1e-8);
    }
  }
  std::string seq;
  for (double l : losses) seq += std::to_string(l) + " ";
  INFO("losses " << seq);
  CHECK(losses.back() < 0.7 * losses.front());
  int falls = 0;
  for (std::size_t i = 1; i < losses.size(); ++i) falls += losses[i] < losses[i - 1];
  CHECK(falls >= int(losses.size()) - 2);
}

TEST_CASE("rollout: recorded contacts of a resting box carry its weight", "[rigid][scene]") {
  RigidModelT<double> m = finalize(rigid_free_box({0.1, 0.1, 0.1}, 1000));
  StateT<double> s = m.make_state();
  s.joint_q[1] = 0.1;
  const ModelT<double> r_world = world(m);
  RolloutT<double> r(r_world, {.steps = 60, .dt = 1.0 / 60.0, .substeps = 8, .record_contacts = true});
  REQUIRE(r.forward(s).is_ok());
  REQUIRE(r.contacts().size() == 60);
  const RigidContactsT<double>& c = r.contacts().back().bodies;
  REQUIRE(c.contact_count() == 4);
  double fy = 0;
  for (const auto& f : c.force) fy += f.y;
  CHECK(std::fabs(fy - m.body_mass[0] * 9.81) < 1e-3 * m.body_mass[0] * 9.81);
  REQUIRE(c.joint_point.size() == 1);
}
