// `adjoint optimize SCENE --receding-horizon W`: the task flown by receding-horizon control
// (engine/optim/receding_horizon.h) instead of one open-loop optimization
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "app/cmd_optimize.h"
#include "app/scene_task.h"
#include "app/serve/publish.h"
#include "app/serve/run_server.h"
#include "engine/optim/receding_horizon.h"
#include "engine/optim/task.h"

namespace adj::app {

int run_receding_horizon(const OptimizeOptions& o) {
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Scene* doc = &loaded->doc;
  const scene::CompiledScene* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  auto made = optim::make_task(*cs, *task, {.thread_count = std::max(o.threads, 0)});
  if (!made) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), made.status().message().c_str()), 1;
  optim::RecedingHorizonOptions ro{o.receding_window, o.iterations >= 0 ? o.iterations : 8, o.receding_execute};
  auto mpc = optim::RecedingHorizon::create(**made, ro);
  if (!mpc) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), mpc.status().message().c_str()), 1;
  std::printf(
      "%s / %s: receding horizon over %d frames: plans of %d frames, %d Adam steps each, %d frame(s) "
      "applied per plan\n",
      doc->name.c_str(), task->name.c_str(), task->horizon, ro.window, ro.iterations, ro.execute);
  ServeOptions serve = o.serve;
  serve.stoppable = false;  // the engine flies the horizon to its end
  auto server = open_serve(serve, serve_hello(o.scene_path, "receding",
                                              {{"task", task->name},
                                               {"window", ro.window},
                                               {"adam_steps", ro.iterations},
                                               {"execute", ro.execute},
                                               {"horizon", task->horizon}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  // one record per frame flown; a viewer's pause holds the run between frames
  std::function<void(int, StateT<float>&)> per_frame;
  if (serving)
    per_frame = [&](int frame, StateT<float>&) {
      serving->hold();
      serving->iteration({{"iteration", frame}, {"frame", frame}});
    };
  auto report = mpc->run(per_frame);
  if (!report) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), report.status().message().c_str()), 1;
  std::printf("%d plans, %.0f ms; the task's loss on the flown trajectory: %.8g\n", report->replans, report->ms,
              report->loss);
  if (serving) {
    serving->snapshot(rollout_snapshot(task->horizon, report->theta, report->states, &cs->model));
    serving->end({{"status", "finished"}, {"iterations", report->replans}, {"final_loss", report->loss}});
  }
  if (!o.log.empty()) {
    nlohmann::json j;
    j["scene"] = doc->name;
    j["task"] = task->name;
    j["receding_horizon"] = {{"window", ro.window}, {"iterations", ro.iterations}, {"execute", ro.execute}};
    j["replans"] = report->replans;
    j["loss"] = report->loss;
    j["ms"] = report->ms;
    j["parameters"] = report->theta;  // the inputs applied, as the task's actuator_control entries
    std::ofstream f(o.log);
    f << j.dump(1) << "\n";
    if (!f) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
    std::printf("log written to %s\n", o.log.c_str());
  }
  return 0;
}

}  // namespace adj::app
