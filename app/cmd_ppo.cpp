// `adjoint optimize SCENE --task T --method ppo`: a policy task trained by PPO
// (engine/optim/ppo.h PpoTrainer, PpoOptions' defaults, in double) on --envs copies from the
// task's randomized starts, its step size annealed over the run's --iterations; checkpoints
// as SHAC's (--checkpoint-dir, --resume, --stop-after, Ctrl+C), viewers as every method's
// (--serve). Under mpirun the ranks share the copies (PpoOptions::comm) and end with the same
// bits as one process; rank 0 prints, evaluates, serves and writes the checkpoints.
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
#include "engine/optim/ppo.h"
#include "engine/optim/task.h"

namespace adj::app {

namespace {

// what a viewer gets of an iteration (--serve)
nlohmann::json iteration_record(int k, const optim::PpoIteration& it) {
  return {{"iteration", k},
          {"loss", -it.mean_reward},  // the method's cost: the mean frame cost
          {"mean_reward", it.mean_reward},
          {"mean_return", it.mean_return},
          {"episodes", it.episodes},
          {"policy_loss", it.policy_loss},
          {"value_loss", it.value_loss},
          {"approx_kl", it.approx_kl},
          {"lr", it.lr},
          {"sim_steps", it.sim_steps},
          {"skipped", it.skipped},
          {"skipped_iterations", it.skipped_iterations},
          {"ms", it.ms}};
}

// a printed row (the log's too): control steps so far, wall time, the iteration's mean reward
// per frame, the mean return of the episodes that ended, the evaluation's mean frame cost
void print_row(int k, long long steps, double wall, const optim::PpoIteration& it, double eval, RunTotals& totals) {
  std::printf("%6d %12lld %9.1f %12.6g %12.6g %12.6g\n", k, steps, wall, it.mean_reward, it.mean_return, eval);
  std::fflush(stdout);
  totals.rows.push_back({{"iteration", k},
                         {"control_steps", steps},
                         {"wall_s", wall},
                         {"mean_reward", it.mean_reward},
                         {"mean_return", it.mean_return},
                         {"eval_cost", eval},
                         {"skipped_iterations", it.skipped_iterations}});
}

}  // namespace

int run_ppo(const OptimizeOptions& o) {
  dist::LocalCommunicator alone;
  dist::Communicator& comm = o.comm ? *o.comm : alone;
  const bool lead = comm.rank() == 0;
  const std::string who = comm.size() > 1 ? o.scene_path + " (rank " + std::to_string(comm.rank()) + ")" : o.scene_path;
  auto fail = [&](const std::string& what) { return std::fprintf(stderr, "%s: %s\n", who.c_str(), what.c_str()), 1; };
  auto loaded = load_scene_task<double>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  scene::Task task = loaded->task;
  const int iterations = o.iterations >= 0 ? o.iterations : task.optimizer.iterations;
  task.seed = o.seed >= 0 ? std::uint64_t(o.seed) : task.seed;  // the policy's initialization
  auto made = optim::make_task(loaded->cs, task, {.thread_count = std::max(o.threads, 0)});
  if (!made) return fail(made.status().message());
  optim::PpoOptions po;
  po.seed = task.seed;
  po.comm = &comm;
  po.fingerprint_every = o.fingerprint_every;
  const optim::PolicyEnvOptions copies = optim::training_starts(task, o.shac_envs);
  const int substeps = std::max(loaded->cs.substeps, 1);
  po.lr_anneal_steps = (long long)iterations * o.shac_envs * po.steps_per_env * substeps;
  auto ppo = optim::PpoTrainer::create(**made, po, copies);
  if (!ppo) return fail(ppo.status().message());
  std::string ckpt_dir;
  int ckpt_every = 0;
  if (Status st = checkpoint_plan(o, ckpt_dir, ckpt_every); !st) return fail(st.message());
  const nlohmann::json identity = {{"method", "ppo"},
                                   {"scene", loaded->doc.name},
                                   {"task", task.name},
                                   {"iterations", iterations},
                                   {"seed", task.seed}};
  RunTotals totals;
  if (!o.resume.empty()) {
    auto ck = read_run_checkpoint(o.resume, identity, comm, totals);
    if (!ck) return fail(ck.status().message());
    if (Status st = ppo->load(*ck); !st) return fail(st.message());
  } else if (lead) {
    auto first = ppo->evaluate();
    if (!first) return fail(first.status().message());
    totals.first = *first;
  }
  if (comm.rank() == o.perturb_rank) {  // tests: a replica that computed other bits
    std::vector<double> w = ppo->parameters();
    w[0] += 0.01;
    ppo->set_parameters(std::move(w));
  }
  // rank 0 prints
  if (lead && comm.size() > 1) std::printf("%d MPI ranks share the copies (rank 0 prints)\n", comm.size());
  if (lead)
    std::printf("%s / %s: PPO, %d copies, %d frames per copy per iteration, %d iterations, seed %llu\n",
                loaded->doc.name.c_str(), task.name.c_str(), o.shac_envs, po.steps_per_env, iterations,
                static_cast<unsigned long long>(task.seed));
  if (lead && !o.resume.empty()) std::printf("resumed from %s at iteration %d\n", o.resume.c_str(), ppo->iteration());
  // per row: control steps so far, the iteration's mean reward per frame, the mean return of
  // the episodes that ended, the evaluation episode's mean frame cost (the mean action)
  if (lead)
    std::printf("%6s %12s %9s %12s %12s %12s\n", "iter", "ctrl steps", "wall [s]", "mean reward", "mean return",
                "eval cost");
  // viewers (--serve): every iteration's record; every --serve-every iterations the evaluation
  // episode and the first training copies' collection (--serve-worlds) beside it. Under mpirun
  // rank 0 serves, and what a viewer asks of it (stop, a checkpoint) reaches every rank
  const bool served = !o.serve.address.empty();
  ServeOptions serve = o.serve;
  serve.checkpoints = ckpt_every > 0;
  if (!lead) serve.address.clear();
  auto server = open_serve(serve, serve_hello(o.scene_path, "ppo",
                                              {{"task", task.name},
                                               {"iterations", iterations},
                                               {"envs", o.shac_envs},
                                               {"steps_per_env", po.steps_per_env},
                                               {"seed", task.seed},
                                               {"worlds", o.serve.worlds},
                                               {"ranks", comm.size()}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  auto agreed = [&](bool mine) { return agreed_by_ranks(comm, served, mine); };
  std::vector<StateT<double>> eval_states;  // the evaluation episode, frame by frame (published)
  auto keep_state = [&](int, const optim::PolicyEnvT<double>& env) { eval_states.push_back(env.state(0)); };
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<InterruptGuard> ctrl_c;
  if (comm.size() == 1) ctrl_c.emplace();  // under mpirun, Ctrl+C ends the job (OpenMPI): the last checkpoint stays
  int trained = 0;
  bool stopped = false, viewer_stop = false;
  for (int k = ppo->iteration(); k < iterations && !stopped; ++k) {
    auto stop = agreed(serving && serving->hold([&] { return ctrl_c && InterruptGuard::requested(); }));
    if (!stop) return fail(stop.status().message());
    if ((viewer_stop = *stop)) {
      if (lead) std::printf("stopped by a viewer after %d iterations\n", k);
      break;
    }
    const bool row = lead && (k % 10 == 9 || k + 1 == iterations);
    const bool publishes = serving && (serving->snapshot_due(k) || k + 1 == iterations);
    ppo->keep_copy_frames(publishes ? o.serve.worlds : 0);
    auto it = ppo->iterate();
    if (!it) return fail("iteration " + std::to_string(k) + ": " + it.status().message());
    ++trained;
    if (it->skipped && lead) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), it->skip_reason.c_str());
    if (comm.rank() == o.kill_rank) std::raise(SIGKILL);  // tests: a rank that dies
    nlohmann::json record = iteration_record(k, *it);
    if (row || publishes) {
      eval_states.clear();
      auto e = publishes ? ppo->evaluate(keep_state) : ppo->evaluate();
      if (!e) return fail(e.status().message());
      record["eval_cost"] = *e;
      if (const std::string& failed = ppo->evaluation_failure(); !failed.empty()) {  // said; training goes on
        std::fprintf(stderr, "%s: iteration %d: %s\n", o.scene_path.c_str(), k, failed.c_str());
        record["eval_failure"] = failed;
      }
      if (row)
        print_row(k, it->sim_steps / substeps,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), *it, *e, totals);
    }
    const bool interrupted = ctrl_c && InterruptGuard::requested();
    stopped = interrupted || (o.stop_after > 0 && trained == o.stop_after);
    auto asked = agreed(serving && serving->checkpoint_requested());  // a viewer's checkpoint request
    if (!asked) return fail(asked.status().message());
    if (ckpt_every > 0 && ((k + 1) % ckpt_every == 0 || k + 1 == iterations || stopped || *asked)) {
      optim::Checkpoint ck;
      Status s = ppo->save(ck);  // collective: every rank's copies
      if (s) s = write_run_checkpoint(ckpt_dir, identity, totals, ck, comm);
      if (!s) return fail(s.message());
      if (lead) std::printf("checkpoint after iteration %d written to %s\n", k, ckpt_dir.c_str()), std::fflush(stdout);
      record["checkpoint_window"] = k;  // viewers list the run's checkpoints
      record["checkpoint_dir"] = ckpt_dir;
    }
    if (serving) {
      serving->iteration(std::move(record));
      if (publishes) {
        RunSnapshot shot = rollout_snapshot(k, ppo->parameters(), eval_states, &loaded->cs.model);
        add_worlds(shot, ppo->copy_frames());
        serving->snapshot(std::move(shot));
      }
    }
    if (interrupted && lead) std::printf("stopped by Ctrl+C after iteration %d\n", k);
  }
  if (serving)
    serving->end(
        {{"status", ppo->iteration() < iterations ? "stopped" : "finished"}, {"iterations", ppo->iteration()}});
  if (!lead) return 0;
  std::printf("final weights fingerprint %016llx\n", static_cast<unsigned long long>(ppo->fingerprint()));
  if (stopped && !(ctrl_c && InterruptGuard::requested()))
    std::printf("stopped after %d iterations (--stop-after); continue with --resume %s\n", trained, ckpt_dir.c_str());
  if (ppo->iteration() == iterations) {
    auto last = ppo->evaluate();
    if (!last) return fail(last.status().message());
    std::printf("the policy's mean frame cost: %.6g -> %.6g\n", totals.first, *last);
  }
  if (!o.log.empty()) {
    std::ofstream f(o.log);
    f << nlohmann::json{{"scene", loaded->doc.name}, {"task", task.name}, {"iterations", totals.rows}}.dump(1) << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
  }
  return (ctrl_c && InterruptGuard::requested()) || viewer_stop ? 130 : 0;
}

}  // namespace adj::app
