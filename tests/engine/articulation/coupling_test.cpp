// two-way coupling of rigid bodies and particles (engine/articulation/body_particle.h, coupled_rollout.h):
// the pair forces cancel (momentum), the coupled step's adjoint against central differences in
// double (a sphere pressing a few particles; a box sliding on a cloth patch), a short coupled
// rollout's gradients (controls, initial robot and particle states), determinism
#include <cmath>
#include <random>

#include "engine/articulation/body_particle.h"
#include "engine/grad/rollout.h"
#include "engine/model/builder.h"
#include "engine/solver/solver.h"
#include "mesh_test_util.h"
#include "rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

using D = double;

ModelT<D> finalize_particles(const ModelBuilderT<D>& b) {
  Result<ModelT<D>> r = b.finalize();
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return r.value();
}

// a free sphere (r 0.1, density 500) over a square of 4 particles joined by springs
struct SpherePress {
  RigidModelT<D> rm;
  ModelT<D> pm;
  StateT<D> state;
};

SpherePress sphere_press(bool gravity, D mu) {
  RigidBuilder rb;
  rb.ground = false;
  int s = rb.add_body("ball", {.type = RIGID_JOINT_FREE});
  rb.add_shape(s, {.type = GEOM_SPHERE, .size = {0.1, 0, 0}, .density = 500});
  SpherePress c;
  c.rm = finalize(rb);
  ModelBuilderT<D> pb;
  const D y = 0.0;
  int a = pb.add_particle({-0.05, y, -0.04}, {0.1, 0, 0}, 0.05, 0.03);
  int b = pb.add_particle({0.06, y, -0.05}, {0, 0.05, 0}, 0.05, 0.03);
  int cc = pb.add_particle({0.05, y + 0.01, 0.06}, {0, 0, -0.1}, 0.05, 0.03);
  int d = pb.add_particle({-0.06, y, 0.05}, {0.02, 0, 0}, 0.05, 0.03);
  pb.add_spring(a, b, 200, 0.5);
  pb.add_spring(b, cc, 200, 0.5);
  pb.add_spring(cc, d, 200, 0.5);
  pb.add_spring(d, a, 200, 0.5);
  pb.add_spring(a, cc, 200, 0.5);
  c.pm = finalize_particles(pb);
  c.pm.contact_ke = 2e3;
  c.pm.contact_kd = 2;
  c.pm.contact_kf = 5;
  c.pm.contact_mu = mu;
  if (!gravity) {
    c.pm.gravity = vec3<D>();
    c.rm.gravity = vec3<D>();
  }
  c.pm.rigid = c.rm;
  c.state = c.pm.make_state();
  // the sphere's centre 0.09 above the particle plane: every particle (r 0.03) overlaps it
  const D q[7] = {0.01, 0.09, 0.005, 1, 0, 0, 0};
  for (int k = 0; k < 7; ++k) c.state.joint_q[k] = q[k];
  const D qd[6] = {0.2, -0.4, 0.1, 0.3, -0.2, 0.5};  // joint-frame linear, then body-frame angular velocity
  for (int k = 0; k < 6; ++k) c.state.joint_qd[k] = qd[k];
  return c;
}

// world linear momentum of the particles and of a free body whose com is its origin
vec3<D> momentum(const RigidModelT<D>& rm, const ModelT<D>& pm, const StateT<D>& s) {
  vec3<D> P;
  for (int i = 0; i < pm.particle_count(); ++i) P += s.particle_qd[i] * pm.particle_mass[i];
  vec3<D> v(s.joint_qd[0], s.joint_qd[1], s.joint_qd[2]);
  return P + rm.joint_rot[0] * v * rm.body_mass[0];
}

// a fixed random linear functional of a coupled state
struct Probe {
  std::vector<D> w;
  D operator()(const StateT<D>& s) const {
    D l = 0;
    std::size_t k = 0;
    for (auto& x : s.particle_q) l += w[k] * x.x + w[k + 1] * x.y + w[k + 2] * x.z, k += 3;
    for (auto& x : s.particle_qd) l += w[k] * x.x + w[k + 1] * x.y + w[k + 2] * x.z, k += 3;
    for (D x : s.joint_q) l += w[k++] * x;
    for (D x : s.joint_qd) l += w[k++] * x;
    return l;
  }
  StateT<D> adjoint(const StateT<D>& like) const {
    StateT<D> a = zero_like(like);
    std::size_t k = 0;
    for (auto& x : a.particle_q) x = {w[k], w[k + 1], w[k + 2]}, k += 3;
    for (auto& x : a.particle_qd) x = {w[k], w[k + 1], w[k + 2]}, k += 3;
    for (D& x : a.joint_q) x = w[k++];
    for (D& x : a.joint_qd) x = w[k++];
    return a;
  }
};

Probe make_probe(const StateT<D>& like, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<D> u(-1, 1);
  Probe p;
  p.w.resize(std::size_t(6 * like.particle_count()) + like.joint_q.size() + like.joint_qd.size());
  for (D& x : p.w) x = u(rng);
  return p;
}

// every entry of a coupled state, in the probe's order (for perturbing)
std::vector<D*> entries(StateT<D>& s) {
  std::vector<D*> e;
  for (auto& x : s.particle_q) e.insert(e.end(), {&x.x, &x.y, &x.z});
  for (auto& x : s.particle_qd) e.insert(e.end(), {&x.x, &x.y, &x.z});
  for (D& x : s.joint_q) e.push_back(&x);
  for (D& x : s.joint_qd) e.push_back(&x);
  return e;
}

// the step's adjoint w.r.t. every input entry and the particle contact ke against central
// differences of a random functional of the output; returns the number of touching pairs
int check_step(const ModelT<D>& pm, const RigidModelT<D>& rm, const StateT<D>& in, const ControlT<D>& ctl, D dt,
               int substeps, unsigned seed) {
  SolverT<D> solver({.substeps = substeps});
  StateT<D> out;
  ContactsT<D> contacts;
  const ModelT<D> w = world(rm, pm);
  REQUIRE(solver.step(w, in, out, ctl, dt, &contacts).is_ok());
  Probe probe = make_probe(out, seed);
  StateT<D> adj_in;
  ControlT<D> adj_ctl;
  adj_ctl.joint_act.assign(std::size_t(rm.actuator_count()), D(0));
  ModelGradT<D> adj_model;
  Status st = solver.step_adjoint(w, in, ctl, dt, probe.adjoint(out), adj_in, adj_ctl, adj_model);
  INFO(st.message());
  REQUIRE(st.is_ok());
  auto loss = [&](const StateT<D>& s, const ModelT<D>& m) {
    SolverT<D> sv({.substeps = substeps});
    StateT<D> o;
    REQUIRE(sv.step(world(rm, m), s, o, ctl, dt).is_ok());
    return probe(o);
  };
  const D eps = 1e-6;
  StateT<D> x = in, g = adj_in;
  std::vector<D*> xe = entries(x), ge = entries(g);
  D max_fd = 0;
  std::vector<std::pair<D, D>> rows;
  for (std::size_t k = 0; k < xe.size(); ++k) {
    const D x0 = *xe[k];
    *xe[k] = x0 + eps;
    D lp = loss(x, pm);
    *xe[k] = x0 - eps;
    D lm = loss(x, pm);
    *xe[k] = x0;
    rows.push_back({*ge[k], (lp - lm) / (2 * eps)});
    max_fd = std::max(max_fd, std::fabs(rows.back().second));
  }
  {
    ModelT<D> m = pm;
    const D h = 1e-3 * pm.contact_ke;
    m.contact_ke = pm.contact_ke + h;
    D lp = loss(in, m);
    m.contact_ke = pm.contact_ke - h;
    D lm = loss(in, m);
    rows.push_back({adj_model.contact_ke, (lp - lm) / (2 * h)});
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    INFO("entry " << k << ": adjoint " << rows[k].first << ", central difference " << rows[k].second);
    CHECK(std::fabs(rows[k].first - rows[k].second) <= 1e-6 * max_fd + 1e-4 * std::fabs(rows[k].second));
  }
  return contacts.body_particle.contact_count();
}

}  // namespace

TEST_CASE("coupling: pair forces are equal and opposite, momentum is conserved", "[rigid][coupling]") {
  SpherePress c = sphere_press(/*gravity=*/false, /*mu=*/0.5);
  std::vector<vec3<D>> pos;
  std::vector<mat33<D>> rot;
  rigid_forward_kinematics(c.rm, c.state, pos, rot);
  rigid::Work<D> w;
  w.resize(c.rm.body_count(), c.rm.q_count(), c.rm.dof_count());
  rigid::kinematics(c.rm, rigid::lift_params<D>(c.rm), c.state.joint_q.data(), c.state.joint_qd.data(), w);
  std::vector<vec3<D>> fp;
  std::vector<rigid::svec<D>> fb;
  rigid::CouplingContactsT<D> rec;
  rigid::coupling_forces(c.rm, rigid::coupling_params(c.pm), w.R, w.p, w.v, c.pm, c.state, fp, fb, &rec);
  REQUIRE(rec.contact_count() == 4);
  vec3<D> sum_f, sum_m;
  for (int k = 0; k < rec.contact_count(); ++k) {
    sum_f += rec.force[k];
    sum_m += cross(rec.point[k], rec.force[k]);
    CHECK(dot(rec.force[k], rec.normal[k]) > 0);  // pushes the particle away from the sphere
  }
  CHECK(length(sum_f + fb[0].v) < 1e-12);
  CHECK(length(sum_m + fb[0].w) < 1e-12);
  CHECK(length(sum_f) > 1.0);  // the test has teeth: the forces are not all zero

  // frictionless, no gravity: sphere normals pass through the centre, so the body never turns
  // and the world momentum of body + particles is exactly conserved by each substep
  SpherePress f = sphere_press(false, 0.0);
  for (int k = 3; k < 6; ++k) f.state.joint_qd[k] = 0;
  SolverT<D> solver({.substeps = 4});
  ControlT<D> ctl = world(f.rm, f.pm).make_control();
  vec3<D> P0 = momentum(f.rm, f.pm, f.state);
  StateT<D> s = f.state, next;
  for (int t = 0; t < 20; ++t) {
    REQUIRE(solver.step(world(f.rm, f.pm), s, next, ctl, 1.0 / 240, nullptr).is_ok());
    s = next;
  }
  vec3<D> P1 = momentum(f.rm, f.pm, s);
  INFO("momentum before " << P0.x << " " << P0.y << " " << P0.z << ", after " << P1.x << " " << P1.y << " " << P1.z);
  CHECK(length(P1 - P0) < 1e-12 * (1 + length(P0)));
  // and the velocities did change (the contact acted)
  CHECK(std::fabs(s.joint_qd[1] - f.state.joint_qd[1]) > 0.05);
}

TEST_CASE("coupling: step adjoint, a sphere pressing particles, against central differences", "[rigid][coupling]") {
  SpherePress c = sphere_press(true, 0.5);
  ControlT<D> ctl = world(c.rm, c.pm).make_control();
  int touching = check_step(c.pm, c.rm, c.state, ctl, 1.0 / 120, 2, 7);
  CHECK(touching == 4);
}

// implicit particles beside the bodies (engine/solver/implicit.h): the particles' backward Euler
// solve with the pairs inside it, its adjoint through the transposed system into the bodies'
TEST_CASE("coupling: implicit particles, a sphere pressing particles, step adjoint against central differences",
          "[rigid][coupling][implicit]") {
  SpherePress c = sphere_press(true, 0.5);
  c.pm.integrator = INTEGRATOR_IMPLICIT;
  ControlT<D> ctl = world(c.rm, c.pm).make_control();
  CHECK(check_step(c.pm, c.rm, c.state, ctl, 1.0 / 60, 1, 7) == 4);
  check_step(c.pm, c.rm, c.state, ctl, 1.0 / 60, 2, 8);  // two substeps (the sphere leaves in the second)
}

// a box (the primitive, or the same box as a triangle mesh) sliding on a cloth patch: the
// coupled step's adjoint against central differences; returns the touching pairs
static int box_on_cloth(bool mesh, bool implicit = false) {
  RigidBuilder rb;
  rb.ground = false;
  int box = rb.add_body("box", {.type = RIGID_JOINT_FREE});
  if (mesh) {
    TestMesh bm = box_mesh({0.06, 0.03, 0.05});
    rb.add_shape(box, {.type = GEOM_MESH, .density = 400, .mesh_vertices = bm.v, .mesh_tris = bm.t});
  } else {
    rb.add_shape(box, {.type = GEOM_BOX, .size = {0.06, 0.03, 0.05}, .density = 400});
  }
  RigidModelT<D> rm = finalize(rb);
  ModelBuilderT<D> pb;
  // a 4 x 4 cell patch (cell 0.05) lying in the xz plane at y = 0.015, 5 mm into the ground
  // (every particle strictly in ground contact: no contact switching within the differences)
  mat33<D> lie;
  lie.m[0][0] = 1;
  lie.m[2][1] = 1;
  lie.m[1][2] = -1;
  pb.add_cloth_grid({-0.1, 0.015, -0.1}, lie, 4, 4, 0.05, 0.01, {0, 0, 0}, ClothMaterial<D>{}, false, 0.02);
  pb.add_ground(0);
  ModelT<D> pm = finalize_particles(pb);
  pm.contact_ke = 1e3;
  pm.contact_kd = 1;
  pm.contact_kf = 2;
  pm.contact_mu = 0.6;
  if (implicit) pm.integrator = INTEGRATOR_IMPLICIT;
  StateT<D> in = world(rm, pm).make_state();
  // the box slides along +x, tilted a little, its bottom 4 mm into the particles' radius
  const D q[7] = {0.012, 0.015 + 0.02 + 0.03 - 0.004, 0.008, 0.999, 0.02, 0.01, 0.03};
  D n = 0;
  for (int k = 3; k < 7; ++k) n += q[k] * q[k];
  for (int k = 0; k < 7; ++k) in.joint_q[k] = k >= 3 ? q[k] / std::sqrt(n) : q[k];
  const D qd[6] = {0.5, -0.05, 0.1, 0.2, 0.3, -0.4};
  for (int k = 0; k < 6; ++k) in.joint_qd[k] = qd[k];
  ControlT<D> ctl = world(rm, pm).make_control();
  return implicit ? check_step(pm, rm, in, ctl, 1.0 / 60, 1, 11) : check_step(pm, rm, in, ctl, 1.0 / 240, 2, 11);
}

TEST_CASE("coupling: step adjoint, a box sliding on a cloth patch, against central differences", "[rigid][coupling]") {
  CHECK(box_on_cloth(false) >= 4);
}

TEST_CASE("coupling: implicit particles, a box sliding on a cloth patch, step adjoint against central differences",
          "[rigid][coupling][implicit]") {
  CHECK(box_on_cloth(false, true) >= 4);
}

TEST_CASE("coupling: step adjoint, a mesh box sliding on a cloth patch, against central differences",
          "[rigid][coupling][mesh]") {
  // the same contacts as the box primitive: the particles meet the mesh's hull (the box)
  const int touching = box_on_cloth(true);
  CHECK(touching >= 4);
  CHECK(touching == box_on_cloth(false));
}

TEST_CASE("coupling: rollout gradients (controls, initial robot and particle states) and determinism",
          "[rigid][coupling]") {
  // a PD-driven pendulum (capsule) swinging through a small cluster of particles on springs
  RigidBuilder rb;
  rb.ground = false;
  int link = rb.add_body("link", {.type = RIGID_JOINT_REVOLUTE, .pos = {0, 0.3, 0}, .axis = {0, 0, 1}});
  rb.add_shape(link, {.type = GEOM_CAPSULE, .pos = {0, -0.15, 0}, .size = {0.03, 0.12, 0}, .density = 800});
  rb.add_actuator(link, {.type = RIGID_ACTUATOR_PD, .kp = 5, .kd = 0.2});
  RigidModelT<D> rm = finalize(rb);
  ModelBuilderT<D> pb;
  int a = pb.add_particle({0.06, 0.06, 0}, {0, 0, 0}, 0.03, 0.025);
  int b = pb.add_particle({0.11, 0.06, 0.01}, {0, 0, 0}, 0.03, 0.025);
  int c = pb.add_particle({0.085, 0.1, -0.01}, {0, 0, 0}, 0.03, 0.025);
  pb.add_spring(a, b, 100, 0.2);
  pb.add_spring(b, c, 100, 0.2);
  pb.add_spring(c, a, 100, 0.2);
  ModelT<D> pm = finalize_particles(pb);
  pm.gravity = vec3<D>();
  pm.contact_ke = 1e3;
  pm.contact_kd = 1;
  pm.contact_kf = 2;
  pm.contact_mu = 0.4;
  StateT<D> init = world(rm, pm).make_state();
  init.joint_q[0] = 0.25;
  init.joint_qd[0] = 2.0;
  const int T = 8;
  std::vector<ControlT<D>> controls(T, world(rm, pm).make_control());
  for (int t = 0; t < T; ++t) controls[t].joint_act[0] = 0.6 + 0.05 * t;
  RolloutOptions<D> ro{.steps = T, .dt = 1.0 / 60, .substeps = 4, .checkpoint_every = 3};
  // loss: the particles' mean x at the end, squared, plus the link angle
  auto loss_of = [&](const StateT<D>& s) {
    D mx = 0;
    for (auto& x : s.particle_q) mx += x.x / 3;
    return mx * mx + 0.1 * s.joint_q[0];
  };
  auto run = [&](const StateT<D>& s0, const std::vector<ControlT<D>>& ctl) {
    const ModelT<D> w = world(rm, pm);
    RolloutT<D> r(w, ro);
    REQUIRE(r.forward(s0, ctl).is_ok());
    return loss_of(r.final_state());
  };
  const ModelT<D> roll_world = world(rm, pm);
  RolloutT<D> roll(roll_world, ro);
  int touched = 0;
  REQUIRE(roll.forward(init, controls).is_ok());
  {
    // how many frames have body-particle contact (the test must exercise the coupling)
    SolverT<D> sv({.substeps = 4});
    StateT<D> s = init, nx;
    for (int t = 0; t < T; ++t) {
      ContactsT<D> rec;
      REQUIRE(sv.step(world(rm, pm), s, nx, controls[t], 1.0 / 60, &rec).is_ok());
      touched += rec.body_particle.contact_count() > 0;
      s = nx;
    }
  }
  CHECK(touched >= 3);
  const StateT<D> final_state = roll.final_state();
  Status st = roll.backward([&](int t, const StateT<D>& s, StateT<D>& adj) {
    if (t != T) return;
    D mx = 0;
    for (auto& x : s.particle_q) mx += x.x / 3;
    for (auto& g : adj.particle_q) g.x += 2 * mx / 3;
    adj.joint_q[0] += 0.1;
  });
  INFO(st.message());
  REQUIRE(st.is_ok());
  const D eps = 1e-6;
  std::vector<std::pair<D, D>> rows;
  for (int t : {0, 3, 6}) {
    auto ctl = controls;
    ctl[t].joint_act[0] += eps;
    D lp = run(init, ctl);
    ctl[t].joint_act[0] -= 2 * eps;
    D lm = run(init, ctl);
    rows.push_back({roll.grad_controls()[t].joint_act[0], (lp - lm) / (2 * eps)});
  }
  {
    auto s = init;
    s.joint_q[0] += eps;
    D lp = run(s, controls);
    s.joint_q[0] -= 2 * eps;
    D lm = run(s, controls);
    rows.push_back({roll.grad_initial().joint_q[0], (lp - lm) / (2 * eps)});
    s = init;
    s.joint_qd[0] += eps;
    lp = run(s, controls);
    s.joint_qd[0] -= 2 * eps;
    lm = run(s, controls);
    rows.push_back({roll.grad_initial().joint_qd[0], (lp - lm) / (2 * eps)});
  }
  for (int i = 0; i < 3; ++i)
    for (int comp = 0; comp < 2; ++comp) {
      auto s = init;
      D* x = comp == 0 ? &s.particle_q[i].x : &s.particle_qd[i].y;
      *x += eps;
      D lp = run(s, controls);
      *x -= 2 * eps;
      D lm = run(s, controls);
      const vec3<D>& g = comp == 0 ? roll.grad_initial().particle_q[i] : roll.grad_initial().particle_qd[i];
      rows.push_back({comp == 0 ? g.x : g.y, (lp - lm) / (2 * eps)});
    }
  D max_fd = 0;
  for (auto& r : rows) max_fd = std::max(max_fd, std::fabs(r.second));
  CHECK(max_fd > 1e-3);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    INFO("row " << k << ": adjoint " << rows[k].first << ", central difference " << rows[k].second);
    CHECK(std::fabs(rows[k].first - rows[k].second) <= 1e-6 * max_fd + 1e-4 * std::fabs(rows[k].second));
  }
  // determinism: the same rollout again gives bit-identical states and gradients
  const ModelT<D> again_world = world(rm, pm);
  RolloutT<D> again(again_world, ro);
  REQUIRE(again.forward(init, controls).is_ok());
  REQUIRE(again
              .backward([&](int t, const StateT<D>& s, StateT<D>& adj) {
                if (t != T) return;
                D mx = 0;
                for (auto& x : s.particle_q) mx += x.x / 3;
                for (auto& g : adj.particle_q) g.x += 2 * mx / 3;
                adj.joint_q[0] += 0.1;
              })
              .is_ok());
  for (int i = 0; i < 3; ++i) {
    CHECK(again.final_state().particle_q[i] == final_state.particle_q[i]);
    CHECK(again.grad_initial().particle_qd[i] == roll.grad_initial().particle_qd[i]);
  }
  CHECK(again.grad_controls()[2].joint_act[0] == roll.grad_controls()[2].joint_act[0]);
}
