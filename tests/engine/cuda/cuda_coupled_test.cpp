// CPU vs CUDA on a coupled scene: the arm pushing the soft ball (assets/scenes/
// robot_arm_push_soft.json: body-particle contact, 8 substeps) stepped by CudaSolverT's
// coupled path (engine/cuda/cuda_coupled.cuh) against SolverT: states over 30 steps and each
// step's adjoint (from the CPU's states) within float tolerance (float: nvcc's FMAs and the
// per-step gradient reduction differ in rounding; double: near round-off), run-to-run bit
// identity on the device, and the refusal of mesh body shapes. SolverT runs the same functors
// through the same substep loops on the host (tests/engine/solver/coupled_kernels_test.cpp).
// without a CUDA device the executable prints why and exits 77 (ctest: Skipped); Catch2 2.13
// has no SKIP, so the whole executable is the unit that skips
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/cuda/cuda.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
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

// the arrays compared, each by name: one relative tolerance per array, so a small quantity
// (a joint velocity beside particle positions, a contact gradient beside mass gradients) cannot
// hide behind a large one
using Named = std::vector<std::pair<std::string, std::vector<double>>>;

template <class S>
std::vector<double> flat3(const Array<vec3<S>>& a) {
  std::vector<double> v;
  for (const auto& x : a) v.insert(v.end(), {double(x.x), double(x.y), double(x.z)});
  return v;
}

template <class S>
std::vector<double> flat1(const Array<S>& a) {
  return std::vector<double>(a.begin(), a.end());
}

template <class S>
Named arrays(const StateT<S>& s) {
  return {{"particle_q", flat3(s.particle_q)},
          {"particle_qd", flat3(s.particle_qd)},
          {"joint_q", flat1(s.joint_q)},
          {"joint_qd", flat1(s.joint_qd)}};
}

template <class S>
Named grads(const ControlT<S>& c, const ModelGradT<S>& g) {
  return {{"joint_act", flat1(c.joint_act)},
          {"spring_act", flat1(c.spring_act)},
          {"particle_mass", flat1(g.particle_mass)},
          {"spring_ke", flat1(g.spring_ke)},
          {"body_mass", flat1(g.rigid.body_mass)},
          {"actuator_kp", flat1(g.rigid.actuator_kp)},
          {"contact_ke", {double(g.contact_ke)}},
          {"contact_kd", {double(g.contact_kd)}},
          {"contact_mu", {double(g.contact_mu)}},
          {"body gravity", {double(g.rigid.gravity.x), double(g.rigid.gravity.y), double(g.rigid.gravity.z)}}};
}

// per array: max |a - b| / max |a| below tol (an all-zero array must stay zero: floor 1e-30)
void check_close(const Named& a, const Named& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    INFO(a[k].first);
    REQUIRE(a[k].second.size() == b[k].second.size());
    double num = 0, den = 1e-30;
    for (std::size_t i = 0; i < a[k].second.size(); ++i) {
      num = std::max(num, std::fabs(a[k].second[i] - b[k].second[i]));
      den = std::max(den, std::fabs(a[k].second[i]));
    }
    CHECK(num / den < tol);
  }
}

// the arm's PD targets swept toward the ball
template <class S>
ControlT<S> sweep_control(const ModelT<S>& m, int step) {
  ControlT<S> c = m.make_hold_control();
  for (std::size_t k = 0; k < c.joint_act.size(); ++k) c.joint_act[k] += S(0.02) * S(step) * S(k == 0 ? -1 : 1);
  return c;
}

template <class S>
void check_parity(double state_tol, double grad_tol) {
  int substeps = 1;
  S dt = S(0);
  const ModelT<S> model = push_soft_model<S>(substeps, dt);
  SolverT<S> cpu({.substeps = substeps});
  CudaSolverT<S> gpu({.substeps = substeps});
  Status st = gpu.upload(model);
  INFO(st.message());
  REQUIRE(st.is_ok());
  StateT<S> s_cpu = model.make_state(), s_gpu = model.make_state();
  int touching = 0;
  for (int t = 0; t < 30; ++t) {
    INFO("step " << t);
    const ControlT<S> control = sweep_control(model, t);
    StateT<S> n_cpu, n_gpu;
    ContactsT<S> contacts;
    REQUIRE(cpu.step(model, s_cpu, n_cpu, control, dt, &contacts).is_ok());
    st = gpu.step(s_gpu, n_gpu, control, dt);
    INFO(st.message());
    REQUIRE(st.is_ok());
    touching += contacts.body_particle.contact_count() > 0;
    check_close(arrays(n_cpu), arrays(n_gpu), state_tol);
    // the step's adjoint from the CPU's input state on both
    StateT<S> adj_out = zero_like(n_cpu);
    for (std::size_t i = 0; i < adj_out.particle_q.size(); ++i) adj_out.particle_q[i] = {S(1), S(0.5), S(-0.25)};
    for (std::size_t i = 0; i < adj_out.joint_qd.size(); ++i) adj_out.joint_qd[i] = S(0.3);
    StateT<S> a_cpu, a_gpu;
    ControlT<S> c_cpu, c_gpu;
    ModelGradT<S> g_cpu, g_gpu;
    REQUIRE(cpu.step_adjoint(model, s_cpu, control, dt, adj_out, a_cpu, c_cpu, g_cpu).is_ok());
    st = gpu.step_adjoint(s_cpu, control, dt, adj_out, a_gpu, c_gpu, g_gpu);
    INFO(st.message());
    REQUIRE(st.is_ok());
    check_close(arrays(a_cpu), arrays(a_gpu), grad_tol);
    check_close(grads(c_cpu, g_cpu), grads(c_gpu, g_gpu), grad_tol);
    s_cpu = n_cpu;
    s_gpu = n_gpu;
  }
  CHECK(touching >= 10);  // the compared steps had body-particle contact
}

}  // namespace

TEST_CASE("CUDA coupled: the arm pushing the soft ball matches the CPU (float)", "[cuda][coupling]") {
  check_parity<float>(2e-3, 2e-2);
}

TEST_CASE("CUDA coupled: the arm pushing the soft ball matches the CPU (double)", "[cuda][coupling]") {
  check_parity<double>(1e-8, 1e-6);
}

TEST_CASE("CUDA coupled: two runs are bit-identical", "[cuda][coupling]") {
  int substeps = 1;
  float dt = 0;
  const ModelT<float> model = push_soft_model<float>(substeps, dt);
  std::vector<double> runs[2];
  for (auto& r : runs) {
    CudaSolverT<float> gpu({.substeps = substeps});
    REQUIRE(gpu.upload(model).is_ok());
    StateT<float> s = model.make_state(), n;
    for (int t = 0; t < 20; ++t) {
      REQUIRE(gpu.step(s, n, sweep_control(model, t), dt).is_ok());
      s = n;
    }
    StateT<float> adj_in;
    ControlT<float> ac;
    ModelGradT<float> g;
    REQUIRE(gpu.step_adjoint(s, sweep_control(model, 20), dt, model.make_state(), adj_in, ac, g).is_ok());
    r.clear();
    for (const Named& n : {arrays(s), grads(ac, g)})
      for (const auto& [name, v] : n) r.insert(r.end(), v.begin(), v.end());
  }
  REQUIRE(runs[0].size() == runs[1].size());
  CHECK(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(double)) == 0);
}

TEST_CASE("CUDA coupled: mesh body shapes are refused, naming the shape", "[cuda][coupling]") {
  int substeps = 1;
  float dt = 0;
  ModelT<float> model = push_soft_model<float>(substeps, dt);
  REQUIRE(model.rigid.shape_count() > 1);
  model.rigid.shape_type[1] = GEOM_MESH;
  CudaSolverT<float> gpu({.substeps = substeps});
  Status st = gpu.upload(model);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("body shape 1") != std::string::npos);
  StateT<float> s = model.make_state(), n;
  CHECK_FALSE(gpu.step(s, n, model.make_hold_control(), dt).is_ok());  // no half-uploaded model
}

int main(int argc, char** argv) {
  std::string reason;
  if (!cuda_available(&reason)) {
    std::printf("cuda_coupled_test: skipped: %s\n", reason.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
