// The device-resident CUDA rollout (engine/cuda/cuda_rollout.h) against the CPU Rollout:
// forward states and gradients on the reference scenes (double: relative 1e-5 of the
// largest entry; float: 2e-3), run-to-run and graph-vs-eager bit-identical. GPU only:
// without a CUDA device the executable prints why and exits 77 (ctest: Skipped); Catch2
// 2.13 has no SKIP macro, so the whole executable is the unit that skips.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_rollout.h"
#include "engine/grad/rollout.h"
#include "engine/model/builder.h"
#include "tests/engine/scenes.h"

using namespace adj;

namespace {

// max |a - b| over max |a| (1e-30 floor)
template <class V>
double rel(const std::vector<V>& a, const std::vector<V>& b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if constexpr (std::is_arithmetic_v<V>) {
      num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
      den = std::max(den, std::fabs(double(a[i])));
    } else {
      for (int k = 0; k < 3; ++k) {
        num = std::max(num, std::fabs(double(a[i][k]) - double(b[i][k])));
        den = std::max(den, std::fabs(double(a[i][k])));
      }
    }
  }
  return num / den;
}

template <class V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0);
}

template <class S>
std::vector<ControlT<S>> make_controls(const ModelT<S>& m, int T) {
  std::vector<ControlT<S>> cs(T, m.make_control());
  for (int t = 0; t < T; ++t) {
    for (std::size_t k = 0; k < cs[t].spring_act.size(); ++k) cs[t].spring_act[k] = S(0.1 * std::sin(double(k + t)));
    for (std::size_t k = 0; k < cs[t].tet_act.size(); ++k) cs[t].tet_act[k] = S(0.05 * std::cos(double(k + 2 * t)));
    for (std::size_t p = 0; p < cs[t].particle_f.size(); ++p)
      cs[t].particle_f[p] = vec3<S>(S(0.01 * std::sin(double(p + t))), S(0), S(0.01));
  }
  return cs;
}

template <class S>
StateT<S> seed_of(const ModelT<S>& m) {
  StateT<S> adj = m.make_state();
  adj.zero();
  for (std::size_t p = 0; p < adj.particle_q.size(); ++p) {
    adj.particle_q[p] = vec3<S>(S(0.3), S(1.0), S(-0.2));
    adj.particle_qd[p] = vec3<S>(S(0.05), S(0), S(0.1 * std::cos(double(p))));
  }
  return adj;
}

template <class S>
struct GpuResult {
  StateT<S> final, grad0;
  std::vector<ControlT<S>> grad_controls;
  ModelGradT<S> grad_model;
};

template <class S>
GpuResult<S> run_gpu(const ModelT<S>& m, const std::vector<ControlT<S>>& cs, int T, S dt, int substeps, bool graphs) {
  CudaRolloutT<S> r({.steps = T, .dt = dt, .substeps = substeps, .graphs = graphs});
  GpuResult<S> g;
  Status st = r.upload(m);
  INFO(st.message());
  REQUIRE(st.is_ok());
  REQUIRE(r.set_initial(m.make_state()).is_ok());
  REQUIRE(r.set_controls(cs).is_ok());
  st = r.forward();
  INFO(st.message());
  REQUIRE(st.is_ok());
  st = r.backward(seed_of(m));
  INFO(st.message());
  REQUIRE(st.is_ok());
  REQUIRE(r.synchronize().is_ok());
  REQUIRE(r.download_state(T, g.final).is_ok());
  REQUIRE(r.download_grad_initial(g.grad0).is_ok());
  REQUIRE(r.download_grad_controls(g.grad_controls).is_ok());
  REQUIRE(r.download_grad_model(g.grad_model).is_ok());
  if (graphs) CHECK(r.graph_launches() == 1 + T);  // one forward graph, T backward replays
  return g;
}

template <class S>
void compare(const char* name, const ModelT<S>& m, int T, S dt, int substeps, double tol) {
  std::vector<ControlT<S>> cs = make_controls(m, T);
  RolloutT<S> cpu(m, {.steps = T, .dt = dt, .substeps = substeps, .checkpoint_every = 1});
  REQUIRE(cpu.forward(m.make_state(), cs).is_ok());
  StateT<S> seed = seed_of(m);
  REQUIRE(cpu.backward([&](int t, const StateT<S>&, StateT<S>& adj) {
               if (t == T) adj = seed;
             })
              .is_ok());
  GpuResult<S> g = run_gpu(m, cs, T, dt, substeps, true);
  INFO(name);
  CHECK(rel(cpu.final_state().particle_q, g.final.particle_q) <= tol);
  CHECK(rel(cpu.final_state().particle_qd, g.final.particle_qd) <= tol);
  CHECK(rel(cpu.grad_initial().particle_q, g.grad0.particle_q) <= tol);
  CHECK(rel(cpu.grad_initial().particle_qd, g.grad0.particle_qd) <= tol);
  REQUIRE(g.grad_controls.size() == std::size_t(T));
  double dc = 0;
  for (int t = 0; t < T; ++t) {
    dc = std::max(dc, rel(cpu.grad_controls()[t].particle_f, g.grad_controls[t].particle_f));
    if (!cpu.grad_controls()[t].spring_act.empty())
      dc = std::max(dc, rel(cpu.grad_controls()[t].spring_act, g.grad_controls[t].spring_act));
    if (!cpu.grad_controls()[t].tet_act.empty())
      dc = std::max(dc, rel(cpu.grad_controls()[t].tet_act, g.grad_controls[t].tet_act));
  }
  CHECK(dc <= tol);
  CHECK(rel(cpu.grad_model().particle_mass, g.grad_model.particle_mass) <= tol);
  if (m.spring_count()) CHECK(rel(cpu.grad_model().spring_ke, g.grad_model.spring_ke) <= tol);
  if (m.tet_count()) CHECK(rel(cpu.grad_model().tet_mu, g.grad_model.tet_mu) <= tol);
  double ke = double(cpu.grad_model().contact_ke);
  CHECK(std::fabs(ke - double(g.grad_model.contact_ke)) <= tol * std::max(1e-12, std::fabs(ke)));
  std::printf("%-10s final q %.2e | dL/dq0 %.2e dL/dcontrols %.2e dL/dmass %.2e\n", name,
              rel(cpu.final_state().particle_q, g.final.particle_q),
              rel(cpu.grad_initial().particle_q, g.grad0.particle_q), dc,
              rel(cpu.grad_model().particle_mass, g.grad_model.particle_mass));
}

// scenes big enough to span many thread blocks: a 32x32 cloth, a 512-particle pile
template <class S>
ModelT<S> big_cloth() {
  ModelBuilderT<S> b;
  ClothMaterial<S> mat;
  mat33<S> flat = mat33<S>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({S(-0.5), S(0.4), S(-0.5)}, flat, 32, 32, S(1.0 / 32), S(0.1), {S(0.2), 0, 0}, mat, false, S(0.01));
  b.add_sphere({S(0), S(0.1), S(0)}, S(0.25));
  b.add_ground(S(0));
  return test::must(b.finalize());
}

template <class S>
ModelT<S> big_pile() {
  ModelBuilderT<S> b;
  for (int y = 0; y < 8; ++y)
    for (int z = 0; z < 8; ++z)
      for (int x = 0; x < 8; ++x)
        b.add_particle({S(0.1f * x + 0.01f * y), S(0.05f + 0.1f * y), S(0.1f * z)}, {S(0.1f * float(x % 3)), 0, 0},
                       S(0.1), S(0.045));
  b.add_ground(S(0));
  b.settings().particle_contact = true;
  return test::must(b.finalize());
}

}  // namespace

TEST_CASE("CUDA rollout matches the CPU rollout on the reference scenes (double)", "[cuda][gpu]") {
  compare<double>("cloth", test::cloth_scene(), 100, 1.0 / 120, 4, 1e-5);
  compare<double>("soft", test::soft_scene(), 100, 1.0 / 200, 2, 1e-5);
  compare<double>("robot", test::robot_scene(), 100, 1.0 / 250, 1, 1e-5);
  compare<double>("pile", test::pile_scene(), 100, 1.0 / 200, 2, 1e-5);
  compare<double>("colliders", test::colliders_scene(), 100, 1.0 / 200, 2, 1e-5);
}

// Over horizons where float itself is still a faithful answer: these contact scenes are
// chaotic in float. On the CPU alone, float against double after 60 steps differs by 3% of
// the positions (cloth) and 14% (pile), and so does float against float with the initial
// positions moved by 1e-6; dL/dq0 already differs by 3e-3 after 15 pile steps. The device
// rounds differently (nvcc's FMAs), so it can only be held to the CPU where the CPU's own
// float answer is within tolerance of its double one: 20 steps of cloth (3e-5), 10 of the
// pile (2e-5), with contact throughout.
TEST_CASE("CUDA rollout matches the CPU rollout in float", "[cuda][gpu]") {
  compare<float>("cloth32", big_cloth<float>(), 20, 1.0f / 60, 8, 2e-3);
  compare<float>("pile512", big_pile<float>(), 10, 1.0f / 60, 8, 2e-3);
}

// the same two scenes in double over the full 60 steps: many blocks, long contact, round-off only
TEST_CASE("CUDA rollout matches the CPU rollout on the many-block scenes (double)", "[cuda][gpu]") {
  compare<double>("cloth32 d", big_cloth<double>(), 60, 1.0 / 60, 8, 1e-5);
  compare<double>("pile512 d", big_pile<double>(), 60, 1.0 / 60, 8, 1e-5);
}

TEST_CASE("CUDA rollout is bit-identical run to run, with and without graphs", "[cuda][gpu]") {
  for (const ModelT<float>& m : {big_cloth<float>(), big_pile<float>()}) {
    std::vector<ControlT<float>> cs = make_controls(m, 40);
    GpuResult<float> a = run_gpu(m, cs, 40, 1.0f / 60, 8, true);
    GpuResult<float> b = run_gpu(m, cs, 40, 1.0f / 60, 8, true);
    GpuResult<float> c = run_gpu(m, cs, 40, 1.0f / 60, 8, false);
    for (const GpuResult<float>* o : {&b, &c}) {
      CHECK(same_bits(a.final.particle_q, o->final.particle_q));
      CHECK(same_bits(a.final.particle_qd, o->final.particle_qd));
      CHECK(same_bits(a.grad0.particle_q, o->grad0.particle_q));
      CHECK(same_bits(a.grad0.particle_qd, o->grad0.particle_qd));
      CHECK(same_bits(a.grad_model.particle_mass, o->grad_model.particle_mass));
      CHECK(same_bits(a.grad_controls[0].particle_f, o->grad_controls[0].particle_f));
      CHECK(a.grad_model.contact_ke == o->grad_model.contact_ke);
    }
  }
}

TEST_CASE("CUDA rollout with one control for all steps sums the per-step gradients", "[cuda][gpu]") {
  ModelT<double> m = test::robot_scene();
  const int T = 50;
  std::vector<ControlT<double>> one = {make_controls(m, 1)[0]};
  RolloutT<double> cpu(m, {.steps = T, .dt = 1.0 / 250, .substeps = 1, .checkpoint_every = 1});
  REQUIRE(cpu.forward(m.make_state(), one).is_ok());
  StateT<double> seed = seed_of(m);
  REQUIRE(cpu.backward([&](int t, const StateT<double>&, StateT<double>& adj) {
               if (t == T) adj = seed;
             })
              .is_ok());
  std::vector<double> sum(m.spring_count(), 0.0);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < m.spring_count(); ++k) sum[k] += cpu.grad_controls()[t].spring_act[k];
  GpuResult<double> g = run_gpu(m, one, T, 1.0 / 250, 1, true);
  REQUIRE(g.grad_controls.size() == 1);
  CHECK(rel(sum, g.grad_controls[0].spring_act) <= 1e-6);
}

TEST_CASE("CUDA rollout reports bad input by name", "[cuda][gpu]") {
  ModelT<double> m = test::robot_scene();
  CudaRolloutT<double> r({.steps = 10, .dt = 0.01, .substeps = 1});
  CHECK_THAT(r.forward().message(), Catch::Contains("upload"));
  REQUIRE(r.upload(m).is_ok());
  StateT<double> wrong;
  CHECK_THAT(r.set_initial(wrong).message(), Catch::Contains("0 particles"));
  std::vector<ControlT<double>> three(3, m.make_control());
  CHECK_THAT(r.set_controls(three).message(), Catch::Contains("0, 1 or 10"));
  three.resize(1);
  three[0].spring_act.resize(2);
  CHECK_THAT(r.set_controls(three).message(), Catch::Contains("control 0: spring_act"));
  REQUIRE(r.set_initial(m.make_state()).is_ok());
  REQUIRE(r.forward().is_ok());
  StateT<double> s;
  CHECK_THAT(r.download_state(11, s).message(), Catch::Contains("state 11 out of range"));
}

int main(int argc, char** argv) {
  std::string reason;
  if (!cuda_available(&reason)) {
    std::printf("cuda_rollout_test: skipped: %s\n", reason.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
