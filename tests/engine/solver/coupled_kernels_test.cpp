// the coupled substep's functors (engine/solver/coupled_kernels.h) in their host runner
// (engine/solver/coupled_host.h) against the CPU solver (SolverT, engine/solver/coupled.cpp):
// bit for bit, states and every gradient, over several steps of the arm pushing the soft ball
// (assets/scenes/robot_arm_push_soft.json, 8 substeps) while the arm's shapes press the ball's
// particles. this is what the CUDA backend launches; its device run is checked against the
// CPU within float tolerance in tests/engine/cuda/cuda_coupled_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/model/fields.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/coupled_host.h"
#include "engine/solver/solver.h"
#include "tests/engine/asset_scene.h"

using namespace adj;

namespace {

template <class S>
ModelT<S> push_soft_model(int& substeps, S& dt) {
  const test::AssetScene<S> a("robot_arm_push_soft.json");
  substeps = a.cs.substeps;
  dt = a.cs.frame_dt;
  return a.cs.model;
}

// the first index where two arrays differ in their bits, -1 if none
template <class T>
long first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return long(i);
  return -1;
}

#define CHECK_SAME(a, b)                                                \
  do {                                                                  \
    INFO(#a << ": first bit difference at " << first_difference(a, b)); \
    CHECK(first_difference(a, b) == -1);                                \
  } while (0)

template <class S>
void check_same_state(const StateT<S>& a, const StateT<S>& b) {
  CHECK_SAME(a.particle_q, b.particle_q);
  CHECK_SAME(a.particle_qd, b.particle_qd);
  CHECK_SAME(a.joint_q, b.joint_q);
  CHECK_SAME(a.joint_qd, b.joint_qd);
}

template <class S>
void check_same_grads(const ModelGradT<S>& a, const ModelGradT<S>& b) {
  for (const FieldInfo& f : k_fields) {
    FieldRef<S> ra = grad_field(a, f.field), rb = grad_field(b, f.field);
    INFO("model gradient " << f.kind);
    REQUIRE(ra.count == rb.count);
    for (int e = 0; e < ra.count; ++e)
      for (int c = 0; c < f.width; ++c) {
        const S x = ra.at(e, c), y = rb.at(e, c);
        INFO("element " << e << ", entry " << c << ": " << x << " vs " << y);
        CHECK(std::memcmp(&x, &y, sizeof(S)) == 0);
      }
  }
}

// a random adjoint of a state (fixed seed)
template <class S>
StateT<S> random_adjoint(const StateT<S>& like, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  StateT<S> a = zero_like(like);
  for (auto& x : a.particle_q) x = {S(u(rng)), S(u(rng)), S(u(rng))};
  for (auto& x : a.particle_qd) x = {S(u(rng)), S(u(rng)), S(u(rng))};
  for (S& x : a.joint_q) x = S(u(rng));
  for (S& x : a.joint_qd) x = S(u(rng));
  return a;
}

// the arm's PD targets swept toward the ball, plus (with_forces) a small push on each particle
template <class S>
ControlT<S> sweep_control(const ModelT<S>& m, int step, bool with_forces) {
  ControlT<S> c = m.make_hold_control();
  for (std::size_t k = 0; k < c.joint_act.size(); ++k) c.joint_act[k] += S(0.02) * S(step) * S(k == 0 ? -1 : 1);
  if (with_forces)
    for (int i = 0; i < m.particle_count(); ++i) c.particle_f[std::size_t(i)] = {S(0.01) * S(i % 3), S(0), S(-0.005)};
  else
    c.particle_f.clear();
  return c;
}

template <class S>
void check_bit_equal(bool with_forces) {
  int substeps = 1;
  S dt = S(0);
  const ModelT<S> model = push_soft_model<S>(substeps, dt);
  REQUIRE(model.body_count() > 0);
  REQUIRE(model.particle_count() > 0);
  REQUIRE(substeps > 1);
  SolverT<S> cpu({.substeps = substeps});
  CoupledHostT<S> host({.substeps = substeps});
  Status st = host.upload(model);
  INFO(st.message());
  REQUIRE(st.is_ok());
  StateT<S> s_cpu = model.make_state(), s_host = model.make_state(), next;
  int touching_steps = 0;
  S max_force = S(0);
  for (int t = 0; t < 12; ++t) {
    INFO("step " << t);
    const ControlT<S> control = sweep_control(model, t, with_forces);
    ContactsT<S> contacts;
    REQUIRE(cpu.step(model, s_cpu, next, control, dt, &contacts).is_ok());
    StateT<S> out_host;
    st = host.step(s_host, out_host, control, dt);
    INFO(st.message());
    REQUIRE(st.is_ok());
    check_same_state(next, out_host);
    if (contacts.body_particle.contact_count() > 0) ++touching_steps;
    for (const vec3<S>& f : contacts.body_particle.force) max_force = std::max(max_force, length(f));
    // the step's adjoint from this step's input
    const StateT<S> adj_out = random_adjoint(next, 100u + unsigned(t));
    StateT<S> adj_cpu, adj_host;
    ControlT<S> ac_cpu, ac_host;
    ModelGradT<S> g_cpu, g_host;
    REQUIRE(cpu.step_adjoint(model, s_cpu, control, dt, adj_out, adj_cpu, ac_cpu, g_cpu).is_ok());
    st = host.step_adjoint(s_host, control, dt, adj_out, adj_host, ac_host, g_host);
    INFO(st.message());
    REQUIRE(st.is_ok());
    check_same_state(adj_cpu, adj_host);
    CHECK_SAME(ac_cpu.joint_act, ac_host.joint_act);
    CHECK_SAME(ac_cpu.particle_f, ac_host.particle_f);
    CHECK_SAME(ac_cpu.spring_act, ac_host.spring_act);
    check_same_grads(g_cpu, g_host);
    s_cpu = next;
    s_host = out_host;
  }
  // the arm pressed the ball during the run (the pair forces were part of the compared steps)
  CHECK(touching_steps >= 6);
  CHECK(max_force > S(0.01));
}

}  // namespace

TEST_CASE("coupled kernels: the host runner equals the CPU solver bit for bit, forward and adjoint",
          "[solver][coupling]") {
  SECTION("float, no external forces") { check_bit_equal<float>(false); }
  SECTION("float, external forces on the particles") { check_bit_equal<float>(true); }
  SECTION("double") { check_bit_equal<double>(true); }
}

TEST_CASE("coupled kernels: the host runner refuses mesh body shapes, naming the shape", "[solver][coupling]") {
  int substeps = 1;
  float dt = 0;
  ModelT<float> model = push_soft_model<float>(substeps, dt);
  REQUIRE(model.rigid.shape_count() > 1);
  model.rigid.shape_type[1] = GEOM_MESH;
  CoupledHostT<float> host({.substeps = substeps});
  Status st = host.upload(model);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("body shape 1 is a mesh") != std::string::npos);
}
