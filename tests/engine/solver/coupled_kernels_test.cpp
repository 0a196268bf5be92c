// the coupled substep's functors (engine/solver/coupled_kernels.h) as SolverT runs them
// (engine/solver/coupled.cpp), against reference bits: the states, the adjoints and every
// gradient of several steps, hashed (FNV-1a over the bytes), equal to what the hand-written
// coupled substep loop that SolverT ran before (commit 76460ef) gave on this build. scenes:
// the arm pushing the soft ball (assets/scenes/robot_arm_push_soft.json, 8 substeps) while its
// shapes press the particles; a mesh box sliding on a cloth patch (mesh body shapes against
// particles and the ground); the same box on a 32 x 32 patch with particle contact (enough work
// for the team of threads) at one and two threads. the mesh box's references were recorded
// again when the free joint's linear velocity moved to the joint frame (the box spins as it
// slides); the arm's scene, whose box does not turn in the hashed steps, kept its bits. the CUDA
// backend launches the same functors; its device run is checked against SolverT within float
// tolerance in tests/engine/cuda/cuda_coupled_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/model/builder.h"
#include "engine/model/fields.h"
#include "engine/model/rigid_builder.h"
#include "engine/solver/solver.h"
#include "tests/engine/articulation/mesh_test_util.h"
#include "tests/engine/asset_scene.h"

using namespace adj;

namespace {

// FNV-1a over the bytes of what a run produced, one hash per kind of result
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  template <class T>
  void add(const std::vector<T>& a) {
    const std::uint64_t n = a.size();
    bytes(&n, sizeof n);
    if (!a.empty()) bytes(a.data(), sizeof(T) * a.size());
  }
  template <class S>
  void add(const StateT<S>& s) {
    add(s.particle_q);
    add(s.particle_qd);
    add(s.joint_q);
    add(s.joint_qd);
  }
};

struct Hashes {
  Hash state, adjoint, control, model;
};

template <class S>
void add_grads(Hash& h, const ModelGradT<S>& g) {
  for (const FieldInfo& f : k_fields) {
    const FieldRef<S> r = grad_field(g, f.field);
    for (int e = 0; e < r.count; ++e)
      for (int c = 0; c < f.width; ++c) {
        const S x = r.at(e, c);
        h.bytes(&x, sizeof x);
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

// `steps` steps from the model's initial state, each with its adjoint from a random upstream
// adjoint; the body-particle contacts of each step counted
template <class S, class Control>
Hashes run(const ModelT<S>& model, SolverOptions options, S dt, int steps, const Control& control_of,
           int* touching_steps = nullptr) {
  SolverT<S> solver(options);
  StateT<S> s = model.make_state(), next;
  Hashes h;
  for (int t = 0; t < steps; ++t) {
    INFO("step " << t);
    const ControlT<S> control = control_of(t);
    ContactsT<S> contacts;
    Status st = solver.step(model, s, next, control, dt, &contacts);
    INFO(st.message());
    REQUIRE(st.is_ok());
    h.state.add(next);
    if (touching_steps && contacts.body_particle.contact_count() > 0) ++*touching_steps;
    const StateT<S> adj_out = random_adjoint(next, 100u + unsigned(t));
    StateT<S> adj_in;
    ControlT<S> ac;
    ModelGradT<S> g;
    st = solver.step_adjoint(model, s, control, dt, adj_out, adj_in, ac, g);
    INFO(st.message());
    REQUIRE(st.is_ok());
    h.adjoint.add(adj_in);
    h.control.add(ac.joint_act);
    h.control.add(ac.particle_f);
    h.control.add(ac.spring_act);
    h.control.add(ac.tet_act);
    add_grads(h.model, g);
    s = next;
  }
  return h;
}

void check_hashes(const Hashes& h, std::uint64_t state, std::uint64_t adjoint, std::uint64_t control,
                  std::uint64_t model) {
  auto hex = [](std::uint64_t x) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%016llxull", static_cast<unsigned long long>(x));
    return std::string(b);
  };
  INFO("hashes: " << hex(h.state.h) << ", " << hex(h.adjoint.h) << ", " << hex(h.control.h) << ", " << hex(h.model.h));
  CHECK(h.state.h == state);
  CHECK(h.adjoint.h == adjoint);
  CHECK(h.control.h == control);
  CHECK(h.model.h == model);
}

template <class S>
Hashes push_soft(bool with_forces) {
  const test::AssetScene<S> a("robot_arm_push_soft.json");
  const ModelT<S>& model = a.cs.model;
  REQUIRE(model.body_count() > 0);
  REQUIRE(model.particle_count() > 0);
  REQUIRE(a.cs.substeps > 1);
  int touching = 0;
  const Hashes h = run(
      model, {.substeps = a.cs.substeps}, S(a.cs.frame_dt), 12,
      [&](int t) { return sweep_control(model, t, with_forces); }, &touching);
  // the arm pressed the ball during the run (the pair forces were part of the hashed steps)
  CHECK(touching >= 6);
  return h;
}

// a free mesh box sliding on a cells x cells cloth patch (cell 5 cm) lying on the ground, its
// centre under the box
template <class S>
ModelT<S> mesh_box_on_cloth(int cells) {
  RigidBuilder rb;
  rb.ground = false;
  const int box = rb.add_body("box", {.type = RIGID_JOINT_FREE});
  const test::TestMesh bm = test::box_mesh({0.06, 0.03, 0.05});
  rb.add_shape(box, {.type = GEOM_MESH, .density = 400, .mesh_vertices = bm.v, .mesh_tris = bm.t});
  Result<RigidModelT<S>> rm = rb.finalize<S>();
  INFO(rm.status().message());
  REQUIRE(rm.is_ok());
  ModelBuilderT<S> pb;
  mat33<S> lie;
  lie.m[0][0] = 1;
  lie.m[2][1] = 1;
  lie.m[1][2] = -1;
  const S corner = S(-0.025) * S(cells);
  pb.add_cloth_grid({corner, S(0.015), corner}, lie, cells, cells, S(0.05), S(0.01), {0, 0, 0}, ClothMaterial<S>{},
                    false, S(0.02));
  pb.add_ground(0);
  Result<ModelT<S>> pm = pb.finalize();
  INFO(pm.status().message());
  REQUIRE(pm.is_ok());
  ModelT<S> m = pm.value();
  m.contact_ke = 1e3;
  m.contact_kd = 1;
  m.contact_kf = 2;
  m.contact_mu = 0.6;
  m.rigid = rm.value();
  // the box 4 mm into the particles' radius, sliding along +x and turning
  const StateT<S> rest = m.rigid.make_state();
  m.joint_q = rest.joint_q;
  m.joint_qd = rest.joint_qd;
  const double q[7] = {0.012, 0.061, 0.008, 0.999, 0.02, 0.01, 0.03};
  double n = 0;
  for (int k = 3; k < 7; ++k) n += q[k] * q[k];
  for (int k = 0; k < 7; ++k) m.joint_q[std::size_t(k)] = S(k >= 3 ? q[k] / std::sqrt(n) : q[k]);
  const double qd[6] = {0.5, -0.05, 0.1, 0.2, 0.3, -0.4};
  for (int k = 0; k < 6; ++k) m.joint_qd[std::size_t(k)] = S(qd[k]);
  return m;
}

}  // namespace

TEST_CASE("coupled step: SolverT runs the coupled functors with the reference bits, forward and adjoint",
          "[solver][coupling][reference]") {
  SECTION("float, no external forces") {
    check_hashes(push_soft<float>(false), 0xfce78a7db6f71b15ull, 0x24fcbb587df2c641ull, 0xce5286617bc6f6f3ull,
                 0xfe1c80827aeb9959ull);
  }
  SECTION("float, external forces on the particles") {
    check_hashes(push_soft<float>(true), 0x803f7af7cf73c79full, 0x20c141ced930faddull, 0xd9662963ba2093c4ull,
                 0x774169165304e65eull);
  }
  SECTION("double") {
    check_hashes(push_soft<double>(true), 0xf796675331533260ull, 0x21d738083cee33f3ull, 0xd30ff56cb4fbd56dull,
                 0x9ce63ba8e0af389dull);
  }
}

TEST_CASE("coupled step: mesh body shapes against particles, with the reference bits", "[solver][coupling][mesh]") {
  const ModelT<double> model = mesh_box_on_cloth<double>(4);
  REQUIRE(model.rigid.shape_type[0] == GEOM_MESH);
  const ControlT<double> control = model.make_control();
  int touching = 0;
  const Hashes h = run(
      model, {.substeps = 4}, 1.0 / 240, 6, [&](int) { return control; }, &touching);
  CHECK(touching >= 4);  // the box pressed the patch in most of the hashed steps
  check_hashes(h, 0xfca8cdeed5bb3a0aull, 0xd9e160f65820fd8cull, 0xcac8295191004d54ull, 0xd89577a3d328fd10ull);
}

TEST_CASE("coupled step: a mesh box on a 32 x 32 cloth patch, one and two threads, with the reference bits",
          "[solver][coupling][threads]") {
  ModelT<float> model = mesh_box_on_cloth<float>(32);
  model.particle_contact = true;  // the particle grid, built on one thread of the team
  model.grid_cell = 0.05f;
  REQUIRE(model.particle_count() + model.tri_count() + model.edge_count() >= 4096);  // the team's minimum work
  const ControlT<float> control = model.make_control();
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    // enough steps that the team of threads runs some of them (it is tried on the 2nd and 4th)
    int touching = 0;
    const Hashes h = run(
        model, {.substeps = 4, .thread_count = threads}, 1.0f / 240, 6, [&](int) { return control; }, &touching);
    CHECK(touching >= 4);
    check_hashes(h, 0x58376cf80ea31463ull, 0xa409cd43363f30d9ull, 0xa759cfeea99c1267ull, 0xb0943bc964d82679ull);
  }
}
