#include "app/cmd_optimize.h"
#include "app/scene_task.h"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/optimize_video.h"
#include "app/serve/publish.h"
#include "app/serve/run_server.h"
#include "engine/optim/task.h"
#include "engine/optim/worlds_task.h"
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

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  previous_ = std::signal(SIGINT, on_sigint);
}
InterruptGuard::~InterruptGuard() { std::signal(SIGINT, previous_); }
bool InterruptGuard::requested() { return g_interrupted != 0; }

namespace {

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
               OptimizeVideo* video, bool viewer_stop) {
  if (interrupted) std::printf("stopped by %s after %d iterations\n", viewer_stop ? "a viewer" : "Ctrl+C", done);
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

// one iteration's row, as the log and the served rows carry it (backtracking's fields when they say something)
nlohmann::json iteration_row(const optim::IterationStats& h) {
  nlohmann::json row{{"iteration", h.iteration}, {"loss", h.loss}, {"grad_norm", h.grad_norm}, {"ms", h.ms}};
  if (h.step_scale != 1) row["step_scale"] = h.step_scale;
  if (h.rejected) row["rejected"] = true;
  if (h.stalled) row["stalled"] = true;
  if (!h.failure.empty()) row["failure"] = h.failure;
  return row;
}

nlohmann::json block_table(const std::vector<optim::ParamBlock>& blocks) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& b : blocks)
    j.push_back({{"kind", scene::to_string(b.kind)},
                 {"object", b.object},
                 {"offset", b.offset},
                 {"count", b.count},
                 {"steps", b.steps},
                 {"frames", b.frames},
                 {"knots", b.knots},
                 {"elements", b.elements},
                 {"width", b.width}});
  return j;
}

// a row of the table: the iteration, its loss, gradient norm and time; a rejected point with why
// and what the backtracking did
void print_row(const optim::IterationStats& it) {
  if (it.rejected) {
    char then[80] = "no shorter step lowers the loss: stopped at the last accepted point";
    if (!it.stalled) std::snprintf(then, sizeof then, "back with %g of the step", it.step_scale);
    std::printf("%6d %14.8g %14s %10.1f  rejected (%s): %s\n", it.iteration, it.loss, "-", it.ms,
                it.failure.empty() ? "the loss rose" : it.failure.c_str(), then);
  } else {
    std::printf("%6d %14.8g %14.6g %10.1f\n", it.iteration, it.loss, it.grad_norm, it.ms);
  }
}

// --log: the run's summary j with every iteration, the parameter blocks, the final parameters and
// |dL/dx_t|, written atomically; false (said why) when it cannot be written
bool write_log(const std::string& path, optim::TaskT<float>& runner, nlohmann::json j) {
  nlohmann::json its = nlohmann::json::array();
  for (const auto& h : runner.history()) its.push_back(iteration_row(h));
  j["iterations"] = its;
  j["parameter_blocks"] = block_table(runner.blocks());
  j["parameters"] = runner.theta();
  j["step_grad_norms"] = runner.step_grad_norms();
  if (!write_text_atomic(path, j.dump(1) + "\n")) {
    std::fprintf(stderr, "%s: cannot write the log\n", path.c_str());
    return false;
  }
  std::printf("log written to %s\n", path.c_str());
  return true;
}

// --save-scene: the optimized parameters written back into the scene (and kept as the task's
// values), its paths rebased to where it is written; false (said why) when it cannot be saved
bool save_optimized_scene(const OptimizeOptions& o, optim::TaskT<float>& runner, const scene::CompiledScene& cs,
                          const std::string& task_name, scene::Scene& doc) {
  for (const std::string& n : optim::write_back_task(runner.blocks(), runner.theta(), cs, doc))
    std::printf("note: %s (the log has every value)\n", n.c_str());
  for (scene::Task& t : doc.tasks)
    if (t.name == task_name) optim::store_values(runner.blocks(), runner.theta(), t);
  scene::rebase_paths(doc, std::filesystem::path(o.scene_path).parent_path().string(),
                      std::filesystem::path(o.save_scene).parent_path().string());
  if (Status st = scene::save_scene(doc, o.save_scene); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return false;
  }
  std::printf("optimized scene written to %s\n", o.save_scene.c_str());
  return true;
}

}  // namespace

int run_optimize(const OptimizeOptions& options) {
  // over MPI ranks (--worlds): every rank steps its worlds and takes the same steps; rank 0
  // prints, records, serves and writes, the others run with no output
  dist::LocalCommunicator alone;
  dist::Communicator& comm = options.comm ? *options.comm : alone;
  OptimizeOptions o = options;
  if (comm.rank() != 0) {
    o.log.clear(), o.save_scene.clear(), o.record.clear(), o.serve.address.clear();
    if (!std::freopen("/dev/null", "w", stdout)) return 1;
  }
  auto loaded = load_scene_task<float>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  scene::Scene& doc = loaded->doc;                             // the optimized parameters are written into it
  if (o.seed >= 0) loaded->task.seed = std::uint64_t(o.seed);  // a policy's initialization, the worlds' draws
  const scene::CompiledScene* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  auto made = optim::make_worlds_task(
      *cs, *task,
      {.worlds = o.worlds,
       .seed = task->seed,
       .comm = &comm,
       .task = {.thread_count = o.threads, .keep_frames = !o.record.empty() || !o.serve.address.empty()}});
  if (!made) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), made.status().message().c_str()), 1;
  optim::TaskT<float>& runner = **made;
  for (const std::string& n : optim::start_from_stored(runner, runner.blocks(), *task))
    std::printf("note: %s\n", n.c_str());
  const int iterations = o.iterations >= 0 ? o.iterations : task->optimizer.iterations;
  // (under mpirun rank 0's output reaches a terminal through mpirun: rows only, no progress bar)
  const bool tty = isatty(fileno(stdout)) && std::string(comm.kind()) != "MPI";
  std::printf("%s / %s (%s): %zu parameters, horizon %d frames x %d substeps, %s lr %g, %d iterations\n",
              doc.name.c_str(), task->name.c_str(), runner.kind(), runner.theta().size(), task->horizon, cs->substeps,
              scene::to_string(task->optimizer.kind), task->optimizer.lr, iterations);
  if (comm.size() > 1) std::printf("%d MPI ranks share the copies (the worlds; rank 0 prints)\n", comm.size());
  if (o.worlds > 1)
    std::printf("the loss averaged over %d worlds (settings.randomize, seed %llu)\n", o.worlds,
                static_cast<unsigned long long>(task->seed));
  if (task->optimizer.backtrack)
    std::printf("backtracking: a point that raises the loss is rejected and the step to it halved\n");
  std::printf("%6s %14s %14s %10s\n", "iter", "loss", "grad norm", "ms");
  std::unique_ptr<OptimizeVideo> video;
  if (!o.record.empty()) {
    auto v = OptimizeVideo::open(doc, *cs, *task, {o.record, o.record_width, o.record_height, o.record_fps});
    if (!v) return std::fprintf(stderr, "%s\n", v.status().message().c_str()), 1;
    video = std::move(*v);
  }
  auto server =
      open_serve(o.serve, serve_hello(o.scene_path, "bptt", {{"task", task->name}, {"iterations", iterations}}));
  if (!server) return 1;
  RunServer* serving = server->get();
  bool viewer_stop = false;
  g_interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  Status failure;
  int done = 0;
  for (; done < iterations && !g_interrupted; ++done) {
    // a viewer's pause holds the run here (Ctrl+C still stops it)
    if (serving || comm.size() > 1) {  // under mpirun: rank 0's answer, the same on every rank
      auto stop = agreed_by_ranks(comm, !options.serve.address.empty(),
                                  serving && serving->hold([] { return g_interrupted != 0; }));
      if (!stop) {
        failure = stop.status();
        break;
      }
      if (g_interrupted) break;
      if ((viewer_stop = *stop)) break;
    }
    auto it = runner.iterate();
    if (!it) {
      failure = it.status();
      break;
    }
    // the task keeps the rollout this iteration measured (not a rejected point whose rollout
    // failed: its frames stop where it failed)
    const bool measured = it->failure.empty();
    if (video && measured && (done % o.record_every == 0 || done + 1 == iterations)) {
      if (Status st = video->add_iteration(runner.frames(), it->iteration, it->loss); !st) {
        failure = st;
        ++done;
        break;
      }
    }
    if (tty) std::printf("\r\033[K");
    print_row(*it);
    if (tty) progress_bar(done + 1, iterations, it->loss);
    if (serving) {
      serving->iteration(iteration_row(*it));
      // the rollout this iteration measured with its contacts, the parameters its step made,
      // and the gradient it measured (arrows, |dL/dx_t|)
      if (measured && (serving->snapshot_due(it->iteration) || done + 1 == iterations)) {
        RunSnapshot shot = rollout_snapshot(it->iteration, runner.theta(), runner.frames(), &cs->model);
        add_gradient(shot, runner.blocks(), runner.grad(), runner.step_grad_norms());
        serving->snapshot(std::move(shot));
      }
    }
    if (it->stalled) {  // backtracking found no step that lowers the loss (the same on every rank)
      ++done;
      break;
    }
  }
  std::signal(SIGINT, previous);
  if (tty) std::printf("\r\033[K");
  const bool interrupted = g_interrupted != 0 || viewer_stop;
  auto final_loss = runner.finish();  // the loss at the final parameters (a last step that raised it undone)
  std::printf(
      "final parameters fingerprint %016llx\n",
      static_cast<unsigned long long>(dist::fnv1a(runner.theta().data(), runner.theta().size() * sizeof(float))));
  int rc = finish_run(o, done, failure, interrupted, final_loss, video.get(), viewer_stop);
  if (serving) {
    const char* how = !failure.is_ok() ? "error" : interrupted ? "stopped" : "finished";
    nlohmann::json end{{"status", how}, {"iterations", done}};
    if (final_loss) end["final_loss"] = double(*final_loss);
    if (!failure.is_ok()) end["error"] = failure.message();
    serving->end(std::move(end));
  }
  if (!o.log.empty()) {
    nlohmann::json j{
        {"scene", doc.name}, {"task", task->name}, {"completed_iterations", done}, {"interrupted", interrupted}};
    if (!failure.is_ok()) j["error"] = failure.message();
    if (final_loss) j["final_loss"] = double(*final_loss);
    if (!write_log(o.log, runner, std::move(j))) rc = 1;
  }
  if (!o.save_scene.empty() && !save_optimized_scene(o, runner, *cs, task->name, doc)) rc = 1;
  return rc;
}

int run_check_grad(const CheckGradOptions& o) {
  auto loaded = load_scene_task<double>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  const scene::Scene& doc = loaded->doc;
  const scene::CompiledSceneT<double>* cs = &loaded->cs;
  const scene::Task* task = &loaded->task;
  auto runner = optim::make_task(*cs, *task, {.thread_count = o.threads});
  if (!runner) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), runner.status().message().c_str()), 1;
  optim::start_from_stored(**runner, (*runner)->blocks(), *task);
  Result<optim::GradCheckReport> report = (*runner)->check_grad(o.samples, o.eps, o.seed);
  if (!report) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), report.status().message().c_str()), 1;
  std::printf("%s / %s: analytic gradient vs central differences (double, eps %g), %zu entries\n", doc.name.c_str(),
              task->name.c_str(), o.eps, report->rows.size());
  std::printf("%s", report->format().c_str());
  bool ok = report->max_rel_err <= o.tolerance;
  std::printf("max relative error %.3g (tolerance %.3g): %s\n", report->max_rel_err, o.tolerance, ok ? "PASS" : "FAIL");
  return ok ? 0 : 4;
}

}  // namespace adj::app
