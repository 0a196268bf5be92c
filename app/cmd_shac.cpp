// `adjoint optimize SCENE --task T --method shac`: a policy task trained as SHAC does it
// (engine/optim/shac.h BatchShacTrainerT: windows of frames over many randomized copies,
// a learned critic for each window's end), configured by the task's "shac" block over
// BatchShacOptions' defaults (the cartpole swing-up's settings). `--method ahac` is the same
// run with AHAC's adaptive horizon and double critic (engine/optim/ahac.h, the "ahac" block). Checkpoints
// (--checkpoint-dir, --resume) carry the whole training state, and under mpirun the ranks share the copies; rank 0
// prints and writes.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>

#include "app/cmd_optimize.h"
#include "app/run_checkpoint.h"
#include "app/scene_task.h"
#include "app/serve/publish.h"
#include "app/serve/run_server.h"
#include "engine/optim/checkpoint.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"

namespace adj::app {

namespace {

// where the windows' time went, each part's mean per window [ms] (optim::ShacWindowTimes; the
// copies' parts are summed over the threads that ran them) and the evaluation episodes'
nlohmann::json window_times(const optim::ShacWindowTimes& t, double evaluation, int windows) {
  const double f = 1e3 / std::max(windows, 1);
  return {{"rollout", t.rollout * f},
          {"sim_forward", t.sim_forward * f},
          {"sim_backward", t.sim_backward * f},
          {"policy_forward", t.policy_forward * f},
          {"policy_backward", t.policy_backward * f},
          {"observe", t.observe * f},
          {"end_value", t.end_value * f},
          {"idle", t.idle * f},
          {"actor_step", t.actor_step * f},
          {"critic_targets", t.critic_targets * f},
          {"critic_fit", t.critic_fit * f},
          {"statistics", t.statistics * f},
          {"evaluation", evaluation * f}};
}

void print_window_times(const nlohmann::json& ms) {
  auto v = [&](const char* k) { return ms[k].get<double>(); };
  std::printf(
      "time per window [ms]: rollout %.1f (over the threads: sim forward %.1f, sim backward %.1f, policy forward %.1f, "
      "policy backward %.1f, observations %.1f, end values %.1f, idle %.1f), actor step %.1f, critic targets %.1f, "
      "critic fit %.1f, statistics %.1f, evaluation %.1f\n",
      v("rollout"), v("sim_forward"), v("sim_backward"), v("policy_forward"), v("policy_backward"), v("observe"),
      v("end_value"), v("idle"), v("actor_step"), v("critic_targets"), v("critic_fit"), v("statistics"),
      v("evaluation"));
}

// exit code 1, after printing what failed, prefixed by who (the scene, and the rank under mpirun)
int fail_as(const std::string& who, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", who.c_str(), what.c_str());
  return 1;
}

// what the parts of one `adjoint optimize --method shac|ahac` run share
struct ShacCommandRun {
  const OptimizeOptions& o;
  dist::Communicator& comm;
  const scene::Scene& doc;
  const scene::CompiledScene& cs;
  const scene::Task& task;
  const optim::ShacTaskSettings& ts;
  optim::BatchShacTrainerT<float>& shac;
  std::string who;   // the scene, and the rank under mpirun
  bool lead = true;  // rank 0: it prints, evaluates, serves and writes
  std::string ckpt_dir;
  int ckpt_every = 0;
  nlohmann::json identity;
  RunTotals totals;
  RunServer* serving = nullptr;
  std::vector<StateT<float>> eval_states;  // the evaluation episode, frame by frame (published)
  optim::ShacWindowTimes times;            // summed over the windows trained here
  double eval_seconds = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  const char* method() const { return ts.ahac ? "ahac" : "shac"; }
  double wall() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  int fail(const std::string& what) const { return fail_as(who, what); }
};

// the run's first lines and the table's header (rank 0)
void print_header(const ShacCommandRun& r) {
  const optim::BatchShacOptions& so = r.shac.options();  // the window length the trainer uses
  std::printf("%s / %s: %s, %d copies, windows of %s%d frames, %d windows, seed %llu\n", r.doc.name.c_str(),
              r.task.name.c_str(), r.ts.ahac ? "AHAC" : "SHAC", r.ts.envs, r.ts.ahac ? "up to " : "", so.window,
              r.ts.windows, static_cast<unsigned long long>(r.ts.seed));
  if (r.ts.ahac)
    std::printf("AHAC: windows cut where the contact forces' norm passes %g N, horizon %d..%d frames, %s\n",
                so.ahac.contact_threshold, so.ahac.horizon_min, so.window,
                so.ahac.double_critic ? "two critics (the smaller return)" : "one critic");
  if (r.comm.size() > 1) std::printf("%d MPI ranks share the copies (rank 0 prints)\n", r.comm.size());
  if (!r.o.resume.empty()) std::printf("resumed from %s at window %d\n", r.o.resume.c_str(), r.shac.iteration());
  // per row: control steps (frames over all copies) and wall time so far, the window's mean frame
  // cost, the evaluation episode's mean frame cost and its return (minus its summed costs: for
  // reward terms, the summed reward over the task's horizon, as the papers report it)
  // AHAC adds the horizon after the window [frames] and the copies stiff contact cut in it
  // and the training return: the mean return of the last 100 training episodes that ended
  // (stochastic policy, randomized starts; "-" before the first), as SHAC's and AHAC's papers plot
  std::printf("%6s %12s %9s %12s %12s %12s %12s %8s %8s%s\n", "window", "ctrl steps", "wall [s]", "mean cost",
              "eval cost", "eval return", "train return", "ended", "skipped", r.ts.ahac ? "  horizon      cut" : "");
}

// window k's evaluation episode (rank 0): a printed and logged row, and a viewer's snapshot
// (the evaluation episode and the training copies' last window) when one is due
Status evaluate_window(ShacCommandRun& r, int k, const optim::BatchShacStats& st, bool row, bool publishes,
                       nlohmann::json& record) {
  const double wall = r.wall();
  r.eval_states.clear();
  auto keep_state = [&](int, const optim::PolicyEnvT<float>& env) { r.eval_states.push_back(env.state(0)); };
  auto e = publishes ? r.shac.evaluate(keep_state) : r.shac.evaluate();
  if (!e) return e.status();
  // an evaluation episode whose step failed ended there (its return so far): said, logged, and
  // the training goes on
  const std::string& failed = r.shac.evaluation_failure();
  if (!failed.empty()) {
    std::fprintf(stderr, "%s: window %d: %s\n", r.o.scene_path.c_str(), k, failed.c_str());
    record["eval_failure"] = failed;
  }
  r.eval_seconds += r.wall() - wall;
  const long long steps = st.sim_steps / std::max(r.cs.substeps, 1);
  const double ret = -double(*e) * r.task.horizon;
  if (row) {
    char train[32] = "-";
    if (st.train_episodes > 0) std::snprintf(train, sizeof train, "%.6g", st.train_return);
    std::printf("%6d %12lld %9.1f %12.6g %12.6g %12.6g %12s %8d %8d", k, steps, wall, st.mean_cost, double(*e), ret,
                train, r.totals.ended, st.skipped_windows);
    if (r.ts.ahac) std::printf(" %8.2f %8d", st.horizon, st.contact_cut);
    std::printf("\n");
    std::fflush(stdout);
    r.totals.rows.push_back({{"window", k},
                             {"control_steps", steps},
                             {"wall_s", wall},
                             {"mean_cost", st.mean_cost},
                             {"eval_cost", double(*e)},
                             {"eval_return", ret},
                             {"train_episodes", st.train_episodes},
                             {"sim_steps", st.sim_steps},
                             {"episodes_ended", r.totals.ended},
                             {"skipped_windows", st.skipped_windows}});
    if (st.train_episodes > 0) r.totals.rows.back()["train_return"] = st.train_return;
    if (!failed.empty()) r.totals.rows.back()["eval_failure"] = failed;
    if (r.ts.ahac)
      r.totals.rows.back().update({{"horizon", st.horizon},
                                   {"dual", st.dual},
                                   {"contact_cut", st.contact_cut},
                                   {"contact_mean", st.contact_mean}});
  }
  record.update(
      {{"eval_cost", double(*e)}, {"eval_return", ret}, {"wall_s", wall}, {"episodes_ended", r.totals.ended}});
  if (publishes) {
    RunSnapshot shot = rollout_snapshot(k, r.shac.weights(), r.eval_states, &r.cs.model);
    add_worlds(shot, r.shac.copy_frames());
    r.serving->snapshot(std::move(shot));
  }
  return Status::ok();
}

// a checkpoint after window k (collective: every rank's copies)
Status write_checkpoint(ShacCommandRun& r, int k, nlohmann::json& record) {
  optim::Checkpoint ck;
  Status s = r.shac.save(ck);
  if (s) s = write_run_checkpoint(r.ckpt_dir, r.identity, r.totals, ck, r.comm);
  if (!s) return s;
  if (r.lead) std::printf("checkpoint after window %d written to %s\n", k, r.ckpt_dir.c_str()), std::fflush(stdout);
  record["checkpoint_window"] = k;  // viewers list the run's checkpoints
  record["checkpoint_dir"] = r.ckpt_dir;
  return Status::ok();
}

// after the last window trained here: the timings, the final evaluation, the viewers' end and
// the --log (rank 0)
int finish_run(ShacCommandRun& r, int trained, bool stopped_after, double comm0, long long bytes0) {
  const double wall = r.wall();
  if (r.lead && trained > 0) {
    std::printf("%d windows in %.3f s: %.3f windows/s\n", trained, wall, trained / wall);
    print_window_times(window_times(r.times, r.eval_seconds, trained));
    if (r.comm.size() > 1)
      std::printf("MPI: %d ranks, %.3f ms per window in communication, %.0f bytes received per window (rank 0)\n",
                  r.comm.size(), 1e3 * (r.comm.seconds() - comm0) / trained,
                  double(r.comm.bytes_received() - bytes0) / trained);
  }
  if (!r.lead) return 0;
  std::printf("final weights fingerprint %016llx\n", static_cast<unsigned long long>(r.shac.fingerprint()));
  if (stopped_after)
    std::printf("stopped after %d windows (--stop-after); continue with --resume %s\n", trained, r.ckpt_dir.c_str());
  auto last = r.shac.evaluate();
  if (!last) return r.fail(last.status().message());
  if (r.shac.iteration() == r.ts.windows)
    std::printf("the policy's mean frame cost: %.6g -> %.6g\n", r.totals.first, double(*last));
  if (r.serving)
    r.serving->end({{"status", r.shac.iteration() < r.ts.windows ? "stopped" : "finished"},
                    {"iterations", r.shac.iteration()},
                    {"final_cost", double(*last)}});
  if (!r.o.log.empty()) {
    std::ofstream f(r.o.log);
    f << nlohmann::json{{"scene", r.doc.name},
                        {"task", r.task.name},
                        {"windows", r.totals.rows},
                        {"time_per_window_ms", window_times(r.times, r.eval_seconds, trained)}}
             .dump(1)
      << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", r.o.log.c_str()), 1;
  }
  return 0;
}

}  // namespace

int run_shac(const OptimizeOptions& o) {
  dist::LocalCommunicator alone;
  dist::Communicator& comm = o.comm ? *o.comm : alone;
  const std::string who = comm.size() > 1 ? o.scene_path + " (rank " + std::to_string(comm.rank()) + ")" : o.scene_path;
  auto fail = [&](const std::string& what) { return fail_as(who, what); };
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Task& task = loaded->task;
  const int windows = o.iterations >= 0 ? o.iterations : task.optimizer.iterations;
  const int threads = std::max(o.threads, 0);
  const optim::ShacTaskSettings ts{.envs = optim::shac_envs(task, o.shac_envs_given ? o.shac_envs : 0),
                                   .windows = windows,
                                   .seed = o.seed >= 0 ? std::uint64_t(o.seed) : task.seed,
                                   .thread_count = threads,
                                   .comm = &comm,
                                   .fingerprint_every = o.fingerprint_every,
                                   .ahac = o.method == "ahac"};
  auto made = optim::make_task(loaded->cs, task, {.thread_count = threads});
  if (!made) return fail(made.status().message());
  auto shac = optim::make_shac_trainer(**made, ts);
  if (!shac) return fail(shac.status().message());
  ShacCommandRun r{o, comm, loaded->doc, loaded->cs, task, ts, *shac, who};
  r.lead = comm.rank() == 0;
  if (Status st = checkpoint_plan(o, r.ckpt_dir, r.ckpt_every); !st) return fail(st.message());
  r.identity = shac_run_identity(r.doc.name, task.name, windows, ts.seed, r.method());
  if (!o.resume.empty()) {
    auto ck = read_run_checkpoint(o.resume, r.identity, comm, r.totals);
    if (!ck) return fail(ck.status().message());
    if (Status st = shac->load(*ck); !st) return fail(st.message());
  } else if (r.lead) {
    auto first = shac->evaluate();
    if (!first) return fail(first.status().message());
    r.totals.first = double(*first);
  }
  if (comm.rank() == o.perturb_rank) {  // tests: a replica that computed other bits
    std::vector<float> w = shac->weights();
    w[0] += 0.01f;  // (one ulp can vanish in the first Adam step's rounding)
    shac->set_weights(std::move(w));
  }
  if (r.lead) print_header(r);
  r.t0 = std::chrono::steady_clock::now();
  const double comm0 = comm.seconds();
  const long long bytes0 = comm.bytes_received();
  const int begin = shac->iteration();
  // viewers (--serve): under mpirun rank 0 serves, and what a viewer asks of it (stop, a
  // checkpoint) reaches every rank through a broadcast each window, so the ranks stay together
  const bool served = !o.serve.address.empty();
  ServeOptions serve = o.serve;
  serve.checkpoints = r.ckpt_every > 0;
  if (!r.lead) serve.address.clear();
  auto server = open_serve(serve, serve_hello(o.scene_path, r.method(),
                                              {{"task", task.name},
                                               {"windows", windows},
                                               {"envs", ts.envs},
                                               {"window", shac->options().window},
                                               {"worlds", o.serve.worlds},
                                               {"seed", ts.seed},
                                               {"ranks", comm.size()}}));
  if (!server) return 1;
  r.serving = server->get();
  auto agreed = [&](bool mine) { return agreed_by_ranks(comm, served, mine); };
  std::optional<InterruptGuard> ctrl_c;
  if (comm.size() == 1) ctrl_c.emplace();  // under mpirun, Ctrl+C ends the job (OpenMPI): the last checkpoint stays
  int trained = 0;
  bool stopped = false;
  for (int k = begin; k < windows && !stopped; ++k) {
    auto stop = agreed(r.serving && r.serving->hold());
    if (!stop) return fail(stop.status().message());
    if (*stop) {
      if (r.lead) std::printf("stopped by a viewer after %d windows\n", k);
      break;
    }
    // a row (and its evaluation episode) every 10 windows; a viewer's snapshot every --serve-every
    // windows, with an evaluation episode of its own (evaluations change nothing the training
    // computes); the windows that publish keep the first training copies' frames (--serve-worlds)
    const bool row = k % 10 == 9 || k + 1 == windows;
    const bool publishes = r.serving && (r.serving->snapshot_due(k) || k + 1 == windows);
    shac->keep_copy_frames(publishes ? o.serve.worlds : 0);
    auto st = shac->step();
    if (!st) return fail("window " + std::to_string(k) + ": " + st.status().message());
    ++trained;
    r.times += st->time;
    if (comm.rank() == o.kill_rank) std::raise(SIGKILL);  // tests: a rank that dies
    if (st->skipped && r.lead) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), st->skip_reason.c_str());
    r.totals.ended += st->terminated;
    nlohmann::json record{{"iteration", k},
                          {"loss", st->mean_cost},
                          {"grad_norm", st->grad_norm},
                          {"sim_steps", st->sim_steps},
                          {"skipped", st->skipped},
                          {"skipped_windows", st->skipped_windows}};
    if (st->train_episodes > 0) record["train_return"] = st->train_return;
    if (r.lead && (row || publishes))
      if (Status s = evaluate_window(r, k, *st, row, publishes, record); !s) return fail(s.message());
    const bool interrupted = ctrl_c && InterruptGuard::requested();
    stopped = interrupted || (o.stop_after > 0 && trained == o.stop_after);
    auto asked = agreed(r.serving && r.serving->checkpoint_requested());  // a viewer's checkpoint request
    if (!asked) return fail(asked.status().message());
    if (r.ckpt_every > 0 && ((k + 1) % r.ckpt_every == 0 || k + 1 == windows || stopped || *asked))
      if (Status s = write_checkpoint(r, k, record); !s) return fail(s.message());
    if (r.serving) r.serving->iteration(std::move(record));
    if (interrupted && r.lead) std::printf("stopped by Ctrl+C after window %d\n", k);
  }
  const bool interrupted = ctrl_c && InterruptGuard::requested();
  const int rc = finish_run(r, trained, stopped && !interrupted, comm0, bytes0);
  return rc == 0 && interrupted ? 130 : rc;
}

}  // namespace adj::app
