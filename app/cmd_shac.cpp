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

}  // namespace

int run_shac(const OptimizeOptions& o) {
  dist::LocalCommunicator alone;
  dist::Communicator& comm = o.comm ? *o.comm : alone;
  const bool lead = comm.rank() == 0;
  const std::string who = comm.size() > 1 ? o.scene_path + " (rank " + std::to_string(comm.rank()) + ")" : o.scene_path;
  auto fail = [&](const std::string& what) { return std::fprintf(stderr, "%s: %s\n", who.c_str(), what.c_str()), 1; };
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Scene* doc = &loaded->doc;
  const scene::CompiledScene* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  const int windows = o.iterations >= 0 ? o.iterations : task->optimizer.iterations;
  const int threads = std::max(o.threads, 0);
  const int envs = optim::shac_envs(*task, o.shac_envs_given ? o.shac_envs : 0);
  const bool ahac = o.method == "ahac";
  const char* name = ahac ? "AHAC" : "SHAC";
  optim::ShacTaskSettings ts{.envs = envs,
                             .windows = windows,
                             .seed = o.seed >= 0 ? std::uint64_t(o.seed) : task->seed,
                             .thread_count = threads,
                             .comm = &comm,
                             .fingerprint_every = o.fingerprint_every,
                             .ahac = ahac};
  auto made = optim::make_task(*cs, *task, {.thread_count = threads});
  if (!made) return fail(made.status().message());
  auto shac = optim::make_shac_trainer(**made, ts);
  if (!shac) return fail(shac.status().message());
  std::string ckpt_dir;
  int ckpt_every = 0;
  if (Status st = checkpoint_plan(o, ckpt_dir, ckpt_every); !st) return fail(st.message());
  const nlohmann::json identity = shac_run_identity(doc->name, task->name, windows, ts.seed, ahac ? "ahac" : "shac");
  RunTotals totals;
  if (!o.resume.empty()) {
    auto ck = read_run_checkpoint(o.resume, identity, comm, totals);
    if (!ck) return fail(ck.status().message());
    if (Status st = shac->load(*ck); !st) return fail(st.message());
  } else {
    if (lead) {
      auto first = shac->evaluate();
      if (!first) return fail(first.status().message());
      totals.first = double(*first);
    }
  }
  if (comm.rank() == o.perturb_rank) {  // tests: a replica that computed other bits
    std::vector<float> w = shac->weights();
    w[0] += 0.01f;  // (one ulp can vanish in the first Adam step's rounding)
    shac->set_weights(std::move(w));
  }
  const optim::BatchShacOptions& so = shac->options();  // the window length the trainer uses
  if (lead) {
    std::printf("%s / %s: %s, %d copies, windows of %s%d frames, %d windows, seed %llu\n", doc->name.c_str(),
                task->name.c_str(), name, envs, ahac ? "up to " : "", so.window, windows,
                static_cast<unsigned long long>(ts.seed));
    if (ahac)
      std::printf("AHAC: windows cut where the contact forces' norm passes %g N, horizon %d..%d frames, %s\n",
                  so.ahac.contact_threshold, so.ahac.horizon_min, so.window,
                  so.ahac.double_critic ? "two critics (the smaller return)" : "one critic");
    if (comm.size() > 1) std::printf("%d MPI ranks share the copies (rank 0 prints)\n", comm.size());
    if (!o.resume.empty()) std::printf("resumed from %s at window %d\n", o.resume.c_str(), shac->iteration());
    // per row: control steps (frames over all copies) and wall time so far, the window's mean frame
    // cost, the evaluation episode's mean frame cost and its return (minus its summed costs: for
    // reward terms, the summed reward over the task's horizon, as the papers report it)
    // AHAC adds the horizon after the window [frames] and the copies stiff contact cut in it
    std::printf("%6s %12s %9s %12s %12s %12s %8s %8s%s\n", "window", "ctrl steps", "wall [s]", "mean cost", "eval cost",
                "eval return", "ended", "skipped", ahac ? "  horizon      cut" : "");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double comm0 = comm.seconds();
  const long long bytes0 = comm.bytes_received();
  const int substeps = std::max(cs->substeps, 1), horizon = task->horizon, begin = shac->iteration();
  // viewers (--serve): under mpirun rank 0 serves, and what a viewer asks of it (stop, a
  // checkpoint) reaches every rank through a broadcast each window, so the ranks stay together
  const bool served = !o.serve.address.empty();
  ServeOptions serve = o.serve;
  serve.checkpoints = ckpt_every > 0;
  if (!lead) serve.address.clear();
  auto server = open_serve(serve, serve_hello(o.scene_path, ahac ? "ahac" : "shac",
                                              {{"task", task->name},
                                               {"windows", windows},
                                               {"envs", envs},
                                               {"window", so.window},
                                               {"worlds", o.serve.worlds},
                                               {"seed", ts.seed},
                                               {"ranks", comm.size()}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  auto agreed = [&](bool mine) { return agreed_by_ranks(comm, served, mine); };
  std::vector<StateT<float>> eval_states;  // the evaluation episode, frame by frame (published)
  auto keep_state = [&](int, const optim::PolicyEnvT<float>& env) { eval_states.push_back(env.state(0)); };
  std::optional<InterruptGuard> ctrl_c;
  if (comm.size() == 1) ctrl_c.emplace();  // under mpirun, Ctrl+C ends the job (OpenMPI): the last checkpoint stays
  int trained = 0;
  bool stopped = false;
  optim::ShacWindowTimes times;  // summed over the windows trained here
  double eval_seconds = 0;
  for (int k = begin; k < windows && !stopped; ++k) {
    auto stop = agreed(serving && serving->hold());
    if (!stop) return fail(stop.status().message());
    if (*stop) {
      if (lead) std::printf("stopped by a viewer after %d windows\n", k);
      break;
    }
    // a row (and its evaluation episode) every 10 windows; a viewer's snapshot every --serve-every
    // windows, with an evaluation episode of its own (evaluations change nothing the training
    // computes); the windows that publish keep the first training copies' frames (--serve-worlds)
    const bool row = k % 10 == 9 || k + 1 == windows;
    const bool publishes = serving && (serving->snapshot_due(k) || k + 1 == windows);
    shac->keep_copy_frames(publishes ? o.serve.worlds : 0);
    auto st = shac->step();
    if (!st) return fail("window " + std::to_string(k) + ": " + st.status().message());
    ++trained;
    times += st->time;
    if (comm.rank() == o.kill_rank) std::raise(SIGKILL);  // tests: a rank that dies
    if (st->skipped && lead) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), st->skip_reason.c_str());
    totals.ended += st->terminated;
    nlohmann::json record{{"iteration", k},
                          {"loss", st->mean_cost},
                          {"grad_norm", st->grad_norm},
                          {"sim_steps", st->sim_steps},
                          {"skipped", st->skipped},
                          {"skipped_windows", st->skipped_windows}};
    if (lead && (row || publishes)) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      eval_states.clear();
      auto e = publishes ? shac->evaluate(keep_state) : shac->evaluate();
      if (!e) return fail(e.status().message());
      eval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - wall;
      const long long steps = st->sim_steps / substeps;
      const double ret = -double(*e) * horizon;
      if (row) {
        std::printf("%6d %12lld %9.1f %12.6g %12.6g %12.6g %8d %8d", k, steps, wall, st->mean_cost, double(*e), ret,
                    totals.ended, st->skipped_windows);
        if (ahac) std::printf(" %8.2f %8d", st->horizon, st->contact_cut);
        std::printf("\n");
        std::fflush(stdout);
        totals.rows.push_back({{"window", k},
                               {"control_steps", steps},
                               {"wall_s", wall},
                               {"mean_cost", st->mean_cost},
                               {"eval_cost", double(*e)},
                               {"eval_return", ret},
                               {"sim_steps", st->sim_steps},
                               {"episodes_ended", totals.ended},
                               {"skipped_windows", st->skipped_windows}});
        if (ahac)
          totals.rows.back().update({{"horizon", st->horizon},
                                     {"dual", st->dual},
                                     {"contact_cut", st->contact_cut},
                                     {"contact_mean", st->contact_mean}});
      }
      record.update(
          {{"eval_cost", double(*e)}, {"eval_return", ret}, {"wall_s", wall}, {"episodes_ended", totals.ended}});
      if (publishes) {  // the evaluation episode, and the training copies' last window beside it
        RunSnapshot shot = rollout_snapshot(k, shac->weights(), eval_states, &cs->model);
        add_worlds(shot, shac->copy_frames());
        serving->snapshot(std::move(shot));
      }
    }
    const bool interrupted = ctrl_c && InterruptGuard::requested();
    stopped = interrupted || (o.stop_after > 0 && trained == o.stop_after);
    auto asked = agreed(serving && serving->checkpoint_requested());  // a viewer's checkpoint request
    if (!asked) return fail(asked.status().message());
    if (ckpt_every > 0 && ((k + 1) % ckpt_every == 0 || k + 1 == windows || stopped || *asked)) {
      optim::Checkpoint ck;
      Status s = shac->save(ck);  // collective: every rank's copies
      if (s) s = write_run_checkpoint(ckpt_dir, identity, totals, ck, comm);
      if (!s) return fail(s.message());
      if (lead) std::printf("checkpoint after window %d written to %s\n", k, ckpt_dir.c_str()), std::fflush(stdout);
      record["checkpoint_window"] = k;  // viewers list the run's checkpoints
      record["checkpoint_dir"] = ckpt_dir;
    }
    if (serving) serving->iteration(std::move(record));
    if (interrupted && lead) std::printf("stopped by Ctrl+C after window %d\n", k);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (lead && trained > 0) {
    std::printf("%d windows in %.3f s: %.3f windows/s\n", trained, wall, trained / wall);
    print_window_times(window_times(times, eval_seconds, trained));
    if (comm.size() > 1)
      std::printf("MPI: %d ranks, %.3f ms per window in communication, %.0f bytes received per window (rank 0)\n",
                  comm.size(), 1e3 * (comm.seconds() - comm0) / trained,
                  double(comm.bytes_received() - bytes0) / trained);
  }
  if (!lead) return 0;
  std::printf("final weights fingerprint %016llx\n", static_cast<unsigned long long>(shac->fingerprint()));
  if (stopped && !(ctrl_c && InterruptGuard::requested()))
    std::printf("stopped after %d windows (--stop-after); continue with --resume %s\n", trained, ckpt_dir.c_str());
  auto last = shac->evaluate();
  if (!last) return fail(last.status().message());
  if (shac->iteration() == windows)
    std::printf("the policy's mean frame cost: %.6g -> %.6g\n", totals.first, double(*last));
  if (serving)
    serving->end({{"status", shac->iteration() < windows ? "stopped" : "finished"},
                  {"iterations", shac->iteration()},
                  {"final_cost", double(*last)}});
  if (!o.log.empty()) {
    std::ofstream f(o.log);
    f << nlohmann::json{{"scene", doc->name},
                        {"task", task->name},
                        {"windows", totals.rows},
                        {"time_per_window_ms", window_times(times, eval_seconds, trained)}}
             .dump(1)
      << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
  }
  return ctrl_c && InterruptGuard::requested() ? 130 : 0;
}

}  // namespace adj::app
