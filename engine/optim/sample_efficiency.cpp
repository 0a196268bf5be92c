#include "engine/optim/sample_efficiency.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/optim/pods.h"
#include "engine/optim/shac.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"

namespace adj::optim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string row_line(const SampleEfficiencyRow& r) {
  char buf[256];
  char steps[32] = "not reached", secs[32] = "-";
  if (r.steps_to_target >= 0) {
    std::snprintf(steps, sizeof steps, "%lld", r.steps_to_target);
    std::snprintf(secs, sizeof secs, "%.2f", r.seconds_to_target);
  }
  std::snprintf(buf, sizeof buf, "%-6s %5llu %10.4f %14s %9s %12lld %9.2f\n", r.method.c_str(),
                (unsigned long long)r.seed, r.best_progress, steps, secs, r.steps_run, r.seconds_run);
  return buf;
}

// PPO until its evaluation reaches the target progress or the step budget is spent;
// progress = -(mean frame cost) x `frames` (1: the mean frame cost; the horizon: the
// episode's summed costs, for a distance term the distance travelled)
Result<SampleEfficiencyRow> ppo_row(PpoTrainer& ppo, std::uint64_t seed, long long max_steps, double target,
                                    double frames) {
  SampleEfficiencyRow r;
  r.method = "PPO";
  r.seed = seed;
  r.best_progress = -1e300;
  auto t0 = Clock::now();
  while (ppo.sim_steps() < max_steps) {
    Result<PpoIteration> it = ppo.iterate();
    if (!it) return Status::error("sample efficiency, PPO seed " + std::to_string(seed) + ": " + it.status().message());
    Result<double> l = ppo.evaluate();
    if (!l) break;
    const double progress = -l.value() * frames;
    r.best_progress = std::max(r.best_progress, progress);
    if (progress >= target) {
      r.steps_to_target = ppo.sim_steps();
      r.seconds_to_target = seconds_since(t0);
      break;
    }
  }
  r.steps_run = ppo.sim_steps();
  r.seconds_run = seconds_since(t0);
  return r;
}

// a fixed target cost (opt.target_cost > 0): progress = -(mean frame cost); target = -target_cost
Result<SampleEfficiencyTable> run_to_cost(const scene::Scene& sc, const scene::Task& found,
                                          const scene::CompiledSceneT<double>& cs, const std::string& base_dir,
                                          const SampleEfficiencyOptions& opt,
                                          const std::function<void(const std::string&)>& progress) {
  SampleEfficiencyTable table;
  table.scene = sc.name;
  table.task = found.name;
  table.horizon = found.horizon;
  table.substeps = cs.substeps;
  table.target = -opt.target_cost;
  const long long episode_steps = (long long)found.horizon * cs.substeps;
  auto report = [&](const SampleEfficiencyRow& r) {
    table.rows.push_back(r);
    if (progress) progress(row_line(r));
  };
  PolicyEnvOptions randomized = training_starts(found, opt.rigid_envs);  // the task's, unless overridden
  if (opt.start_q_range >= 0) randomized.q_range = opt.start_q_range;
  if (opt.start_qd_range >= 0) randomized.qd_range = opt.start_qd_range;
  // full-horizon BPTT through the closed loop (the task runner), its loss = the mean frame cost
  for (std::uint64_t seed : opt.seeds) {
    if (!opt.runs("BPTT")) break;
    scene::Task task = found;
    task.seed = seed;
    auto runner = make_task(cs, task);
    if (!runner) return runner.status();
    TaskT<double>& bptt = **runner;
    SampleEfficiencyRow r;
    r.method = "BPTT";
    r.seed = seed;
    r.best_progress = -1e300;
    auto t0 = Clock::now();
    int done = 0;  // iterations that ran
    for (int k = 0; k < opt.bptt_iterations; ++k) {
      Result<IterationStats> it = bptt.iterate();
      if (!it) break;
      ++done;
      r.best_progress = std::max(r.best_progress, -it->loss);
      if (-it->loss >= table.target) {
        r.steps_to_target = 2 * episode_steps * done;
        r.seconds_to_target = seconds_since(t0);
        break;
      }
    }
    r.steps_run = 2 * episode_steps * done;
    r.seconds_run = seconds_since(t0);
    report(r);
  }
  // SHAC with a critic, evaluated every 4 windows; in float, as the swing-up test and
  // `adjoint optimize --shac` run it (training is chaotic: float and double runs differ)
  if (opt.shac_window > 0 && opt.runs("SHAC")) {
    Result<scene::CompiledSceneT<float>> csf = scene::compile<float>(sc, base_dir);
    if (!csf) return csf.status();
    for (std::uint64_t seed : opt.seeds) {
      scene::Task task = found;
      task.seed = seed;
      auto ft = make_task(*csf, task);
      if (!ft) return ft.status();
      BatchShacOptions so;  // the defaults: the swing-up test's settings
      so.window = opt.shac_window;
      so.lr_decay_windows = opt.rigid_shac_windows;
      so.seed = seed;
      auto shac = BatchShacTrainerT<float>::create(**ft, so, randomized);
      if (!shac) return shac.status();
      SampleEfficiencyRow r;
      r.method = "SHAC";
      r.seed = seed;
      r.best_progress = -1e300;
      auto t0 = Clock::now();
      for (int k = 0; k < opt.rigid_shac_windows; ++k) {
        if (!shac->step()) break;
        if (k % 4 != 3) continue;
        Result<float> l = shac->evaluate();
        if (!l) break;
        r.best_progress = std::max(r.best_progress, -double(l.value()));
        if (-double(l.value()) >= table.target) {
          r.steps_to_target = 2 * shac->sim_steps();
          r.seconds_to_target = seconds_since(t0);
          break;
        }
      }
      r.steps_run = 2 * shac->sim_steps();
      r.seconds_run = seconds_since(t0);
      report(r);
    }
  }
  // PODS-1 and PODS-2 from the same randomized states (H v products counted in their steps)
  for (int order = 1; order <= 2 && opt.pods_iterations > 0; ++order)
    for (std::uint64_t seed : opt.seeds) {
      if (!opt.runs(order == 1 ? "PODS-1" : "PODS-2")) break;
      scene::Task task = found;
      task.seed = seed;
      auto pt = make_task(cs, task);
      if (!pt) return pt.status();
      PodsOptions po = opt.pods;
      po.order = order;
      po.batch = opt.pods_batch > 0 ? opt.pods_batch : opt.rigid_envs;
      auto pods = PodsTrainerT<double>::create(**pt, po, randomized);
      if (!pods) return pods.status();
      SampleEfficiencyRow r;
      r.method = order == 1 ? "PODS-1" : "PODS-2";
      r.seed = seed;
      r.best_progress = -1e300;
      auto t0 = Clock::now();
      for (int k = 0; k < opt.pods_iterations; ++k) {
        if (!pods->step()) break;
        Result<double> l = pods->evaluate();
        if (!l) break;
        r.best_progress = std::max(r.best_progress, -l.value());
        if (-l.value() >= table.target) {
          r.steps_to_target = pods->sim_steps();
          r.seconds_to_target = seconds_since(t0);
          break;
        }
      }
      r.steps_run = pods->sim_steps();
      r.seconds_run = seconds_since(t0);
      report(r);
    }
  // PPO from the same randomized states
  for (std::uint64_t seed : opt.seeds) {
    if (!opt.runs("PPO")) break;
    scene::Task task = found;
    task.seed = seed;
    auto dt = make_task(cs, task);
    if (!dt) return dt.status();
    PpoOptions po = opt.rigid_ppo;
    po.seed = seed;
    po.lr_anneal_steps = opt.ppo_max_steps;
    PolicyEnvOptions copies = randomized;
    copies.env_count = opt.rigid_ppo_envs;
    auto ppo = PpoTrainer::create(**dt, po, copies);
    if (!ppo) return ppo.status();
    auto r = ppo_row(*ppo, seed, opt.ppo_max_steps, table.target, 1.0);
    if (!r) return r.status();
    report(*r);
  }
  return table;
}

}  // namespace

double SampleEfficiencyTable::step_ratio() const {
  std::vector<double> g, p;
  const std::string ref = gradient_method();
  for (const SampleEfficiencyRow& r : rows) {
    if (r.method == ref && r.steps_to_target >= 0) g.push_back(double(r.steps_to_target));
    if (r.method == "PPO") p.push_back(double(r.steps_to_target >= 0 ? r.steps_to_target : r.steps_run));
  }
  double mg = median(g);
  return mg > 0 ? median(p) / mg : 0;
}

std::string SampleEfficiencyTable::gradient_method() const {
  for (const SampleEfficiencyRow& r : rows)
    if (r.method == "BPTT" && r.steps_to_target >= 0) return "BPTT";
  return "SHAC";
}

std::string SampleEfficiencyTable::format() const {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "sample efficiency: %s / %s, %d frames x %d substeps, target progress %.4f\n",
                scene.c_str(), task.c_str(), horizon, substeps, target);
  s += buf;
  std::snprintf(buf, sizeof buf, "%-6s %5s %10s %14s %9s %12s %9s\n", "method", "seed", "best", "steps to tgt",
                "s to tgt", "steps run", "s run");
  s += buf;
  for (const SampleEfficiencyRow& r : rows) s += row_line(r);
  bool lower_bound = false;
  for (const SampleEfficiencyRow& r : rows) lower_bound |= r.method == "PPO" && r.steps_to_target < 0;
  std::snprintf(buf, sizeof buf,
                "PPO / %s median simulator steps to the target: %s%.1fx (gradient steps include the adjoint)\n",
                gradient_method().c_str(), lower_bound ? ">= " : "", step_ratio());
  s += buf;
  return s;
}

Result<SampleEfficiencyTable> run_sample_efficiency(const scene::Scene& sc, const std::string& base_dir,
                                                    const SampleEfficiencyOptions& opt,
                                                    const std::function<void(const std::string&)>& progress) {
  const scene::Task* found = sc.find_task(opt.task);
  if (!found) return Status::error("sample efficiency: scene \"" + sc.name + "\" has no task \"" + opt.task + "\"");
  if (!found->has_policy) return Status::error("sample efficiency: task '" + found->name + "' has no policy");
  if (opt.seeds.empty() || opt.bptt_iterations < 1)
    return Status::error("sample efficiency: needs at least one seed and one BPTT iteration");
  Result<scene::CompiledSceneT<double>> cs = scene::compile<double>(sc, base_dir);
  if (!cs) return cs.status();
  // a fixed target cost: SHAC with a critic from randomized starts against PPO; else the
  // target follows full-horizon BPTT
  if (opt.target_cost > 0) return run_to_cost(sc, *found, cs.value(), base_dir, opt, progress);
  SampleEfficiencyTable table;
  table.scene = sc.name;
  table.task = found->name;
  table.horizon = found->horizon;
  table.substeps = cs->substeps;
  const long long episode_steps = (long long)found->horizon * cs->substeps;
  auto report = [&](const SampleEfficiencyRow& r) {
    table.rows.push_back(r);
    if (progress) progress(row_line(r));
  };

  // full-horizon BPTT: the loss of iteration k is that of theta_k, so progress is free to watch
  struct Point {
    double progress, seconds;
  };
  std::vector<std::vector<Point>> bptt_curves;
  double best_sum = 0;
  for (std::uint64_t seed : opt.seeds) {
    scene::Task task = *found;
    task.seed = seed;
    auto runner = make_task(*cs, task);
    if (!runner) return runner.status();
    std::vector<Point> curve;
    auto t0 = Clock::now();
    SampleEfficiencyRow r;
    r.method = "BPTT";
    r.seed = seed;
    for (int k = 0; k < opt.bptt_iterations; ++k) {
      Result<IterationStats> it = (*runner)->iterate();
      if (!it) break;  // a non-finite gradient ends the run; what it reached stands
      curve.push_back({-it->loss, seconds_since(t0)});
      r.best_progress = std::max(r.best_progress, -it->loss);
    }
    r.steps_run = 2 * episode_steps * (long long)curve.size();
    r.seconds_run = seconds_since(t0);
    best_sum += r.best_progress;
    bptt_curves.push_back(curve);
    table.rows.push_back(r);
  }
  table.target = opt.target_fraction * best_sum / double(opt.seeds.size());
  // steps to the target, now that it is known
  std::vector<SampleEfficiencyRow> bptt_rows = table.rows;
  table.rows.clear();
  for (std::size_t s = 0; s < bptt_rows.size(); ++s) {
    SampleEfficiencyRow r = bptt_rows[s];
    const std::vector<Point>& c = bptt_curves[s];
    for (std::size_t k = 0; k < c.size(); ++k)
      if (c[k].progress >= table.target) {
        r.steps_to_target = 2 * episode_steps * (long long)(k + 1);
        r.seconds_to_target = c[k].seconds;
        break;
      }
    report(r);
  }

  // SHAC windows: progress checked with a mean-action episode after each training episode
  if (opt.shac_window > 0) {
    for (std::uint64_t seed : opt.seeds) {
      scene::Task task = *found;
      task.seed = seed;
      ShacOptions so;
      so.window = opt.shac_window;
      so.lr = opt.shac_lr;
      so.normalize_observations = opt.shac_normalize;
      auto st = make_task(*cs, task);
      if (!st) return st.status();
      Result<ShacTrainerT<double>> shac = ShacTrainerT<double>::create(**st, so);
      if (!shac) return shac.status();
      SampleEfficiencyRow r;
      r.method = "SHAC";
      r.seed = seed;
      r.best_progress = -1e300;
      auto t0 = Clock::now();
      bool failed = false;
      for (int e = 0; e < opt.shac_episodes && !failed; ++e) {
        for (int w = 0; w < shac->windows_per_episode() && !failed; ++w) failed = !shac->step_window();
        Result<double> l = shac->evaluate();
        if (!l || failed) break;
        r.best_progress = std::max(r.best_progress, -l.value());
        if (r.steps_to_target < 0 && -l.value() >= table.target) {
          r.steps_to_target = 2 * shac->sim_steps();
          r.seconds_to_target = seconds_since(t0);
          break;
        }
      }
      r.steps_run = 2 * shac->sim_steps();
      r.seconds_run = seconds_since(t0);
      report(r);
    }
  }

  // PPO on the same network, until the mean action reaches the target or the budget is spent
  for (std::uint64_t seed : opt.seeds) {
    scene::Task task = *found;
    task.seed = seed;
    PpoOptions po = opt.ppo;
    po.seed = seed;
    po.lr_anneal_steps = opt.ppo_max_steps;
    auto pt = make_task(*cs, task);
    if (!pt) return pt.status();
    Result<PpoTrainer> ppo = PpoTrainer::create(**pt, po, {.env_count = opt.ppo_envs});
    if (!ppo) return ppo.status();
    auto r = ppo_row(*ppo, seed, opt.ppo_max_steps, table.target, double(found->horizon));
    if (!r) return r.status();
    report(*r);
  }
  return table;
}

}  // namespace adj::optim
