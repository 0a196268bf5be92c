// the batch path (engine/articulation/rigid_batch.h: the ADJ_HD functors the CUDA batch launches,
// instantiated on RigidViewT and arena slices) run on the host in a plain loop over the
// environments equals RigidSolverT::step and its reverse step_adjoint bit for bit, on the
// reference robots: cartpole, 3-link arm, the walker on the ground, two boxes in contact, a
// mesh box on a box (the view's hulls) and a tree with every joint type against a static
// collider
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/articulation/rigid_batch.h"
#include "engine/articulation/rigid_solver.h"
#include "engine/articulation/robots.h"
#include "mesh_test_util.h"
#include "rigid_test_util.h"

using namespace adj;

namespace {

struct Scene {
  std::string name;
  RigidBuilder builder;
  double height;  // free base: initial height [m]
  int substeps;
};

std::vector<Scene> scenes() {
  std::vector<Scene> r;
  r.push_back({"cartpole", rigid_cartpole(), 0.0, 4});
  r.push_back({"arm3", rigid_arm3(), 0.0, 4});
  r.push_back({"walker", rigid_quadruped(), 0.42, 8});
  {
    RigidBuilder b;  // a small box resting turned on a larger one on the ground
    int lower = b.add_body("lower", {.type = RIGID_JOINT_FREE});
    b.add_shape(lower, {.type = GEOM_BOX, .size = {0.3, 0.1, 0.3}, .density = 500});
    int upper = b.add_body("upper", {.type = RIGID_JOINT_FREE, .pos = {0.05, 0.2, -0.03}, .rot = {0.99, 0, 0.15, 0}});
    b.add_shape(upper, {.type = GEOM_BOX, .size = {0.1, 0.1, 0.1}, .density = 500});
    r.push_back({"box-on-box", b, 0.098, 4});
  }
  {
    RigidBuilder b = test::mixed_tree();  // every joint type and shape, a static box collider
    b.colliders.push_back({.type = 2, .pos = {0.2, -0.1, 0}, .size = {0.3, 0.1, 0.3}});
    r.push_back({"mixed tree", b, 0.4, 8});
  }
  {
    RigidBuilder b;  // a mesh box resting turned on a box primitive on the ground: mesh-ground, mesh-box
    int lower = b.add_body("lower", {.type = RIGID_JOINT_FREE});
    b.add_shape(lower, {.type = GEOM_BOX, .size = {0.3, 0.1, 0.3}, .density = 500});
    int upper = b.add_body("upper", {.type = RIGID_JOINT_FREE, .pos = {0.05, 0.2, -0.03}, .rot = {0.99, 0, 0.15, 0}});
    const test::TestMesh m = test::box_mesh({0.1, 0.1, 0.1});
    b.add_shape(upper, {.type = GEOM_MESH, .density = 500, .mesh_vertices = m.v, .mesh_tris = m.t});
    r.push_back({"mesh box on box", b, 0.098, 4});
  }
  return r;
}

// env_count environments, each from its own perturbed state and control, stepped `steps`
// times by the batch and by one RigidSolverT per environment; every step's outputs and step
// adjoints compared for exact equality
template <class S>
void check_scene(const Scene& sc, int env_count, int steps) {
  INFO(sc.name << (sizeof(S) == 4 ? " float" : " double"));
  Result<RigidModelT<S>> r = sc.builder.finalize<S>();
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  const RigidModelT<S>& m = r.value();
  const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<S> q(std::size_t(env_count) * nq), qd(std::size_t(env_count) * nv), act(std::size_t(env_count) * na);
  for (int e = 0; e < env_count; ++e) {
    StateT<S> s = m.make_state();
    if (m.joint_type[0] == RIGID_JOINT_FREE) s.joint_q[1] = S(sc.height);
    for (int i = 0; i < nq; ++i) q[std::size_t(e) * nq + i] = s.joint_q[i];
    for (int j = 0; j < m.body_count(); ++j)  // small angles on the 1-dof joints
      if (m.joint_type[j] == RIGID_JOINT_REVOLUTE) q[std::size_t(e) * nq + m.joint_q_start[j]] += S(0.2 * u(rng));
    for (int i = 0; i < nv; ++i) qd[std::size_t(e) * nv + i] = S(0.3 * u(rng));
    for (int i = 0; i < na; ++i) act[std::size_t(e) * na + i] = S(0.4 * u(rng));
  }
  RigidBatchHostT<S> batch;
  REQUIRE(batch.upload(m, env_count, sc.substeps).is_ok());
  const S dt = S(1.0 / 60.0);
  std::vector<RigidSolverT<S>> solver(std::size_t(env_count), RigidSolverT<S>({.substeps = sc.substeps}));
  int touching = 0;  // environments with a contact at some step (the walker and the boxes must touch)
  for (int t = 0; t < steps; ++t) {
    std::vector<S> q1, qd1;
    Status st = batch.step(q, qd, act, dt, q1, qd1);
    INFO("step " << t << ": " << st.message());
    REQUIRE(st.is_ok());
    // adjoint seeds: a fixed pseudo-random dL/d out
    std::vector<S> aq_out(q.size()), aqd_out(qd.size()), aq, aqd, aact;
    for (S& x : aq_out) x = S(u(rng));
    for (S& x : aqd_out) x = S(u(rng));
    RigidModelGradT<S> grad_batch = m.make_grad(), grad_ref = m.make_grad();
    REQUIRE(batch.step_adjoint(q, qd, act, dt, aq_out, aqd_out, aq, aqd, aact, grad_batch).is_ok());
    for (int e = 0; e < env_count; ++e) {
      StateT<S> in, out, adj_out, adj_in;
      ControlT<S> c, adj_c = m.make_control();
      RigidModelGradT<S> adj_m = m.make_grad();
      in.joint_q.assign(q.begin() + e * nq, q.begin() + (e + 1) * nq);
      in.joint_qd.assign(qd.begin() + e * nv, qd.begin() + (e + 1) * nv);
      c.joint_act.assign(act.begin() + e * na, act.begin() + (e + 1) * na);
      RigidContactsT<S> contacts;
      REQUIRE(solver[e].step(m, in, out, c, dt, &contacts).is_ok());
      if (contacts.contact_count() > 0) ++touching;
      for (int i = 0; i < nq; ++i) REQUIRE(out.joint_q[i] == q1[std::size_t(e) * nq + i]);
      for (int i = 0; i < nv; ++i) REQUIRE(out.joint_qd[i] == qd1[std::size_t(e) * nv + i]);
      adj_out.joint_q.assign(aq_out.begin() + e * nq, aq_out.begin() + (e + 1) * nq);
      adj_out.joint_qd.assign(aqd_out.begin() + e * nv, aqd_out.begin() + (e + 1) * nv);
      REQUIRE(solver[e].step_adjoint(m, in, c, dt, adj_out, adj_in, adj_c, adj_m).is_ok());
      for (int i = 0; i < nq; ++i) REQUIRE(adj_in.joint_q[i] == aq[std::size_t(e) * nq + i]);
      for (int i = 0; i < nv; ++i) REQUIRE(adj_in.joint_qd[i] == aqd[std::size_t(e) * nv + i]);
      for (int i = 0; i < na; ++i) REQUIRE(adj_c.joint_act[i] == aact[std::size_t(e) * na + i]);
      // the batch sums the environments' parameter gradients in environment order
      for (int i = 0; i < m.body_count(); ++i) grad_ref.body_mass[i] += adj_m.body_mass[i];
      for (int i = 0; i < na; ++i) {
        grad_ref.actuator_kp[i] += adj_m.actuator_kp[i];
        grad_ref.actuator_kd[i] += adj_m.actuator_kd[i];
      }
      for (int i = 0; i < nv; ++i) {
        grad_ref.dof_damping[i] += adj_m.dof_damping[i];
        grad_ref.dof_armature[i] += adj_m.dof_armature[i];
      }
      grad_ref.contact_ke += adj_m.contact_ke;
      grad_ref.contact_kd += adj_m.contact_kd;
      grad_ref.contact_mu += adj_m.contact_mu;
    }
    for (int i = 0; i < m.body_count(); ++i) CHECK(grad_batch.body_mass[i] == grad_ref.body_mass[i]);
    for (int i = 0; i < na; ++i) {
      CHECK(grad_batch.actuator_kp[i] == grad_ref.actuator_kp[i]);
      CHECK(grad_batch.actuator_kd[i] == grad_ref.actuator_kd[i]);
    }
    for (int i = 0; i < nv; ++i) {
      CHECK(grad_batch.dof_damping[i] == grad_ref.dof_damping[i]);
      CHECK(grad_batch.dof_armature[i] == grad_ref.dof_armature[i]);
    }
    CHECK(grad_batch.contact_ke == grad_ref.contact_ke);
    CHECK(grad_batch.contact_kd == grad_ref.contact_kd);
    CHECK(grad_batch.contact_mu == grad_ref.contact_mu);
    q = q1;
    qd = qd1;
  }
  CHECK((sc.name == "cartpole" || sc.name == "arm3" || touching > 0));  // the others touch something
}

}  // namespace

TEST_CASE("batch: the device functors on the host equal RigidSolverT bit for bit (float)", "[rigid][batch]") {
  for (const Scene& sc : scenes()) check_scene<float>(sc, 5, 6);
}

TEST_CASE("batch: the device functors on the host equal RigidSolverT bit for bit (double)", "[rigid][batch]") {
  for (const Scene& sc : scenes()) check_scene<double>(sc, 3, 4);
}

TEST_CASE("batch: bad sizes and a singular step are errors that say what", "[rigid][batch]") {
  RigidModelT<double> m = test::finalize(rigid_cartpole());
  RigidBatchHostT<double> batch;
  REQUIRE(batch.upload(m, 2, 4).is_ok());
  std::vector<double> q(4, 0.0), qd(4, 0.0), act(1, 0.0), q1, qd1;  // act should hold 2
  Status st = batch.step(q, qd, act, 1.0 / 60.0, q1, qd1);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("sizes") != std::string::npos);
}
