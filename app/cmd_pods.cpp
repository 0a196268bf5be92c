// `adjoint optimize SCENE --task T --method pods [--order 1|2]`: a policy task trained by PODS
// (engine/optim/pods.h: each iteration improves the action sequences of a batch of episodes
// from randomized starts, by a normalized gradient step (order 1) or a trust-region Newton
// step (order 2), and regresses the policy onto them). Runs in double; PODS-2's H v products
// are exact, forward over reverse (robot and particle tasks).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "app/cmd_optimize.h"
#include "app/scene_task.h"
#include "app/serve/publish.h"
#include "app/serve/run_server.h"
#include "engine/optim/pods.h"
#include "engine/optim/task.h"

namespace adj::app {

int run_pods(const OptimizeOptions& o) {
  // under mpirun the ranks share the episodes (PodsOptions::comm); rank 0 prints and serves
  dist::LocalCommunicator alone;
  dist::Communicator& comm = o.comm ? *o.comm : alone;
  const bool lead = comm.rank() == 0;
  auto loaded = load_scene_task<double>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  scene::Task task = loaded->task;
  if (o.seed >= 0) task.seed = std::uint64_t(o.seed);
  auto made = optim::make_task(loaded->cs, task, {.thread_count = 1});
  if (!made) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), made.status().message().c_str()), 1;
  const int iterations = o.iterations >= 0 ? o.iterations : task.optimizer.iterations;
  optim::PodsOptions po;
  po.order = o.pods_order;
  po.batch = o.shac_envs;
  po.thread_count = std::max(o.threads, 0);
  po.comm = &comm;
  po.fingerprint_every = o.fingerprint_every;
  // starts: random joint angles and rates around the task's start, as its policy spec says
  // (worlds without joints: the task's start)
  auto pods = optim::PodsTrainerT<double>::create(**made, po, optim::training_starts(task));
  if (!pods) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), pods.status().message().c_str()), 1;
  if (lead && comm.size() > 1)
    std::printf("%d MPI ranks share the copies (the episodes; rank 0 prints)\n", comm.size());
  if (lead)
    std::printf("%s / %s: PODS-%d, %d episodes per iteration, %d iterations, seed %llu\n", loaded->doc.name.c_str(),
                task.name.c_str(), po.order, po.batch, iterations, static_cast<unsigned long long>(task.seed));
  if (lead)
    std::printf("%5s %12s %12s %10s %12s %12s %12s %8s\n", "iter", "policy cost", "improved", "step rms", "regression",
                "eval cost", "sim steps", "H v");
  nlohmann::json log = nlohmann::json::array();
  auto first = pods->evaluate();
  if (!first) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), first.status().message().c_str()), 1;
  ServeOptions serve = o.serve;
  if (!lead) serve.address.clear();
  auto server = open_serve(serve, serve_hello(o.scene_path, "pods",
                                              {{"task", task.name},
                                               {"iterations", iterations},
                                               {"order", po.order},
                                               {"episodes", po.batch},
                                               {"seed", task.seed}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  int k = 0;
  auto agreed = [&](bool mine) { return agreed_by_ranks(comm, !o.serve.address.empty(), mine); };
  for (; k < iterations; ++k) {
    auto stop = agreed(serving && serving->hold());
    if (!stop) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), stop.status().message().c_str()), 1;
    if (*stop) {
      if (lead) std::printf("stopped by a viewer after %d iterations\n", k);
      break;
    }
    auto s = pods->step();
    if (!s)
      return std::fprintf(stderr, "%s: iteration %d: %s\n", o.scene_path.c_str(), k, s.status().message().c_str()), 1;
    if (s->skipped && lead) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), s->skip_reason.c_str());
    auto e = pods->evaluate();
    if (!e) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), e.status().message().c_str()), 1;
    if (lead)
      std::printf("%5d %12.6g %12.6g %10.4g %12.4g %12.6g %12lld %8lld\n", k, s->policy_cost, s->improved_cost,
                  s->step_rms, s->regression_loss, *e, s->sim_steps, s->hvps);
    std::fflush(stdout);
    log.push_back({{"iteration", k},
                   {"policy_cost", s->policy_cost},
                   {"improved_cost", s->improved_cost},
                   {"step_rms", s->step_rms},
                   {"regression_loss", s->regression_loss},
                   {"eval_cost", *e},
                   {"sim_steps", s->sim_steps},
                   {"hvps", s->hvps},
                   {"skipped", s->skipped},
                   {"skipped_iterations", s->skipped_iterations}});
    if (serving) {
      nlohmann::json record = log.back();
      record["loss"] = s->policy_cost;
      serving->iteration(std::move(record));
      if (serving->snapshot_due(k) || k + 1 == iterations)
        serving->snapshot(rollout_snapshot(k, pods->weights(), pods->policy_states(), &loaded->cs.model));
    }
  }
  auto last = pods->evaluate();
  if (!last) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), last.status().message().c_str()), 1;
  if (lead) {
    std::printf("final weights fingerprint %016llx\n", static_cast<unsigned long long>(pods->fingerprint()));
    std::printf("the policy's mean frame cost: %.6g -> %.6g\n", *first, *last);
  }
  if (serving)
    serving->end({{"status", k < iterations ? "stopped" : "finished"}, {"iterations", k}, {"final_cost", *last}});
  if (!o.log.empty() && lead) {
    std::ofstream f(o.log);
    f << nlohmann::json{{"scene", loaded->doc.name}, {"task", task.name}, {"order", po.order}, {"iterations", log}}
             .dump(1)
      << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
  }
  return 0;
}

}  // namespace adj::app
