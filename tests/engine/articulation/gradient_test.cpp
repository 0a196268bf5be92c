// gradients: the dual-number step Jacobian against central differences of the step, and
// end-to-end rollout gradients (initial state, per-step controls, parameters) against
// central differences of the whole-horizon loss; all in double precision
#include <cstring>
#include <functional>

#include "engine/grad/fd_check.h"
#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {
// the mixed tree on stiff ground contact
RigidModelT<double> contact_tree() {
  RigidModelT<double> m = finalize(mixed_tree());
  m.contact_ke = 2e3;
  m.contact_kd = 20;
  m.contact_kf = 50;
  return m;
}
}  // namespace

TEST_CASE("step jacobian: dual numbers match central differences, and the reverse adjoint is J^T adj_out",
          "[rigid][grad]") {
  RigidModelT<double> m = contact_tree();
  std::mt19937 rng(17);
  const double dt = 1.0 / 120.0;
  const int substeps = 2;
  for (int trial = 0; trial < 3; ++trial) {
    StateT<double> s = random_state(m, rng, 0.3, 1.0);
    s.joint_q[1] = 0.12;  // the base low enough that some corners touch the ground
    ControlT<double> u = joint_control<double>({0.2, -0.4, 0.3});
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, u, c).is_ok());
    INFO("trial " << trial << ", " << c.contact_count() << " contacts");
    // central differences with eps 1e-5; the reverse pass and the dual-number adjoint to 1e-12
    // of the largest entry of J^T adj_out
    check_step_gradients(m, s, u,
                         {.dt = dt,
                          .substeps = substeps,
                          .fd_eps = 1e-5,
                          .fd_abs = 1e-5,
                          .fd_rel = 1e-4,
                          .rev_of_largest = 1e-12,
                          .adj_rng = &rng});
  }
}

// the depth-damped ground law (dflex's, RigidModel::contact_law) through the same step, in each
// friction regime (the law switches between them, a kink that random states would straddle):
// kf 1e5 slides at every contact's speed (Coulomb: mu ke d), kf 0.5 sticks (viscous: kf |v_t|).
// The reverse pass is held to the dual numbers at 1e-12; central differences at 5e-5 + 5e-4
// relative, looser than the smooth law's: measured on these states, the step's velocities carry
// roundoff that shows as 1e-5 at eps 1e-5 (it grows as eps shrinks: 2e-4 at 1e-6), and one entry
// of 7098 differs by 2.7e-4 relative (damping's kink at v_n = 0 within eps of a contact)
TEST_CASE(
    "step jacobian with the depth-damped ground law: dual numbers and the reverse adjoint match central "
    "differences",
    "[rigid][grad]") {
  for (double kf : {1e5, 0.5}) {
    RigidModelT<double> m = contact_tree();
    m.contact_law = CONTACT_DEPTH_DAMPED;
    m.contact_kd = 2e3;  // at 1 cm depth, damping like 20 N s/m
    m.contact_kf = kf;
    std::mt19937 rng(19);
    for (int trial = 0; trial < 2; ++trial) {
      StateT<double> s = random_state(m, rng, 0.3, 1.0);
      s.joint_q[1] = 0.12;
      ControlT<double> u = joint_control<double>({0.2, -0.4, 0.3});
      RigidContactsT<double> c;
      REQUIRE(rigid_contacts(m, s, u, c).is_ok());
      REQUIRE(c.contact_count() > 0);
      INFO("kf " << kf << ", trial " << trial << ", " << c.contact_count() << " contacts");
      check_step_gradients(m, s, u,
                           {.dt = 1.0 / 120.0,
                            .substeps = 2,
                            .fd_eps = 1e-5,
                            .fd_abs = 5e-5,
                            .fd_rel = 5e-4,
                            .rev_of_largest = 1e-12,
                            .adj_rng = &rng});
    }
  }
}

namespace {

using Tangent = Dual<double, 1>;

// x + e dx as tangent numbers (value x + e dx, tangent dx)
StateT<Tangent> tangent_state(const StateT<double>& x, const StateT<double>& dx, double e = 0) {
  StateT<Tangent> t;
  for (std::size_t k = 0; k < x.joint_q.size(); ++k)
    t.joint_q.push_back(Tangent::var(x.joint_q[k] + e * dx.joint_q[k], 0));
  for (std::size_t k = 0; k < x.joint_qd.size(); ++k)
    t.joint_qd.push_back(Tangent::var(x.joint_qd[k] + e * dx.joint_qd[k], 0));
  for (std::size_t k = 0; k < x.joint_q.size(); ++k) t.joint_q[k].d[0] = dx.joint_q[k];
  for (std::size_t k = 0; k < x.joint_qd.size(); ++k) t.joint_qd[k].d[0] = dx.joint_qd[k];
  return t;
}

StateT<double> moved(const StateT<double>& x, const StateT<double>& dx, double e) {
  StateT<double> r = x;
  for (std::size_t k = 0; k < x.joint_q.size(); ++k) r.joint_q[k] += e * dx.joint_q[k];
  for (std::size_t k = 0; k < x.joint_qd.size(); ++k) r.joint_qd[k] += e * dx.joint_qd[k];
  return r;
}

// (q, qd, act) of a plain adjoint, or the values or tangents of a tangent one
std::vector<double> pack(const StateT<double>& s, const ControlT<double>& u) {
  std::vector<double> x = s.joint_q;
  x.insert(x.end(), s.joint_qd.begin(), s.joint_qd.end());
  x.insert(x.end(), u.joint_act.begin(), u.joint_act.end());
  return x;
}
std::vector<double> pack(const StateT<Tangent>& s, const ControlT<Tangent>& u, bool tangent) {
  std::vector<double> x;
  for (const Tangent& v : s.joint_q) x.push_back(tangent ? v.d[0] : v.v);
  for (const Tangent& v : s.joint_qd) x.push_back(tangent ? v.d[0] : v.v);
  for (const Tangent& v : u.joint_act) x.push_back(tangent ? v.d[0] : v.v);
  return x;
}

}  // namespace

// forward over reverse (SolverT::tangent_step / tangent_step_adjoint on a model of bodies only:
// PODS-2's H v), with ground contact: on tangent numbers the step's values are the plain step's
// and its tangent is J v (rigid_step_jacobian's columns); the adjoint's values are the plain adjoint's and its tangent
// is the derivative of the plain adjoint along (v, the output adjoint's tangent), against central differences
TEST_CASE("tangent step and adjoint: the plain values, J v, and the adjoint's directional derivative",
          "[rigid][grad]") {
  RigidModelT<double> m = contact_tree();
  std::mt19937 rng(23);
  const double dt = 1.0 / 120.0;
  const int substeps = 2, nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  SolverT<double> solver({.substeps = substeps});
  const ModelT<double> bodies = world(m);
  for (int trial = 0; trial < 3; ++trial) {
    StateT<double> s = random_state(m, rng, 0.3, 1.0);
    s.joint_q[1] = 0.12;  // some corners on the ground
    const ControlT<double> u = joint_control<double>({0.2, -0.4, 0.3}), du = joint_control<double>({0.7, -0.3, 0.5});
    const StateT<double> ds = random_state(m, rng, 1.0, 1.0), adj = random_state(m, rng, 1.0, 1.0),
                         dadj = random_state(m, rng, 1.0, 1.0);
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, u, c).is_ok());
    INFO("trial " << trial << ", " << c.contact_count() << " contacts");
    CHECK(c.contact_count() > 0);
    ControlT<Tangent> ut;
    for (int k = 0; k < na; ++k) ut.joint_act.push_back(Tangent(u.joint_act[k]));
    for (int k = 0; k < na; ++k) ut.joint_act[k].d[0] = du.joint_act[k];
    // the step: values, and J (ds, du)
    StateT<double> out;
    StateT<Tangent> out_t;
    REQUIRE(solver.step(bodies, s, out, u, dt).is_ok());
    REQUIRE(solver.tangent_step(bodies, tangent_state(s, ds), out_t, ut, dt).is_ok());
    std::vector<double> J;
    REQUIRE(rigid_step_jacobian(m, s, u, dt, substeps, J).is_ok());
    const int n_in = nq + nv + na + m.param_count();
    const std::vector<double> dx = pack(ds, du);
    std::vector<double> jv(std::size_t(nq + nv), 0.0), values, tangents;
    for (int o = 0; o < nq + nv; ++o)
      for (int i = 0; i < nq + nv + na; ++i) jv[o] += J[std::size_t(o) * n_in + i] * dx[i];
    for (const Tangent& x : out_t.joint_q) values.push_back(x.v), tangents.push_back(x.d[0]);
    for (const Tangent& x : out_t.joint_qd) values.push_back(x.v), tangents.push_back(x.d[0]);
    std::vector<double> plain = out.joint_q;
    plain.insert(plain.end(), out.joint_qd.begin(), out.joint_qd.end());
    CHECK(relative_error(values, plain) <= 1e-13);
    CHECK(relative_error(tangents, jv) <= 1e-10);
    // the adjoint: values, and the derivative along (ds, du, dadj)
    StateT<Tangent> adj_in_t;
    ControlT<Tangent> adj_u_t;
    REQUIRE(
        solver.tangent_step_adjoint(bodies, tangent_state(s, ds), ut, dt, tangent_state(adj, dadj), adj_in_t, adj_u_t)
            .is_ok());
    auto plain_adjoint = [&](double e) {
      StateT<double> adj_in;
      ControlT<double> uu = u, adj_u = m.make_control();
      for (int k = 0; k < na; ++k) uu.joint_act[k] += e * du.joint_act[k];
      ModelGradT<double> adj_m = bodies.make_grad();
      REQUIRE(solver.step_adjoint(bodies, moved(s, ds, e), uu, dt, moved(adj, dadj, e), adj_in, adj_u, adj_m).is_ok());
      return pack(adj_in, adj_u);
    };
    const double e = 1e-6;
    const std::vector<double> a0 = plain_adjoint(0), ap = plain_adjoint(e), am = plain_adjoint(-e);
    std::vector<double> fd(a0.size());
    for (std::size_t k = 0; k < fd.size(); ++k) fd[k] = (ap[k] - am[k]) / (2 * e);
    CHECK(relative_error(pack(adj_in_t, adj_u_t, false), a0) <= 1e-12);
    const double err = relative_error(pack(adj_in_t, adj_u_t, true), fd);
    INFO("the adjoint's tangent against central differences: " << err << " of the largest entry");
    CHECK(err <= 1e-6);
  }
}

namespace {

// a rollout loss: sum over t of w . state_t (quadratic in the tracked coordinates)
struct Task {
  RigidModelT<double> model;
  RolloutOptions<double> opt;
  StateT<double> initial;
  std::vector<ControlT<double>> controls;
  std::function<double(int, const StateT<double>&)> loss;
  std::function<void(int, const StateT<double>&, StateT<double>&)> grad;

  double evaluate() const {
    const ModelT<double> r_world = world(model);
    RolloutT<double> r(r_world, opt);
    double sum = 0;
    Status st = r.forward(initial, controls, [&](int t, const StateT<double>& s) { sum += loss(t, s); });
    REQUIRE(st.is_ok());
    return sum;
  }
};

// checks dL/d(initial qd, controls, masses, kp, kd, joint damping and armature, contact ke, kd, mu) of the
// task against central differences
void check_task(Task task, double eps, double atol, double rtol) {
  const ModelT<double> r_world = world(task.model);
  RolloutT<double> r(r_world, task.opt);
  Status st = r.forward(task.initial, task.controls);
  INFO(st.message());
  REQUIRE(st.is_ok());
  st = r.backward(task.grad);
  INFO(st.message());
  REQUIRE(st.is_ok());
  std::vector<std::pair<double*, double>> params;  // (where, AD)
  for (int i = 0; i < task.model.dof_count(); ++i)
    params.push_back({&task.initial.joint_qd[i], r.grad_initial().joint_qd[i]});
  for (int i = 0; i < task.model.q_count(); ++i)
    params.push_back({&task.initial.joint_q[i], r.grad_initial().joint_q[i]});
  for (std::size_t t = 0; t < task.controls.size(); t += 3)
    for (std::size_t a = 0; a < task.controls[t].joint_act.size(); ++a)
      params.push_back({&task.controls[t].joint_act[a], r.grad_controls()[t].joint_act[a]});
  for (int b = 0; b < task.model.body_count(); ++b)
    if (task.model.body_mass[b] > 0) params.push_back({&task.model.body_mass[b], r.grad_model().rigid.body_mass[b]});
  for (int a = 0; a < task.model.actuator_count(); ++a) {
    params.push_back({&task.model.actuator_kp[a], r.grad_model().rigid.actuator_kp[a]});
    params.push_back({&task.model.actuator_kd[a], r.grad_model().rigid.actuator_kd[a]});
  }
  for (int d = 0; d < task.model.dof_count(); ++d) {
    params.push_back({&task.model.dof_damping[d], r.grad_model().rigid.dof_damping[d]});
    params.push_back({&task.model.dof_armature[d], r.grad_model().rigid.dof_armature[d]});
  }
  if (task.model.ground) {
    params.push_back({&task.model.contact_ke, r.grad_model().rigid.contact_ke});
    params.push_back({&task.model.contact_kd, r.grad_model().rigid.contact_kd});
    params.push_back({&task.model.contact_mu, r.grad_model().rigid.contact_mu});
  }
  std::vector<double> ad, fd;
  for (std::size_t k = 0; k < params.size(); ++k) {
    double* p = params[k].first;
    double x0 = *p, h = eps * std::max(1.0, std::fabs(x0));
    // a mass change scales the body's inertia with it, as the parameter does
    int body = -1;
    for (int b = 0; b < task.model.body_count(); ++b)
      if (p == &task.model.body_mass[b]) body = b;
    auto set = [&](double v) {
      if (body >= 0)
        for (auto& row : task.model.body_inertia[body].m)
          for (double& e : row) e *= v / *p;
      *p = v;
    };
    set(x0 + h);
    double lp = task.evaluate();
    set(x0 - h);
    double lm = task.evaluate();
    set(x0);
    ad.push_back(params[k].second);
    fd.push_back((lp - lm) / (2 * h));
  }
  if (task.model.ground) CHECK(r.grad_model().rigid.contact_ke != 0.0);  // contacts were active
  FdReport rep = compare_gradients(ad, fd, atol, rtol);
  INFO(rep.message);
  CHECK(rep.ok);
}

}  // namespace

TEST_CASE("rollout: cartpole gradients match central differences of the loss", "[rigid][grad][rollout]") {
  Task task;
  task.model = finalize(rigid_cartpole());
  task.opt = {.steps = 30, .dt = 1.0 / 60.0, .substeps = 4, .checkpoint_every = 0};
  task.initial = task.model.make_state();
  task.initial.joint_q = {0.1, 2.5};
  task.initial.joint_qd = {0.2, -0.3};
  for (int t = 0; t < 30; ++t) task.controls.push_back(joint_control<double>({0.3 * std::sin(0.2 * t)}));
  task.loss = [](int, const StateT<double>& s) {
    return s.joint_q[1] * s.joint_q[1] + 0.1 * s.joint_q[0] * s.joint_q[0] + 0.01 * s.joint_qd[1] * s.joint_qd[1];
  };
  task.grad = [](int, const StateT<double>& s, StateT<double>& adj) {
    adj.joint_q[1] += 2 * s.joint_q[1];
    adj.joint_q[0] += 0.2 * s.joint_q[0];
    adj.joint_qd[1] += 0.02 * s.joint_qd[1];
  };
  check_task(task, 1e-6, 1e-6, 1e-5);
}

TEST_CASE("rollout: 3-link arm against its limits, PD gains and masses match central differences",
          "[rigid][grad][rollout]") {
  Task task;
  task.model = finalize(rigid_arm3());
  task.opt = {.steps = 40, .dt = 1.0 / 60.0, .substeps = 4, .checkpoint_every = 7};
  task.initial = task.model.make_state();
  task.initial.joint_q = {2.3, -0.5, 0.2};
  task.initial.joint_qd = {1.0, 0.0, -0.5};
  for (int t = 0; t < 40; ++t) task.controls.push_back(joint_control<double>({2.7, -0.2 + 0.01 * t, 0.5}));
  // the tip's height, through the joint angles: sum of 0.5 cos(cumulative angle)
  task.loss = [](int, const StateT<double>& s) {
    double a = 0, y = 0;
    for (int i = 0; i < 3; ++i) y -= 0.5 * std::cos(a += s.joint_q[i]);
    return y;
  };
  task.grad = [](int, const StateT<double>& s, StateT<double>& adj) {
    double a[3], acc = 0;
    for (int i = 0; i < 3; ++i) a[i] = acc += s.joint_q[i];
    for (int i = 0; i < 3; ++i)
      for (int k = i; k < 3; ++k) adj.joint_q[i] += 0.5 * std::sin(a[k]);
  };
  check_task(task, 1e-6, 1e-6, 1e-5);
}

TEST_CASE("rollout: quadruped with ground contact, gradients match central differences", "[rigid][grad][rollout]") {
  Task task;
  task.model = finalize(rigid_quadruped());
  task.model.contact_ke = 5e3;
  task.model.contact_kd = 50;
  task.model.contact_kf = 50;
  task.opt = {.steps = 12, .dt = 1.0 / 60.0, .substeps = 8, .checkpoint_every = 5};
  task.initial = task.model.make_state();
  task.initial.joint_q[1] = 0.47;  // feet just touching
  task.initial.joint_qd[0] = 0.3;
  for (int t = 0; t < 12; ++t) {
    ControlT<double> u = task.model.make_control();
    for (int a = 0; a < 8; ++a) u.joint_act[a] = 0.3 * std::sin(0.3 * t + a);
    task.controls.push_back(u);
  }
  // torso height and forward position, in the free joint's coordinates
  task.loss = [](int, const StateT<double>& s) { return s.joint_q[1] * s.joint_q[1] - 0.5 * s.joint_q[0]; };
  task.grad = [](int, const StateT<double>& s, StateT<double>& adj) {
    adj.joint_q[1] += 2 * s.joint_q[1];
    adj.joint_q[0] -= 0.5;
  };
  check_task(task, 1e-6, 1e-5, 1e-4);
}

TEST_CASE("rollout: checkpointing gives the same bytes as keeping every state", "[rigid][rollout]") {
  RigidModelT<double> m = finalize(rigid_cartpole());
  StateT<double> s0 = m.make_state();
  s0.joint_q = {0.0, 3.0};
  std::vector<ControlT<double>> u;
  for (int t = 0; t < 40; ++t) u.push_back(joint_control<double>({std::cos(0.1 * t)}));
  auto seed = [](int, const StateT<double>& s, StateT<double>& adj) { adj.joint_q[1] += s.joint_q[1]; };
  std::vector<double> out[2];
  for (int k : {1, 0}) {
    const ModelT<double> r_world = world(m);
    RolloutT<double> r(r_world, {.steps = 40, .dt = 1.0 / 60.0, .substeps = 4, .checkpoint_every = k});
    REQUIRE(r.forward(s0, u).is_ok());
    REQUIRE(r.backward(seed).is_ok());
    std::vector<double>& o = out[k == 1 ? 0 : 1];
    o = r.grad_initial().joint_q;
    for (const auto& g : r.grad_controls()) o.push_back(g.joint_act[0]);
    o.push_back(r.grad_model().rigid.body_mass[1]);
  }
  REQUIRE(out[0].size() == out[1].size());
  CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(double)) == 0);
}

TEST_CASE("rollout: a non-finite value names the step and the joint", "[rigid][rollout]") {
  RigidModelT<double> m = finalize(rigid_cartpole());
  std::vector<ControlT<double>> u(10, joint_control<double>({0.0}));
  u[6].joint_act[0] = std::nan("");
  const ModelT<double> r_world = world(m);
  RolloutT<double> r(r_world, {.steps = 10});
  Status st = r.forward(m.make_state(), u);
  REQUIRE_FALSE(st.is_ok());
  CHECK(r.failed_step() == 7);
  INFO(st.message());
  CHECK(st.message().find("step 7") != std::string::npos);
  CHECK(st.message().find("body cart") != std::string::npos);
  // a seed that injects a NaN into the gradient at step 4
  REQUIRE(r.forward(m.make_state(), std::vector<ControlT<double>>(10, joint_control<double>({0.1}))).is_ok());
  st = r.backward([](int t, const StateT<double>&, StateT<double>& adj) {
    if (t == 4) adj.joint_qd[1] = std::nan("");
  });
  REQUIRE_FALSE(st.is_ok());
  CHECK(r.failed_step() == 4);
  CHECK(st.message().find("body pole") != std::string::npos);
}

TEST_CASE("rollout: float gradients follow the double ones (cartpole, 60 steps)", "[rigid][grad][float]") {
  Result<RigidModelT<float>> mf = rigid_cartpole().finalize<float>();
  RigidModelT<double> md = finalize(rigid_cartpole());
  REQUIRE(mf.is_ok());
  StateT<float> sf = mf->make_state();
  StateT<double> sd = md.make_state();
  sf.joint_q = {0.0f, 2.0f};
  sd.joint_q = {0.0, 2.0};
  const ModelT<float> rf_world = world(mf.value());
  RolloutT<float> rf(rf_world, {.steps = 60, .dt = 1.0f / 60.0f, .substeps = 4});
  const ModelT<double> rd_world = world(md);
  RolloutT<double> rd(rd_world, {.steps = 60, .dt = 1.0 / 60.0, .substeps = 4});
  REQUIRE(rf.forward(sf, {joint_control<float>({0.2f})}).is_ok());
  REQUIRE(rd.forward(sd, {joint_control<double>({0.2})}).is_ok());
  REQUIRE(rf.backward([](int, const StateT<float>& s, StateT<float>& a) { a.joint_q[1] += s.joint_q[1]; }).is_ok());
  REQUIRE(rd.backward([](int, const StateT<double>& s, StateT<double>& a) { a.joint_q[1] += s.joint_q[1]; }).is_ok());
  double scale = std::fabs(rd.grad_initial().joint_q[1]);
  for (int i = 0; i < 2; ++i) {
    CHECK(std::fabs(rf.grad_initial().joint_q[i] - rd.grad_initial().joint_q[i]) < 1e-3 * scale);
    CHECK(std::fabs(rf.grad_initial().joint_qd[i] - rd.grad_initial().joint_qd[i]) < 1e-3 * scale);
  }
  CHECK(std::fabs(rf.grad_model().rigid.body_mass[1] - rd.grad_model().rigid.body_mass[1]) < 1e-3 * scale);
}
