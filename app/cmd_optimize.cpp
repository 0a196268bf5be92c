#include "app/cmd_optimize.h"
#include "app/scene_task.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "app/optimize_video.h"
#include "engine/optim/coupled_task.h"
#include "engine/optim/rigid_parameters.h"
#include "engine/optim/rigid_task.h"
#include "engine/optim/trainer.h"
#include "engine/optim/write_back.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/scene/scene_paths.h"

namespace adj::app {

namespace {

// Ctrl+C: finish the current iteration, then stop (a second Ctrl+C kills as usual)
volatile std::sig_atomic_t g_interrupted = 0;  // signal handlers can only reach a global
void on_sigint(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

void progress_bar(int done, int total, double loss) {
  const int width = 30;
  int fill = total > 0 ? done * width / total : width;
  std::printf("\r\033[K[");
  for (int i = 0; i < width; ++i) std::putchar(i < fill ? '#' : '.');
  std::printf("] %d/%d  loss %.6g", done, total, loss);
  std::fflush(stdout);
}

bool write_text_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

}  // namespace

namespace {

// the end of a run, either runner: how it stopped, the final loss, the video closed; the exit code
template <class S>
int finish_run(const OptimizeOptions& o, int done, const Status& failure, bool interrupted, const Result<S>& final_loss,
               OptimizeVideo* video) {
  if (interrupted) std::printf("stopped by Ctrl+C after %d iterations\n", done);
  if (final_loss) std::printf("final loss %.8g after %d iterations\n", double(final_loss.value()), done);
  if (!failure.is_ok()) std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), failure.message().c_str());
  int rc = !failure.is_ok() ? 1 : interrupted ? 130 : 0;
  if (video) {
    if (Status st = video->close(); !st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      rc = 1;
    } else {
      std::printf("video of %d iterations (%d frames) written to %s\n", done, video->frames(), o.record.c_str());
    }
  }
  return rc;
}

// a robot task: the rigid-body runner (robots and particles together: the coupled runner), the
// same lines, log and Ctrl+C; video and write-back for rigid-only tasks
template <class Runner>
int run_optimize_robot_with(const OptimizeOptions& o, const scene::Scene& doc, const scene::CompiledScene& cs,
                            const scene::Task& task, Result<Runner>& runner, const char* kind) {
  constexpr bool rigid_only = std::is_same_v<Runner, optim::RigidTaskRunnerT<float>>;
  if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
  const auto& blocks = [&]() -> const std::vector<optim::ParamBlock>& {
    if constexpr (rigid_only)
      return runner->parameters().blocks();
    else
      return runner->blocks();
  }();
  for (const std::string& n : optim::start_from_stored(*runner, blocks, task)) std::printf("note: %s\n", n.c_str());
  std::unique_ptr<OptimizeVideo> video;
  if (!o.record.empty() && !rigid_only)
    std::printf("note: --record is not available for coupled tasks yet; no video is written\n");
  if (!o.save_scene.empty() && !rigid_only)
    std::printf("note: --save-scene is not available for coupled tasks yet; see the log\n");
  if (!o.record.empty() && rigid_only) {
    auto v = OptimizeVideo::open(doc, cs, task, {o.record, o.record_width, o.record_height, o.record_fps});
    if (!v) return std::fprintf(stderr, "%s\n", v.status().message().c_str()), 1;
    video = std::move(*v);
  }
  const int iterations = o.iterations >= 0 ? o.iterations : task.optimizer.iterations;
  std::printf("%s / %s (%s): %zu parameters, horizon %d frames x %d substeps, %s lr %g, %d iterations\n",
              doc.name.c_str(), task.name.c_str(), kind, runner->theta().size(), task.horizon, cs.substeps,
              scene::to_string(task.optimizer.kind), task.optimizer.lr, iterations);
  std::printf("%6s %14s %14s %10s\n", "iter", "loss", "grad norm", "ms");
  g_interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  Status failure;
  int done = 0;
  for (; done < iterations && !g_interrupted; ++done) {
    auto it = runner->iterate();
    if (!it) {
      failure = it.status();
      break;
    }
    std::printf("%6d %14.8g %14.6g %10.1f\n", it->iteration, it->loss, it->grad_norm, it->ms);
    // the runner keeps the rollout this iteration measured
    if constexpr (rigid_only) {
      if (video && (done % o.record_every == 0 || done + 1 == iterations)) {
        if (Status st = video->add_robot_iteration(*runner, it->iteration, it->loss); !st) {
          failure = st;
          ++done;
          break;
        }
      }
    }
  }
  std::signal(SIGINT, previous);
  const bool interrupted = g_interrupted != 0;
  auto final_loss = runner->evaluate(runner->theta());
  int rc = finish_run(o, done, failure, interrupted, final_loss, video.get());
  if constexpr (rigid_only) {
    if (!o.save_scene.empty()) {
      scene::Scene out = doc;
      for (const std::string& n : optim::write_back_robot(runner->parameters().blocks(), runner->theta(), cs, out))
        std::printf("note: %s (the log has every value)\n", n.c_str());
      for (scene::Task& t : out.tasks)
        if (t.name == task.name) optim::store_values(runner->parameters().blocks(), runner->theta(), t);
      scene::rebase_paths(out, std::filesystem::path(o.scene_path).parent_path().string(),
                          std::filesystem::path(o.save_scene).parent_path().string());
      if (Status st = scene::save_scene(out, o.save_scene); !st) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        rc = 1;
      } else {
        std::printf("optimized scene written to %s\n", o.save_scene.c_str());
      }
    }
  }
  if (!o.log.empty()) {
    nlohmann::json j;
    j["scene"] = doc.name;
    j["task"] = task.name;
    j["completed_iterations"] = done;
    j["interrupted"] = interrupted;
    if (!failure.is_ok()) j["error"] = failure.message();
    nlohmann::json its = nlohmann::json::array();
    for (const auto& h : runner->history())
      its.push_back({{"iteration", h.iteration}, {"loss", h.loss}, {"grad_norm", h.grad_norm}, {"ms", h.ms}});
    j["iterations"] = its;
    if (final_loss) j["final_loss"] = double(*final_loss);
    j["parameters"] = runner->theta();
    if (!write_text_atomic(o.log, j.dump(1) + "\n")) return std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str()), 1;
    std::printf("log written to %s\n", o.log.c_str());
  }
  return rc;
}

int run_optimize_robot(const OptimizeOptions& o, const scene::Scene& doc, const scene::CompiledScene& cs,
                       const scene::Task& task) {
  if (optim::is_coupled_task(cs, task)) {
    auto runner = optim::CoupledTaskRunnerT<float>::create(cs, task, o.threads);
    return run_optimize_robot_with(o, doc, cs, task, runner, "robot + particles, coupled");
  }
  auto runner = optim::RigidTaskRunnerT<float>::create(cs, task);
  return run_optimize_robot_with(o, doc, cs, task, runner, "robot");
}

}  // namespace

int run_optimize(const OptimizeOptions& o) {
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  scene::Scene& doc = loaded->doc;  // the optimized parameters are written into it
  const scene::CompiledScene* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  if (optim::is_robot_task(*cs, *task)) return run_optimize_robot(o, doc, *cs, *task);
  auto runner = optim::TaskRunnerT<float>::create(*cs, *task, {.thread_count = o.threads});
  if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
  for (const std::string& n : optim::start_from_stored(*runner, runner->parameters().blocks(), *task))
    std::printf("note: %s\n", n.c_str());

  const int iterations = o.iterations >= 0 ? o.iterations : task->optimizer.iterations;
  const bool tty = isatty(fileno(stdout));
  std::printf("%s / %s: %d parameters, horizon %d frames x %d substeps, %s lr %g, %d iterations\n",
              doc.name.c_str(), task->name.c_str(), runner->parameters().size(), task->horizon, cs->substeps,
              scene::to_string(task->optimizer.kind), task->optimizer.lr, iterations);
  std::printf("%6s %14s %14s %10s\n", "iter", "loss", "grad norm", "ms");

  std::unique_ptr<OptimizeVideo> video;
  if (!o.record.empty()) {
    auto v = OptimizeVideo::open(doc, *cs, *task, {o.record, o.record_width, o.record_height, o.record_fps});
    if (!v) return std::fprintf(stderr, "%s\n", v.status().message().c_str()), 1;
    video = std::move(*v);
  }

  g_interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  Status failure;
  int done = 0;
  for (; done < iterations && !g_interrupted; ++done) {
    std::vector<float> theta = runner->theta();
    auto it = runner->iterate();
    if (!it) {
      failure = it.status();
      break;
    }
    bool record_this = done % o.record_every == 0 || done + 1 == iterations;
    if (video && record_this) {
      if (Status st = video->add_iteration(*runner, theta, it->iteration, it->loss); !st) {
        failure = st;
        break;
      }
    }
    if (tty) std::printf("\r\033[K");
    std::printf("%6d %14.8g %14.6g %10.1f\n", it->iteration, it->loss, it->grad_norm, it->ms);
    if (tty) progress_bar(done + 1, iterations, it->loss);
  }
  std::signal(SIGINT, previous);
  if (tty) std::printf("\r\033[K");
  const bool interrupted = g_interrupted != 0;
  auto final_loss = runner->evaluate(runner->theta());  // the loss at the final parameters
  int rc = finish_run(o, done, failure, interrupted, final_loss, video.get());
  if (!o.log.empty()) {
    nlohmann::json j;
    j["scene"] = doc.name;
    j["task"] = task->name;
    j["completed_iterations"] = done;
    j["interrupted"] = interrupted;
    if (!failure.is_ok()) j["error"] = failure.message();
    nlohmann::json its = nlohmann::json::array();
    for (const auto& h : runner->history())
      its.push_back({{"iteration", h.iteration}, {"loss", h.loss}, {"grad_norm", h.grad_norm}, {"ms", h.ms}});
    j["iterations"] = its;
    if (final_loss) j["final_loss"] = double(*final_loss);
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : runner->parameters().blocks())
      blocks.push_back({{"kind", scene::to_string(b.kind)}, {"object", b.object}, {"offset", b.offset},
                        {"count", b.count}, {"steps", b.steps}, {"elements", b.elements}, {"width", b.width}});
    j["parameter_blocks"] = blocks;
    j["parameters"] = runner->theta();
    j["step_grad_norms"] = runner->step_grad_norms();
    if (!write_text_atomic(o.log, j.dump(1) + "\n")) {
      std::fprintf(stderr, "%s: cannot write the log\n", o.log.c_str());
      rc = 1;
    } else {
      std::printf("log written to %s\n", o.log.c_str());
    }
  }
  if (!o.save_scene.empty()) {
    for (const std::string& n : optim::write_back(runner->parameters().blocks(), runner->theta(), *cs, doc))
      std::printf("note: %s (the log has every value)\n", n.c_str());
    for (scene::Task& t : doc.tasks)
      if (t.name == task->name) optim::store_values(runner->parameters().blocks(), runner->theta(), t);
    scene::rebase_paths(doc, std::filesystem::path(o.scene_path).parent_path().string(),
                        std::filesystem::path(o.save_scene).parent_path().string());
    Status st = scene::save_scene(doc, o.save_scene);
    if (!st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      rc = 1;
    } else {
      std::printf("optimized scene written to %s\n", o.save_scene.c_str());
    }
  }
  return rc;
}

int run_check_grad(const CheckGradOptions& o) {
  auto loaded = load_scene_task<double>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Scene& doc = loaded->doc;
  const scene::CompiledSceneT<double>* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  Result<optim::GradCheckReport> report = Status::error("no runner");
  if (optim::is_coupled_task(*cs, *task)) {
    auto runner = optim::CoupledTaskRunnerT<double>::create(*cs, *task, o.threads);
    if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
    optim::start_from_stored(*runner, runner->blocks(), *task);
    report = runner->check_grad(o.samples, o.eps, o.seed);
  } else if (optim::is_robot_task(*cs, *task)) {
    auto runner = optim::RigidTaskRunnerT<double>::create(*cs, *task);
    if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
    optim::start_from_stored(*runner, runner->parameters().blocks(), *task);
    report = runner->check_grad(o.samples, o.eps, o.seed);
  } else {
    auto runner = optim::TaskRunnerT<double>::create(*cs, *task, {.thread_count = o.threads});
    if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
    optim::start_from_stored(*runner, runner->parameters().blocks(), *task);
    report = runner->check_grad(o.samples, o.eps, o.seed);
  }
  if (!report) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), report.status().message().c_str()), 1;
  std::printf("%s / %s: analytic gradient vs central differences (double, eps %g), %zu entries\n",
              doc.name.c_str(), task->name.c_str(), o.eps, report->rows.size());
  std::printf("%s", report->format().c_str());
  bool ok = report->max_rel_err <= o.tolerance;
  std::printf("max relative error %.3g (tolerance %.3g): %s\n", report->max_rel_err, o.tolerance, ok ? "PASS" : "FAIL");
  return ok ? 0 : 4;
}

}  // namespace adj::app
