// fixed-iteration timing of a scene's task (what scripts/bench-newton.sh runs beside Newton):
// each repeat times one forward rollout (Task::evaluate without a gradient) and one forward +
// backward (with the gradient), after one untimed warm-up of each; prints one JSON object with
// the medians, every run, the loss and |dL/dtheta| (so two builds can be checked to agree).
// Then the backward pass alone against the forward it follows: the task's rollout (its
// horizon, dt, substeps and threads) run directly, a forward that keeps what the backward
// reads and the backward from a unit seed on the last state, with every state kept and with
// sqrt(T) checkpoints (the Task's fwd+bwd above also holds its loss and parameter terms)
#include "tests/bench/task_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/grad/rollout.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

std::string join(const std::vector<double>& v) {
  std::string s = "[";
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.3f", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

using clock = std::chrono::steady_clock;

double ms_since(clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); }

// each repeat: one forward keeping the backward's records, then the backward; every run's ms
struct RolloutRuns {
  std::vector<double> fwd, bwd;
};

RolloutRuns time_rollout(const scene::CompiledSceneT<float>& cs, int horizon, int threads, int checkpoint_every,
                         int repeats) {
  RolloutT<float> r(cs.model, {.steps = horizon,
                               .dt = cs.frame_dt,
                               .substeps = cs.substeps,
                               .checkpoint_every = checkpoint_every,
                               .thread_count = threads});
  const StateT<float> s0 = cs.model.make_state();
  StateT<float> seed = cs.model.make_state();
  seed.zero();
  for (auto& q : seed.particle_q) q = {0.1f, 1.0f, -0.2f};
  const auto seed_last = [&](int t, const StateT<float>&, StateT<float>& adj) {
    if (t == horizon) adj = seed;
  };
  RolloutRuns runs;
  for (int k = -1; k < repeats; ++k) {  // k = -1: untimed warm-up
    auto t0 = clock::now();
    Status st = r.forward(s0, {}, {}, /*for_backward=*/true);
    const double f = ms_since(t0);
    t0 = clock::now();
    if (st) st = r.backward(seed_last);
    const double b = ms_since(t0);
    if (!st) {
      std::fprintf(stderr, "rollout: %s\n", st.message().c_str());
      std::exit(1);
    }
    if (k < 0) continue;
    runs.fwd.push_back(f);
    runs.bwd.push_back(b);
  }
  return runs;
}

}  // namespace

int run_task_timing(int argc, char** argv) {
  std::string path;
  int repeats = 5, threads = 1;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* flag) { return std::strcmp(argv[i], flag) == 0 && i + 1 < argc; };
    if (next("--scene"))
      path = argv[++i];
    else if (next("--repeats"))
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (next("--threads"))
      threads = std::max(1, std::atoi(argv[++i]));
  }
  auto doc = scene::load_scene(path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  auto cs = scene::compile<float>(*doc, std::filesystem::path(path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", path.c_str(), cs.status().message().c_str()), 1;
  const scene::Task* spec = doc->find_task("");
  if (!spec) return std::fprintf(stderr, "%s: the scene has no task\n", path.c_str()), 1;
  auto made = optim::make_task(*cs, *spec, {.thread_count = threads});
  if (!made) return std::fprintf(stderr, "%s\n", made.status().message().c_str()), 1;
  optim::TaskT<float>& task = **made;
  const std::vector<float> theta = task.theta();
  std::vector<float> grad(theta.size());
  auto time_ms = [&](bool with_grad, float& loss) {
    auto t0 = clock::now();
    auto r = task.evaluate(theta, with_grad ? &grad : nullptr);
    double ms = ms_since(t0);
    if (!r) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), r.status().message().c_str());
      std::exit(1);
    }
    loss = *r;
    return ms;
  };
  float loss = 0;
  time_ms(false, loss);  // warm-up: first-touch allocation of every state and scratch array
  time_ms(true, loss);
  std::vector<double> fwd, fwd_bwd;
  for (int k = 0; k < repeats; ++k) {
    fwd.push_back(time_ms(false, loss));
    fwd_bwd.push_back(time_ms(true, loss));
  }
  double g2 = 0;
  for (float g : grad) g2 += double(g) * double(g);
  const int substeps = cs->substeps * spec->horizon;
  const RolloutRuns kept = time_rollout(*cs, spec->horizon, threads, 1, repeats);
  const RolloutRuns sqrt_t = time_rollout(*cs, spec->horizon, threads, 0, repeats);
  std::printf(
      "{\"scene\": \"%s\", \"particles\": %d, \"substeps\": %d, \"threads\": %d, \"fwd_ms\": %.3f, "
      "\"fwd_bwd_ms\": %.3f, \"fwd_runs\": %s, \"fwd_bwd_runs\": %s, \"loss\": %.9g, \"grad_norm\": %.9g, "
      "\"rollout_kept_fwd_runs\": %s, \"rollout_kept_bwd_runs\": %s, \"rollout_sqrt_fwd_runs\": %s, "
      "\"rollout_sqrt_bwd_runs\": %s}\n",
      std::filesystem::path(path).filename().string().c_str(), cs->model.particle_count(), substeps, threads,
      median(fwd), median(fwd_bwd), join(fwd).c_str(), join(fwd_bwd).c_str(), double(loss), std::sqrt(g2),
      join(kept.fwd).c_str(), join(kept.bwd).c_str(), join(sqrt_t.fwd).c_str(), join(sqrt_t.bwd).c_str());
  return 0;
}

}  // namespace adj::bench
