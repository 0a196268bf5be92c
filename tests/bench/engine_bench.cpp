// engine benchmark: cloth NxN (N = 16, 32, 64, 128) and a ~10k-tet soft body.
// Prints Google Benchmark's table, then a summary: forward steps/s, backward/forward time
// ratio, 2-thread speed-up, and peak rollout state memory for T = 1000 with and without
// checkpointing. Quick smoke mode: --smoke (what ctest runs). With --scene FILE: a fixed number
// of timed rollouts of that scene's task instead (tests/bench/task_timing.h).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "engine/grad/rollout.h"
#include "engine/model/builder.h"
#include "engine/solver/solver.h"
#include "tests/bench/task_timing.h"

using namespace adj;

namespace {

ModelT<float> cloth(int n) {
  ModelBuilderT<float> b;
  // the same 2 m x 2 m sheet at every resolution; particle mass and stiffness scale together
  // so that the explicit step stays stable (the same frequencies as the 16x16 sheet)
  float s = 16.0f * 16.0f / float(n * n);
  ClothMaterial<float> mat;
  mat.tri_ke = mat.tri_ka = 1e3f * s;
  mat.tri_kd = 1.0f * s;
  mat.edge_ke = 0.05f * s * std::sqrt(s);  // bending stiffness ~ ke / h: one more power of h
  float cell = 2.0f / float(n);
  mat33<float> rot = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({-1, 1, -1}, rot, n, n, cell, 0.1f * 16 * 16 / float(n * n), {}, mat, true, 0.3f * cell);
  b.add_sphere({0, 0.5f, 0}, 0.4f);
  b.add_ground();
  b.settings().tri_lift = 1;
  b.settings().tri_drag = 0.5f;
  b.settings().contact_ke = 1e3f * s;
  b.settings().contact_kd = 1.0f * s;
  b.settings().contact_kf = 1.0f * s;
  return std::move(b.finalize().value());
}

ModelT<float> soft() {
  // 20 x 10 x 10 cells x 5 = 10000 tets
  ModelBuilderT<float> b;
  SoftMaterial<float> mat;
  mat.mu = 2e4f;
  mat.lambda = 4e4f;
  mat.kd = 10;
  b.add_soft_grid({-1.0f, 0.05f, -0.5f}, 20, 10, 10, 0.1f, {0.5f, 0, 0}, mat);
  b.add_ground();
  return std::move(b.finalize().value());
}

const ModelT<float>& model_for(int n) {
  static std::map<int, ModelT<float>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, n > 0 ? cloth(n) : soft()).first;
  return it->second;
}

struct Row {
  double fwd_s = 0, bwd_s = 0, fwd1_s = 0;
  int particles = 0, elements = 0;
  double mem_all = 0, mem_ckpt = 0, t_all = 0, t_ckpt = 0;
  int mem_T = 0;
};
std::map<int, Row>& rows() {
  static std::map<int, Row> r;
  return r;
}

constexpr float kDt = 1.0f / 240;
constexpr int kSub = 4;

// one step forward, the given thread count
void BM_Forward(benchmark::State& st) {
  int n = int(st.range(0)), threads = int(st.range(1));
  const ModelT<float>& m = model_for(n);
  SolverT<float> solver({kSub, threads, false});
  StateT<float> a = m.make_state(), b;
  ControlT<float> c = m.make_control();
  Status status;
  int k = 0;
  for (auto _ : st) {
    if (k % 400 == 0) {  // restart every 400 steps, so the cloth keeps falling onto the sphere
      st.PauseTiming();
      a = m.make_state();
      st.ResumeTiming();
    }
    status = solver.step(m, a, b, c, kDt);
    std::swap(a, b);
    ++k;
  }
  if (!status || !check_state_finite(a, "benchmark state")) st.SkipWithError("simulation blew up");
  Row& r = rows()[n];
  r.particles = m.particle_count();
  r.elements = n > 0 ? m.tri_count() : m.tet_count();
  st.counters["steps/s"] = benchmark::Counter(double(st.iterations()), benchmark::Counter::kIsRate);
  st.SetLabel(n > 0 ? "cloth " + std::to_string(n) + "x" + std::to_string(n) : "soft body " + std::to_string(m.tet_count()) + " tets");
}

// one step_adjoint (includes its recompute of the substeps)
void BM_Backward(benchmark::State& st) {
  int n = int(st.range(0)), threads = int(st.range(1));
  const ModelT<float>& m = model_for(n);
  SolverT<float> solver({kSub, threads, false});
  StateT<float> a = m.make_state(), b, adj = m.make_state(), adj_in;
  ControlT<float> c = m.make_control(), gc = m.make_control();
  ModelGradT<float> gm = m.make_grad();
  solver.step(m, a, b, c, kDt);
  for (auto& v : adj.particle_q) v = {0, 1, 0};
  for (auto _ : st) solver.step_adjoint(m, b, c, kDt, adj, adj_in, gc, gm);
  st.counters["steps/s"] = benchmark::Counter(double(st.iterations()), benchmark::Counter::kIsRate);
}

void BM_Rollout(benchmark::State& st) {
  int n = int(st.range(0)), k = int(st.range(1)), T = int(st.range(2));
  const ModelT<float>& m = model_for(n);
  std::size_t peak = 0;
  for (auto _ : st) {
    RolloutT<float> r(m, {.steps = T, .dt = kDt, .substeps = kSub, .checkpoint_every = k, .control_grads = false});
    Status s1 = r.forward(m.make_state());
    Status s2 = s1 ? r.backward([&](int t, const StateT<float>&, StateT<float>& adj) {
      if (t == T) adj.particle_q[m.particle_count() - 1].y += 1;
    }) : s1;
    if (!s2) st.SkipWithError(s2.message().c_str());
    peak = r.peak_state_bytes();
  }
  st.counters["peak_MiB"] = double(peak) / (1 << 20);
}

void summarize(const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  // repetitions: keep the fastest (the machine is shared); aggregates are skipped
  auto keep_min = [](double& slot, double v) { slot = (slot > 0 && slot < v) ? slot : v; };
  for (const auto& run : runs) {
    if (run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate || run.error_occurred) continue;
    std::string name = run.benchmark_name();
    int a = 0, b = 0, c = 0;
    double sec = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    if (std::sscanf(name.c_str(), "BM_Forward/%d/%d", &a, &b) == 2) {
      keep_min(b == 1 ? rows()[a].fwd1_s : rows()[a].fwd_s, sec);
    } else if (std::sscanf(name.c_str(), "BM_Backward/%d/%d", &a, &b) == 2) {
      keep_min(rows()[a].bwd_s, sec);
    } else if (std::sscanf(name.c_str(), "BM_Rollout/%d/%d/%d", &a, &b, &c) == 3) {
      Row& r = rows()[a];
      r.mem_T = c;
      double mib = run.counters.count("peak_MiB") ? double(run.counters.at("peak_MiB")) : 0;
      // checkpoint overhead from CPU time: robust when the machine is shared
      double cpu = run.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      if (b == 1) {
        r.mem_all = mib;
        r.t_all = cpu;
      } else {
        r.mem_ckpt = mib;
        r.t_ckpt = cpu;
      }
    }
  }
}

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    summarize(runs);
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
    if (std::strcmp(argv[i], "--scene") == 0) return adj::bench::run_task_timing(argc, argv);
  }
  std::vector<int> sizes = smoke ? std::vector<int>{16} : std::vector<int>{16, 32, 64, 128, -1};
  for (int n : sizes) {
    benchmark::RegisterBenchmark("BM_Forward", BM_Forward)->Args({n, 2})->Unit(benchmark::kMillisecond)->MinTime(smoke ? 0.01 : 0.3)->Repetitions(smoke ? 1 : 3);
    benchmark::RegisterBenchmark("BM_Backward", BM_Backward)->Args({n, 2})->Unit(benchmark::kMillisecond)->MinTime(smoke ? 0.01 : 0.3)->Repetitions(smoke ? 1 : 3);
  }
  if (!smoke) {
    benchmark::RegisterBenchmark("BM_Forward", BM_Forward)->Args({128, 1})->Unit(benchmark::kMillisecond)->MinTime(0.3)->Repetitions(3);
    for (int n : {16, 32, 64, 128})
      for (int k : {1, 0})
        benchmark::RegisterBenchmark("BM_Rollout", BM_Rollout)->Args({n, k, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
  } else {
    for (int k : {1, 0})
      benchmark::RegisterBenchmark("BM_Rollout", BM_Rollout)->Args({16, k, 20})->Unit(benchmark::kMillisecond)->Iterations(1);
  }
  // google benchmark rejects our own flag
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i)
    if (std::strcmp(argv[i], "--smoke") != 0) args.push_back(argv[i]);
  int n_args = int(args.size());
  benchmark::Initialize(&n_args, args.data());
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf("\nsummary (dt = 1/240 s, %d substeps; state memory: rollout checkpoints + segment)\n", kSub);
  std::printf("%-22s %9s %9s %12s %10s %10s %14s %14s %12s\n", "scene", "particles", "elements", "fwd steps/s",
              "bwd/fwd", "2thr/1thr", "mem K=1 [MiB]", "mem K=sqrt [MiB]", "ckpt time");
  for (auto& [n, r] : rows()) {
    std::string name = n > 0 ? "cloth " + std::to_string(n) + "x" + std::to_string(n) : "soft body (tets)";
    char speed[32] = "-", mem1[32] = "-", mem2[32] = "-", tr[32] = "-";
    if (r.fwd1_s > 0) std::snprintf(speed, sizeof speed, "%.2fx", r.fwd1_s / r.fwd_s);
    if (r.mem_T) {
      std::snprintf(mem1, sizeof mem1, "%.2f", r.mem_all);
      std::snprintf(mem2, sizeof mem2, "%.2f", r.mem_ckpt);
      std::snprintf(tr, sizeof tr, "%.2fx", r.t_ckpt / r.t_all);
    }
    std::printf("%-22s %9d %9d %12.1f %10.2f %10s %14s %14s %12s\n", name.c_str(), r.particles, r.elements,
                r.fwd_s > 0 ? 1.0 / r.fwd_s : 0.0, r.fwd_s > 0 ? r.bwd_s / r.fwd_s : 0.0, speed, mem1, mem2, tr);
  }
  if (!rows().empty() && rows().begin()->second.mem_T)
    std::printf("(memory and checkpoint time (CPU time, K=sqrt / K=1) measured with T = %d rollouts, forward + backward)\n",
                rows().begin()->second.mem_T);
  benchmark::Shutdown();
  return 0;
}
