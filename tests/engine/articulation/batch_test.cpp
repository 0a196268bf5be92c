// the batch functors (engine/articulation/rigid_batch.h: the ADJ_HD step and step adjoint the
// CUDA batch launches, one world per thread, instantiated on RigidViewT and arena slices) run on
// the host in a plain loop over the worlds equal SolverT over WorldsT (the one step, one world at
// a time) bit for bit: the same functions, the same bits. On the reference robots: cartpole,
// 3-link arm, the walker on the ground, two boxes in contact, a mesh box on a box (the view's
// hulls) and a tree with every joint type against a static collider. The CUDA batch against
// SolverT over WorldsT: tests/engine/cuda/cuda_worlds_test.cpp (skipped without a device).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/articulation/rigid_batch.h"
#include "engine/articulation/robots.h"
#include "engine/solver/worlds.h"
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

// the batch functors over `count` worlds, in a plain host loop: the step, then the step adjoint
// (each world's parameter gradients summed in world order), packed world-major
template <class S>
struct HostLoop {
  RigidModelT<S> model;
  rigid::RigidViewT<S> view;
  int count = 0, substeps = 1;
  std::size_t stride = 0;
  std::vector<double> arena;  // doubles: 8-byte aligned slices
  std::vector<int> ok;
  std::vector<S> param;

  HostLoop(const RigidModelT<S>& m, int n, int sub) : model(m), count(n), substeps(sub) {
    view = rigid::make_rigid_view(model);
    stride = rigid::batch_slice_bytes(view, substeps, true);
    arena.assign(stride * std::size_t(count) / sizeof(double) + 1, 0.0);
    ok.assign(std::size_t(count), 1);
  }
  HostLoop(const HostLoop&) = delete;  // the view points into model

  template <class K>
  K kernel(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt) {
    K k;
    k.m = view;
    k.substeps = substeps;
    k.dt = dt;
    k.q = q.data();
    k.qd = qd.data();
    k.act = act.data();
    k.ok = ok.data();
    k.arena = reinterpret_cast<char*>(arena.data());
    k.stride = stride;
    return k;
  }
  Status step(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt, std::vector<S>& q_out,
              std::vector<S>& qd_out) {
    q_out.resize(q.size());
    qd_out.resize(qd.size());
    auto k = kernel<rigid::BatchStepKernel<S>>(q, qd, act, dt);
    k.q_out = q_out.data();
    k.qd_out = qd_out.data();
    for (int w = 0; w < count; ++w) k(w);
    return rigid::batch_check_ok(ok, "batch step");
  }
  Status step_adjoint(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt,
                      const std::vector<S>& adj_q_out, const std::vector<S>& adj_qd_out, std::vector<S>& adj_q,
                      std::vector<S>& adj_qd, std::vector<S>& adj_act, RigidModelGradT<S>& adj_model) {
    adj_q.resize(q.size());
    adj_qd.resize(qd.size());
    adj_act.resize(act.size());
    param.resize(std::size_t(count) * model.param_count());
    auto k = kernel<rigid::BatchAdjointKernel<S>>(q, qd, act, dt);
    k.adj_q_out = adj_q_out.data();
    k.adj_qd_out = adj_qd_out.data();
    k.adj_q = adj_q.data();
    k.adj_qd = adj_qd.data();
    k.adj_act = adj_act.data();
    k.adj_param = param.data();
    for (int w = 0; w < count; ++w) k(w);
    if (Status st = rigid::batch_check_ok(ok, "batch step adjoint"); !st) return st;
    rigid::batch_sum_param_grads(model, count, param.data(), adj_model);
    return Status::ok();
  }
};

// world_count worlds, each from its own perturbed state and control, stepped `steps` times by
// the functors' host loop and by SolverT over WorldsT (on `threads` threads); every step's
// outputs and step adjoints compared for exact equality
template <class S>
void check_scene(const Scene& sc, int world_count, int steps, int threads) {
  INFO(sc.name << (sizeof(S) == 4 ? " float" : " double") << ", " << threads << " threads");
  Result<RigidModelT<S>> r = sc.builder.finalize<S>();
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  const RigidModelT<S>& m = r.value();
  const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<S> q(std::size_t(world_count) * nq), qd(std::size_t(world_count) * nv),
      act(std::size_t(world_count) * na);
  for (int e = 0; e < world_count; ++e) {
    StateT<S> s = m.make_state();
    if (m.joint_type[0] == RIGID_JOINT_FREE) s.joint_q[1] = S(sc.height);
    for (int i = 0; i < nq; ++i) q[std::size_t(e) * nq + i] = s.joint_q[i];
    for (int j = 0; j < m.body_count(); ++j)  // small angles on the 1-dof joints
      if (m.joint_type[j] == RIGID_JOINT_REVOLUTE) q[std::size_t(e) * nq + m.joint_q_start[j]] += S(0.2 * u(rng));
    for (int i = 0; i < nv; ++i) qd[std::size_t(e) * nv + i] = S(0.3 * u(rng));
    for (int i = 0; i < na; ++i) act[std::size_t(e) * na + i] = S(0.4 * u(rng));
  }
  HostLoop<S> batch(m, world_count, sc.substeps);
  const S dt = S(1.0 / 60.0);
  const ModelT<S> scene = test::world(m);
  Result<WorldsT<S>> made = WorldsT<S>::create(
      scene, {.world_count = world_count, .thread_count = threads, .solver = {.substeps = sc.substeps}});
  REQUIRE(made.is_ok());
  WorldsT<S>& worlds = made.value();
  std::vector<int> touched(static_cast<std::size_t>(world_count), 0);  // worlds with a contact at some step
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
    // the same step and adjoint of every world by SolverT, each world's from its packed slice
    const std::size_t n = static_cast<std::size_t>(world_count);
    std::vector<StateT<S>> out(n), adj_in(n);
    std::vector<ControlT<S>> adj_c(n, m.make_control());
    std::vector<ModelGradT<S>> adj_m(n, scene.make_grad());
    st = worlds.run([&](int e, SolverT<S>& solver) {
      StateT<S>& in = worlds.state(e);
      in.joint_q.assign(q.begin() + e * nq, q.begin() + (e + 1) * nq);
      in.joint_qd.assign(qd.begin() + e * nv, qd.begin() + (e + 1) * nv);
      ControlT<S> c;
      c.joint_act.assign(act.begin() + e * na, act.begin() + (e + 1) * na);
      ContactsT<S> contacts;
      if (Status s1 = solver.step(worlds.model(e), in, out[e], c, dt, &contacts); !s1) return s1;
      if (contacts.bodies.contact_count() > 0) touched[std::size_t(e)] = 1;
      StateT<S> adj_out;
      adj_out.joint_q.assign(aq_out.begin() + e * nq, aq_out.begin() + (e + 1) * nq);
      adj_out.joint_qd.assign(aqd_out.begin() + e * nv, aqd_out.begin() + (e + 1) * nv);
      return solver.step_adjoint(worlds.model(e), in, c, dt, adj_out, adj_in[e], adj_c[e], adj_m[e]);
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    for (int e = 0; e < world_count; ++e) {
      INFO("world " << e);
      for (int i = 0; i < nq; ++i) REQUIRE(out[e].joint_q[i] == q1[std::size_t(e) * nq + i]);
      for (int i = 0; i < nv; ++i) REQUIRE(out[e].joint_qd[i] == qd1[std::size_t(e) * nv + i]);
      for (int i = 0; i < nq; ++i) REQUIRE(adj_in[e].joint_q[i] == aq[std::size_t(e) * nq + i]);
      for (int i = 0; i < nv; ++i) REQUIRE(adj_in[e].joint_qd[i] == aqd[std::size_t(e) * nv + i]);
      for (int i = 0; i < na; ++i) REQUIRE(adj_c[e].joint_act[i] == aact[std::size_t(e) * na + i]);
      // the loop sums the worlds' parameter gradients in world order
      const RigidModelGradT<S>& g = adj_m[e].rigid;
      for (int i = 0; i < m.body_count(); ++i) grad_ref.body_mass[i] += g.body_mass[i];
      for (int i = 0; i < na; ++i) {
        grad_ref.actuator_kp[i] += g.actuator_kp[i];
        grad_ref.actuator_kd[i] += g.actuator_kd[i];
      }
      for (int i = 0; i < nv; ++i) {
        grad_ref.dof_damping[i] += g.dof_damping[i];
        grad_ref.dof_armature[i] += g.dof_armature[i];
      }
      grad_ref.contact_ke += g.contact_ke;
      grad_ref.contact_kd += g.contact_kd;
      grad_ref.contact_mu += g.contact_mu;
      grad_ref.gravity += g.gravity;
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
    for (int c = 0; c < 3; ++c) CHECK(grad_batch.gravity[c] == grad_ref.gravity[c]);
    CHECK(grad_ref.gravity.y != S(0));  // the bodies' weight is in the gradient
    q = q1;
    qd = qd1;
  }
  int touching = 0;
  for (int x : touched) touching += x;
  CHECK((sc.name == "cartpole" || sc.name == "arm3" || touching > 0));  // the others touch something
}

}  // namespace

TEST_CASE("batch: the device functors on the host equal SolverT over worlds bit for bit (float)", "[rigid][batch]") {
  for (const Scene& sc : scenes()) check_scene<float>(sc, 5, 6, 1);
}

TEST_CASE("batch: the device functors on the host equal SolverT over worlds bit for bit (double, 2 threads)",
          "[rigid][batch]") {
  for (const Scene& sc : scenes()) check_scene<double>(sc, 3, 4, 2);
}
