// SolverT::tangent_step / tangent_step_adjoint (engine/solver/particle_tangent.cpp: the particle
// stages on tangent numbers, forward over reverse, for PODS-2's H v): on a world with every
// particle stage (springs, cloth triangles with aerodynamics, bending, tets, actuation, contact
// with the ground, a sphere and a box, particle pairs), the step's values are the plain step's
// and its tangent is the step's directional derivative; the adjoint's values are the plain
// adjoint's and its tangent is the plain adjoint's directional derivative along (the inputs'
// tangents, the output adjoint's), against central differences; a model of bodies only runs the
// articulation's tangent step
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "engine/articulation/rigid_queries.h"
#include "engine/articulation/robots.h"
#include "engine/grad/fd_check.h"
#include "engine/solver/solver.h"
#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

using Tangent = Dual<double, 1>;

ModelT<double> every_stage() {
  ModelBuilderT<double> b;
  ClothMaterial<double> cloth;
  cloth.tri_ke = cloth.tri_ka = 200;
  cloth.tri_kd = 0.5;
  cloth.edge_ke = 0.05;
  cloth.edge_kd = 0.01;
  // a cloth draped over a sphere (its middle particle 1 cm inside)
  const mat33<double> flat = mat33<double>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({0, 0.29, 0}, flat, 2, 2, 0.1, 0.01, {}, cloth, false, 0.02);
  b.add_sphere({0.1, 0.2, -0.1}, 0.1);
  // a soft cube on the ground (bottom corners 5 mm in) against a box
  SoftMaterial<double> soft;
  soft.mu = soft.lambda = 2e3;
  soft.kd = 1;
  soft.density = 100;
  b.add_soft_grid({0.5, 0.005, 0}, 1, 1, 1, 0.1, {}, soft, false, 0.01);
  b.add_box({0.65, 0.05, 0.05}, {0.0505, 0.2, 0.2});
  // two free particles pressing on each other, one of them on an actuated spring
  const int p = b.add_particle({-0.5, 0.5, 0}, {0.1, 0, 0}, 0.1, 0.01);
  const int q = b.add_particle({-0.485, 0.5, 0.002}, {}, 0.1, 0.01);
  const int r = b.add_particle({-0.5, 0.6, 0}, {}, 0.1, 0.01);
  b.add_spring(p, r, 100, 0.5);
  (void)q;
  b.add_ground();
  b.settings().particle_contact = true;
  b.settings().tri_lift = 0.3;
  b.settings().tri_drag = 0.2;
  b.settings().contact_kf = 20;
  return must(b.finalize());
}

std::vector<double> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// a state's or a control's entries, in one vector, and back (x + e dx; tangents dx)
struct Packing {
  int n, springs, tets;
  std::size_t state_size() const { return std::size_t(6 * n); }
  std::size_t control_size() const { return std::size_t(3 * n + springs + tets); }
};

std::vector<double> pack(const StateT<double>& s) {
  std::vector<double> x;
  for (const auto* a : {&s.particle_q, &s.particle_qd})
    for (const vec3<double>& v : *a) x.insert(x.end(), {v.x, v.y, v.z});
  return x;
}
std::vector<double> pack(const ControlT<double>& c) {
  std::vector<double> x;
  for (const vec3<double>& v : c.particle_f) x.insert(x.end(), {v.x, v.y, v.z});
  x.insert(x.end(), c.spring_act.begin(), c.spring_act.end());
  x.insert(x.end(), c.tet_act.begin(), c.tet_act.end());
  return x;
}
std::vector<double> pack(const StateT<Tangent>& s, bool tangent) {
  std::vector<double> x;
  for (const auto* a : {&s.particle_q, &s.particle_qd})
    for (const vec3<Tangent>& v : *a)
      for (int c = 0; c < 3; ++c) x.push_back(tangent ? v[c].d[0] : v[c].v);
  return x;
}
std::vector<double> pack(const ControlT<Tangent>& u, bool tangent) {
  std::vector<double> x;
  for (const vec3<Tangent>& v : u.particle_f)
    for (int c = 0; c < 3; ++c) x.push_back(tangent ? v[c].d[0] : v[c].v);
  for (const auto* a : {&u.spring_act, &u.tet_act})
    for (const Tangent& v : *a) x.push_back(tangent ? v.d[0] : v.v);
  return x;
}

StateT<double> state(const Packing& p, const std::vector<double>& x, const std::vector<double>& dx, double e) {
  StateT<double> s;
  for (int i = 0; i < 2 * p.n; ++i) {
    vec3<double> v;
    for (int c = 0; c < 3; ++c) v[c] = x[std::size_t(3 * i + c)] + e * dx[std::size_t(3 * i + c)];
    (i < p.n ? s.particle_q : s.particle_qd).push_back(v);
  }
  return s;
}
ControlT<double> control(const Packing& p, const std::vector<double>& x, const std::vector<double>& dx, double e) {
  ControlT<double> u;
  std::size_t k = 0;
  auto next = [&] {
    const double y = x[k] + e * dx[k];
    ++k;
    return y;
  };
  for (int i = 0; i < p.n; ++i) {
    const double fx = next(), fy = next(), fz = next();
    u.particle_f.push_back({fx, fy, fz});
  }
  for (int i = 0; i < p.springs; ++i) u.spring_act.push_back(next());
  for (int i = 0; i < p.tets; ++i) u.tet_act.push_back(next());
  return u;
}
StateT<Tangent> tangent_state(const Packing& p, const std::vector<double>& x, const std::vector<double>& dx) {
  const StateT<double> v = state(p, x, dx, 0), d = state(p, dx, dx, 0);
  StateT<Tangent> t;
  for (std::size_t i = 0; i < v.particle_q.size(); ++i) {
    vec3<Tangent> q, qd;
    for (int c = 0; c < 3; ++c) {
      q[c] = Tangent(v.particle_q[i][c]), q[c].d[0] = d.particle_q[i][c];
      qd[c] = Tangent(v.particle_qd[i][c]), qd[c].d[0] = d.particle_qd[i][c];
    }
    t.particle_q.push_back(q), t.particle_qd.push_back(qd);
  }
  return t;
}
ControlT<Tangent> tangent_control(const Packing& p, const std::vector<double>& x, const std::vector<double>& dx) {
  ControlT<Tangent> t;
  std::size_t k = 0;
  auto next = [&] {
    Tangent y(x[k]);
    y.d[0] = dx[k++];
    return y;
  };
  for (int i = 0; i < p.n; ++i) {
    const Tangent fx = next(), fy = next(), fz = next();
    t.particle_f.push_back({fx, fy, fz});
  }
  for (int i = 0; i < p.springs; ++i) t.spring_act.push_back(next());
  for (int i = 0; i < p.tets; ++i) t.tet_act.push_back(next());
  return t;
}

// d/de f(e) at 0: central differences at steps e and e/2, Richardson-extrapolated (the e^2
// terms cancel: contact's stiffness makes them large)
std::vector<double> derivative(const std::function<std::vector<double>(double)>& f, double e) {
  const std::vector<double> p1 = f(e), m1 = f(-e), p2 = f(e / 2), m2 = f(-e / 2);
  std::vector<double> d(p1.size());
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = (4 * (p2[k] - m2[k]) / e - (p1[k] - m1[k]) / (2 * e)) / 3;
  return d;
}

}  // namespace

TEST_CASE("particle tangent step and adjoint: the plain values, the step's and the adjoint's directional derivatives",
          "[solver][grad]") {
  const ModelT<double> m = every_stage();
  REQUIRE(m.tri_count() > 0);
  REQUIRE(m.edge_count() > 0);
  REQUIRE(m.tet_count() > 0);
  const Packing p{m.particle_count(), m.spring_count(), m.tet_count()};
  const double dt = 1.0 / 120.0;
  SolverT<double> solver({.substeps = 3, .thread_count = 1});
  std::mt19937 rng(5);
  const StateT<double> s0 = m.make_state();
  // the start: the model's state with small velocities; a direction for everything
  std::vector<double> x = pack(s0), u0(p.control_size(), 0.0);
  for (std::size_t k = p.state_size() / 2; k < x.size(); ++k) x[k] += 0.05 * random_vector(1, rng)[0];
  for (double& a : u0) a = 0.1 * random_vector(1, rng)[0];
  const std::vector<double> dx = random_vector(p.state_size(), rng), du = random_vector(p.control_size(), rng),
                            adj = random_vector(p.state_size(), rng), dadj = random_vector(p.state_size(), rng);
  ContactsT<double> contacts;
  compute_contacts(m, s0, contacts);
  int shapes = 0, pairs = 0;
  for (int o : contacts.other) (o >= 0 ? shapes : pairs)++;
  INFO(shapes << " particle-shape contacts, " << pairs << " particle pairs");
  CHECK(shapes >= 6);
  CHECK(pairs >= 1);

  // the step: values, and its derivative along (dx, du)
  auto plain_step = [&](double e) {
    StateT<double> out;
    REQUIRE(solver.step(m, state(p, x, dx, e), out, control(p, u0, du, e), dt));
    return pack(out);
  };
  StateT<Tangent> out_t;
  REQUIRE(solver.tangent_step(m, tangent_state(p, x, dx), out_t, tangent_control(p, u0, du), dt));
  const double e = 1e-6;
  CHECK(relative_error(pack(out_t, false), plain_step(0)) <= 1e-13);  // measured: 0 (the same operations)
  double err = relative_error(pack(out_t, true), derivative(plain_step, e));
  INFO("the step's tangent against central differences: " << err << " of the largest entry");
  CHECK(err <= 1e-8);  // measured: 2e-10

  // the adjoint: values, and its derivative along (dx, du, dadj)
  auto plain_adjoint = [&](double e) {
    StateT<double> adj_in;
    ControlT<double> adj_u = m.make_control();
    adj_u.zero();
    ModelGradT<double> adj_m = m.make_grad();
    REQUIRE(solver.step_adjoint(m, state(p, x, dx, e), control(p, u0, du, e), dt, state(p, adj, dadj, e), adj_in, adj_u,
                                adj_m));
    std::vector<double> r = pack(adj_in), ru = pack(adj_u);
    r.insert(r.end(), ru.begin(), ru.end());
    return r;
  };
  StateT<Tangent> adj_in_t;
  ControlT<Tangent> adj_u_t =
      tangent_control(p, std::vector<double>(p.control_size(), 0.0), std::vector<double>(p.control_size(), 0.0));
  REQUIRE(solver.tangent_step_adjoint(m, tangent_state(p, x, dx), tangent_control(p, u0, du), dt,
                                      tangent_state(p, adj, dadj), adj_in_t, adj_u_t));
  auto both = [&](bool tangent) {
    std::vector<double> r = pack(adj_in_t, tangent), ru = pack(adj_u_t, tangent);
    r.insert(r.end(), ru.begin(), ru.end());
    return r;
  };
  CHECK(relative_error(both(false), plain_adjoint(0)) <= 1e-12);  // measured: 0
  err = relative_error(both(true), derivative(plain_adjoint, e));
  INFO("the adjoint's tangent against central differences: " << err << " of the largest entry");
  CHECK(err <= 1e-8);  // measured: 2e-10
  // a wrong tangent would not pass
  std::vector<double> off = both(true);
  double big = 0;
  for (double v : off) big = std::max(big, std::abs(v));
  off[off.size() / 2] += 1e-7 * big;
  CHECK(relative_error(off, derivative(plain_adjoint, e)) > 1e-8);
}

// a model of bodies only: SolverT's tangent step and its adjoint run the articulation stage's, on
// a cartpole: the values are the plain step's and adjoint's, the step's tangent is J v
// (rigid_step_jacobian's columns, d(q, qd, act) of the inputs) and the adjoint's tangent is the
// derivative of the plain adjoint along (v, the output adjoint's tangent), by central differences
TEST_CASE("particle tangent: a model of bodies only runs the articulation's tangent step", "[solver][tangent]") {
  Result<RigidModelT<double>> r = rigid_cartpole().finalize<double>();
  REQUIRE(r.is_ok());
  ModelT<double> m;
  m.rigid = r.value();
  const int substeps = 4;
  const double dt = 1.0 / 60;
  SolverT<double> solver({.substeps = substeps});
  StateT<double> s;
  s.joint_q = {0.1, 0.3};
  s.joint_qd = {-0.2, 0.5};
  const std::vector<double> ds = {0, 1, 0.5, 0};  // the inputs' direction: (q, qd)
  ControlT<double> u;
  u.joint_act.assign(std::size_t(m.rigid.actuator_count()), 0.4);
  REQUIRE(u.joint_act.size() == 1);
  const std::vector<double> du = {-0.3};  // and the actuator's
  StateT<Tangent> in;
  for (int k = 0; k < 2; ++k) in.joint_q.push_back(Tangent(s.joint_q[k])), in.joint_q[k].d[0] = ds[k];
  for (int k = 0; k < 2; ++k) in.joint_qd.push_back(Tangent(s.joint_qd[k])), in.joint_qd[k].d[0] = ds[2 + k];
  ControlT<Tangent> ut;
  for (double a : u.joint_act) ut.joint_act.push_back(Tangent(a));
  ut.joint_act[0].d[0] = du[0];
  StateT<Tangent> out;
  Status st = solver.tangent_step(m, in, out, ut, dt);
  INFO(st.message());
  REQUIRE(st.is_ok());
  StateT<double> plain;
  REQUIRE(solver.step(m, s, plain, u, dt).is_ok());
  std::vector<double> J;
  REQUIRE(rigid_step_jacobian(m.rigid, s, u, dt, substeps, J).is_ok());
  const int n_in = 2 + 2 + 1 + m.rigid.param_count();
  std::vector<double> values, tangents, want_values = plain.joint_q, jv(4, 0.0);
  want_values.insert(want_values.end(), plain.joint_qd.begin(), plain.joint_qd.end());
  for (const Tangent& x : out.joint_q) values.push_back(x.v), tangents.push_back(x.d[0]);
  for (const Tangent& x : out.joint_qd) values.push_back(x.v), tangents.push_back(x.d[0]);
  for (int o = 0; o < 4; ++o) {
    for (int i = 0; i < 4; ++i) jv[o] += J[std::size_t(o) * n_in + i] * ds[i];
    jv[o] += J[std::size_t(o) * n_in + 4] * du[0];
  }
  CHECK(relative_error(values, want_values) <= 1e-13);
  CHECK(relative_error(tangents, jv) <= 1e-10);
  // the adjoint: values, and the derivative along (ds, du, the output adjoint's tangent)
  StateT<Tangent> adj_out = out, adj_in;
  for (Tangent& x : adj_out.joint_q) x.d[0] = 0.25;
  ControlT<Tangent> g;
  st = solver.tangent_step_adjoint(m, in, ut, dt, adj_out, adj_in, g);
  INFO(st.message());
  REQUIRE(st.is_ok());
  auto plain_adjoint = [&](double e) {
    StateT<double> se = s, adj_e, adj_in_e;
    ControlT<double> ue = u, g_e = m.make_control();
    for (int k = 0; k < 2; ++k) se.joint_q[k] += e * ds[k], se.joint_qd[k] += e * ds[2 + k];
    ue.joint_act[0] += e * du[0];
    for (const Tangent& x : adj_out.joint_q) adj_e.joint_q.push_back(x.v + e * x.d[0]);
    for (const Tangent& x : adj_out.joint_qd) adj_e.joint_qd.push_back(x.v + e * x.d[0]);
    ModelGradT<double> gm = m.make_grad();
    REQUIRE(solver.step_adjoint(m, se, ue, dt, adj_e, adj_in_e, g_e, gm).is_ok());
    std::vector<double> v = adj_in_e.joint_q;
    v.insert(v.end(), adj_in_e.joint_qd.begin(), adj_in_e.joint_qd.end());
    v.insert(v.end(), g_e.joint_act.begin(), g_e.joint_act.end());
    return v;
  };
  std::vector<double> adj_values, adj_tangents;
  for (const Tangent& x : adj_in.joint_q) adj_values.push_back(x.v), adj_tangents.push_back(x.d[0]);
  for (const Tangent& x : adj_in.joint_qd) adj_values.push_back(x.v), adj_tangents.push_back(x.d[0]);
  for (const Tangent& x : g.joint_act) adj_values.push_back(x.v), adj_tangents.push_back(x.d[0]);
  const double e = 1e-6;
  const std::vector<double> a0 = plain_adjoint(0), ap = plain_adjoint(e), am = plain_adjoint(-e);
  std::vector<double> fd(a0.size());
  for (std::size_t k = 0; k < fd.size(); ++k) fd[k] = (ap[k] - am[k]) / (2 * e);
  CHECK(relative_error(adj_values, a0) <= 1e-12);
  CHECK(relative_error(adj_tangents, fd) <= 1e-6);
}
