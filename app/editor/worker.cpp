#include "app/editor/worker.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <type_traits>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "app/editor/shac_run.h"
#include "app/robot_path.h"
#include "app/run_checkpoint.h"
#include "engine/cuda/cuda.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "engine/optim/write_back.h"
#include "engine/solver/solver.h"
#include "engine/solver/worlds.h"

namespace adj::editor {

std::vector<vec3<float>> ghost_path(const scene::CompiledScene& cs, const scene::Task& t,
                                    const std::vector<State>& frames) {
  std::vector<vec3<float>> path;
  for (const scene::LossTerm& l : t.loss)
    if (const scene::ObjectRange* r = cs.find(l.object); r && r->particle_end > r->particle_begin) {
      for (const State& f : frames) path.push_back(app::particle_centre(*r, f));
      return path;
    }
  if (const int body = app::tracked_robot_body(cs, t); body >= 0)
    path = app::robot_com_path(cs.model.rigid, frames, body);
  return path;
}

const char* to_string(OptPhase p) {
  switch (p) {
    case OptPhase::idle:
      return "idle";
    case OptPhase::running:
      return "running";
    case OptPhase::paused:
      return "paused";
    case OptPhase::finished:
      return "finished";
    case OptPhase::stopped:
      return "stopped";
    case OptPhase::failed:
      return "failed";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t k_timeline_bytes = 256u << 20;  // recorded frames for the timeline, at most

size_t state_bytes(const State& s) { return std::max<size_t>(1, s.bytes()); }

}  // namespace

struct Worker::Impl {
  // requests: closures run on the worker thread, in order
  mutable std::mutex queue_mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  std::atomic<int> unfinished{0};  // posted and not yet run and published
  std::atomic<uint64_t> replay_requests{0};
  // the newest frame the UI has taken (snapshot()): a simulation slower than its pace runs at
  // most one frame ahead of it, so it and the viewport share the cores as a pipeline (the UI
  // draws frame F while frame F + 1 is computed) instead of one starving the other
  std::atomic<int> taken_frame{0};
  bool quit = false;

  // published
  mutable std::mutex pub_mu;
  Snapshot pub;
  std::vector<State> timeline;  // frames 0.. of the current simulation

  // worker-thread state
  scene::Scene doc;
  std::string base_dir;
  std::unique_ptr<scene::CompiledScene> cs;
  uint64_t generation = 0;
  std::unique_ptr<Solver> solver;
  std::unique_ptr<CudaSolver> cuda_solver;  // settings.backend "cuda", when it could start
  std::string backend = "cpu", backend_error;
  State cur, next;
  Control control;
  Contacts contacts;
  // the Simulation panel's world count: world 0 is cur (the inspected one, with contacts, pulls
  // and the timeline); worlds 1.. step beside it, each with its parameters from settings.randomize
  int world_count = 1;
  std::unique_ptr<Worlds> worlds;  // all world_count worlds' models (world 0's state is cur)
  std::vector<State> world_next;   // worlds 1..: their next states
  std::vector<Control> world_control;
  int frame = 0;
  bool playing = false;
  int pending_steps = 0;
  double speed = 1.0;
  Clock::time_point next_due{};
  std::string sim_error;
  // steps per second, over the last second
  Clock::time_point rate_start = Clock::now();
  int rate_frames = 0;
  double steps_per_second = 0;

  // the optimization: one task (optim::make_task, whatever the scene holds), trained by its
  // own full-horizon gradient or, for OptMethod::shac / pods, by SHAC or PODS
  std::unique_ptr<optim::TaskT<float>> task;
  std::unique_ptr<PolicyRun> shac;                   // SHAC or PODS
  std::unique_ptr<optim::TaskT<float>> replay_task;  // evaluates a kept iteration again (Worker::replay)
  std::vector<State> best_frames;                    // the best iteration's rollout (guarded by pub_mu)
  std::vector<State> replay_frames;                  // the replayed one (guarded by pub_mu)
  OptPhase phase = OptPhase::idle;
  std::string opt_task, opt_error;
  int opt_target = 0;
  int opt_windows = 0;         // SHAC: the run's windows in all (a continued run has done some)
  std::uint64_t opt_seed = 0;  // SHAC: the run's seed (its checkpoints' identity)
  bool opt_ahac = false;       // the SHAC run is AHAC's (its checkpoints' identity)
  int checkpoint_serial = 0;
  bool checkpoint_ok = false;
  std::string checkpoint_text;
  uint64_t opt_generation = 0;
  std::vector<float> best_theta;  // the evaluated theta with the lowest loss (Snapshot::best_theta)
  std::vector<std::string> opt_notes;
  std::vector<std::vector<float>> thetas;  // every iteration's (guarded by pub_mu), see iteration_theta
  size_t theta_floats = 0;
  int best_iteration = -1;
  double best_loss = 0;
  std::string grad_check_task;
  int grad_check_samples = 0;
  bool grad_check_pending = false;

  std::thread thread;

  // solver threads: all cores but one, which the UI thread and the GPU driver keep
  static int thread_count() { return std::max(1, int(std::thread::hardware_concurrency()) - 1); }

  void post(std::function<void()> fn) {
    {
      std::lock_guard lock(queue_mu);
      queue.push_back(std::move(fn));
      ++unfinished;
    }
    cv.notify_one();
  }

  bool busy() const { return pending_steps > 0 || (phase == OptPhase::running && !throttled()) || grad_check_pending; }

  // the scene's settings.backend: CUDA when asked for and it starts, else the CPU with
  // the reason in backend_error
  void select_backend() {
    cuda_solver.reset();
    backend = "cpu";
    backend_error.clear();
    if (doc.settings.backend != "cuda") return;
    // particles and bodies step together on the device (engine/cuda/cuda_coupled.cuh); a scene
    // with mesh body shapes is refused by upload() with the shape named, and runs on the CPU
    std::string why;
    if (!cuda_available(&why)) {
      backend_error = "CUDA backend unavailable (" + why + "): simulating on the CPU";
      return;
    }
    auto gpu = std::make_unique<CudaSolver>(SolverOptions{.substeps = cs->substeps, .thread_count = thread_count()});
    if (Status st = gpu->upload(model0()); !st) {
      backend_error = "CUDA backend failed (" + st.message() + "): simulating on the CPU";
      return;
    }
    cuda_solver = std::move(gpu);
    backend = "cuda";
  }

  // the worlds beside world 0 for the current scene (keep: their states go on where sizes allow)
  void make_worlds(bool keep) {
    std::vector<State> kept;
    if (keep && worlds)
      for (int w = 1; w < worlds->world_count(); ++w) kept.push_back(worlds->state(w));
    worlds.reset();
    world_next.clear();
    world_control.clear();
    if (!cs || world_count <= 1) return;
    auto made = Worlds::create(cs->model, {.world_count = world_count,
                                           .thread_count = std::min(thread_count(), world_count - 1),
                                           .seed = doc.tasks.empty() ? 0 : doc.tasks.front().seed,
                                           .randomize = cs->randomize,
                                           .solver = {.substeps = cs->substeps, .thread_count = 1}});
    if (!made) {
      sim_error = made.status().message();
      return;
    }
    worlds = std::make_unique<Worlds>(std::move(*made));
    world_next.resize(std::size_t(world_count));
    for (int w = 0; w < world_count; ++w) world_control.push_back(worlds->model(w).make_hold_control());
    for (int w = 1; w < world_count && std::size_t(w - 1) < kept.size(); ++w)
      if (kept[std::size_t(w - 1)].bytes() == worlds->state(w).bytes()) worlds->state(w) = kept[std::size_t(w - 1)];
  }
  // world 0's model: the scene's, or with several worlds its randomized one
  const Model& model0() const { return worlds ? worlds->model(0) : cs->model; }

  void reset_sim() {
    playing = playing && cs;
    pending_steps = 0;
    frame = 0;
    sim_error.clear();
    contacts.clear();
    if (!cs) return;
    make_worlds(false);
    cur = model0().make_state();
    next = model0().make_state();
    // PD actuators hold the initial pose (the pose set with the inspector's joint sliders)
    control = model0().make_hold_control();
    if (cs->has_robots()) (void)rigid_contacts(model0().rigid, cur, control, contacts.bodies);
    std::lock_guard lock(pub_mu);
    timeline.clear();
    timeline.push_back(cur);
  }

  int pull_particle = -1;
  vec3<float> pull_target{};

  void apply_pull() {
    std::fill(control.particle_f.begin(), control.particle_f.end(), vec3<float>());
    if (pull_particle < 0 || pull_particle >= cur.particle_count()) return;
    const size_t p = size_t(pull_particle);
    float m = model0().particle_mass[p];
    if (m <= 0) return;  // pinned
    // a critically damped spring of 4 Hz on the particle, towards the target
    const float w = 2.0f * 3.14159265f * 4.0f;
    const vec3<float> x = cur.particle_q[p], v = cur.particle_qd[p];
    control.particle_f[p] = (pull_target - x) * (m * w * w) - v * (2.0f * m * w);
  }

  void step_sim() {
    if (!cs) return;
    apply_pull();
    // the one solver: particles, bodies and their contact in one step
    Status st = cuda_solver ? cuda_solver->step(cur, next, control, cs->frame_dt)
                            : solver->step(model0(), cur, next, control, cs->frame_dt, &contacts);
    if (cuda_solver) contacts.clear();  // the GPU solver does not report its contacts
    if (st && worlds)                   // the other worlds, one per thread
      st = worlds->run([&](int w, Solver& s) {
        if (w == 0) return Status::ok();
        Status ws = s.step(worlds->model(w), worlds->state(w), world_next[std::size_t(w)],
                           world_control[std::size_t(w)], cs->frame_dt);
        if (ws) std::swap(worlds->state(w), world_next[std::size_t(w)]);
        return ws;
      });
    if (!st) {
      sim_error = "frame " + std::to_string(frame) + ": " + st.message();
      playing = false;
      pending_steps = 0;
      return;
    }
    std::swap(cur, next);
    ++frame;
    ++rate_frames;
    std::lock_guard lock(pub_mu);
    if (timeline.size() * state_bytes(cur) < k_timeline_bytes) timeline.push_back(cur);
  }

  void publish() {
    auto now = Clock::now();
    double dt = std::chrono::duration<double>(now - rate_start).count();
    if (dt >= 0.5) {
      steps_per_second = rate_frames / dt;
      rate_frames = 0;
      rate_start = now;
    }
    std::lock_guard lock(pub_mu);
    Snapshot& s = pub;
    s.generation = generation;
    s.frame = frame;
    s.time = cs ? frame * double(cs->frame_dt) : 0.0;
    s.playing = playing;
    s.pending_steps = pending_steps;
    s.steps_per_second = playing || pending_steps > 0 ? steps_per_second : 0.0;
    s.recorded_frames = int(timeline.size());
    s.state = cur;
    s.world_states.resize(worlds ? std::size_t(worlds->world_count() - 1) : 0);
    for (std::size_t w = 0; w < s.world_states.size(); ++w) s.world_states[w] = worlds->state(int(w) + 1);
    s.contacts = contacts;
    s.rigid_contacts = contacts.bodies;
    s.sim_error = sim_error;
    s.backend = backend;
    s.backend_error = backend_error;
    s.opt_phase = phase;
    s.opt_task = opt_task;
    s.opt_error = opt_error;
    s.opt_generation = opt_generation;
    s.opt_run = opt_run;
    s.recording_rollouts = records_rollouts() && (phase == OptPhase::running || phase == OptPhase::paused);
    s.opt_iterations = opt_target;
    s.best_theta = best_theta;
    s.opt_notes = opt_notes;
    s.checkpoint_serial = checkpoint_serial;
    s.checkpoint_ok = checkpoint_ok;
    s.checkpoint_text = checkpoint_text;
    s.best_iteration = best_iteration;
    s.best_loss = best_loss;
    s.grad_check_running = grad_check_pending;
    s.ghost_paths = ghost_paths;
    s.pull_paths = pull_paths;
    s.ghost_losses = ghost_losses;
    s.opt_shac = shac != nullptr;
    if (shac) {
      publish_runner(s, *shac, {});
      s.train_return = shac->train_returns();
      s.step_grad_norms.clear();
      s.has_opt_final_state = !shac->frames().empty();
      if (s.has_opt_final_state) s.opt_final_state = shac->final_state();
    } else if (task) {
      publish_runner(s, *task, task->blocks());
      s.train_return.clear();
      s.step_grad_norms = task->step_grad_norms();
      s.has_opt_final_state = !task->history().empty();
      if (s.has_opt_final_state) s.opt_final_state = task->final_state();
    } else {
      s.opt_iteration = 0;
      s.opt_ms = 0;
      s.loss.clear();
      s.grad_norm.clear();
      s.train_return.clear();
      s.step_grad_norms.clear();
      s.theta.clear();
      s.theta_names.clear();
      s.grad.clear();
      s.blocks.clear();
      s.has_opt_final_state = false;
    }
    // the viewport's optimized result: the end of the best iteration's rollout (what Apply
    // writes), else of the last
    s.opt_final_iteration = s.has_opt_final_state ? int(s.loss.size()) - 1 : -1;
    if (s.has_opt_final_state && best_iteration >= 0 && !best_frames.empty()) {
      s.opt_final_state = best_frames.back();
      s.opt_final_iteration = best_iteration;
    }
  }

  // whether two optimizations publish the same parameter blocks (same entries, same elements)
  static bool same_blocks(const std::vector<optim::ParamBlock>& a, const std::vector<optim::ParamBlock>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const optim::ParamBlock& x, const optim::ParamBlock& y) {
                        return x.kind == y.kind && x.object == y.object && x.offset == y.offset && x.count == y.count &&
                               x.elements == y.elements && x.index == y.index;
                      });
  }

  // the optimizer's history, parameters and gradient (the task or SHAC)
  template <class R>
  static void publish_runner(Snapshot& s, const R& r, const std::vector<optim::ParamBlock>& blocks) {
    const auto& h = r.history();
    s.opt_iteration = int(h.size());
    s.loss.resize(h.size());
    s.grad_norm.resize(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      s.loss[i] = h[i].loss;
      s.grad_norm[i] = h[i].grad_norm;
    }
    s.opt_ms = h.empty() ? 0.0 : h.back().ms;
    s.opt_rejected = int(std::count_if(h.begin(), h.end(), [](const optim::IterationStats& x) { return x.rejected; }));
    s.theta = r.theta();
    s.grad = r.grad();
    const bool new_blocks = !same_blocks(s.blocks, blocks);
    if (new_blocks) s.blocks = blocks;
    if (new_blocks || s.theta_names.size() != std::min<size_t>(s.theta.size(), 64)) {
      s.theta_names.clear();
      for (int i = 0; i < int(std::min<size_t>(s.theta.size(), 64)); ++i) s.theta_names.push_back(r.entry_name(i));
    }
  }

  std::vector<std::vector<vec3<float>>> ghost_paths, pull_paths;
  std::vector<float> ghost_losses;

  // recorded rollouts for the video of an optimization (guarded by pub_mu)
  int record_fps = 0;  // 0: off
  std::deque<RecordedRollout> rollouts;
  std::atomic<int> rollouts_queued{0};
  uint64_t opt_run = 0;

  bool optimizing() const { return task || shac; }
  bool records_rollouts() const { return record_fps > 0 && optimizing(); }
  // the video is behind: the optimizer waits for take_rollout()
  bool throttled() const { return record_fps > 0 && rollouts_queued.load() >= Worker::k_rollout_queue; }

  void add_ghost(std::vector<vec3<float>> path, double loss) {
    ghost_paths.push_back(std::move(path));
    ghost_losses.push_back(float(loss));
    if (ghost_paths.size() > Worker::k_ghosts) {
      ghost_paths.erase(ghost_paths.begin());
      ghost_losses.erase(ghost_losses.begin());
    }
  }

  std::vector<vec3<float>> ghost_path(const scene::Task& t, const std::vector<State>& frames) const {
    return editor::ghost_path(*cs, t, frames);
  }

  // an iteration's rollout for the video: its frames at the video's stride, with its ghost path
  void record_rollout(const std::vector<State>& frames, std::vector<vec3<float>> path, int iteration, double loss) {
    if (!records_rollouts() || frames.empty()) return;
    const int horizon = int(frames.size()) - 1;
    const int stride = std::max(1, int(std::lround(horizon / double(std::max(record_fps, 1)))));
    RecordedRollout out{opt_run, opt_task, iteration, loss, double(cs->frame_dt), {}, {}, {}};
    for (int t = 0; t <= horizon; ++t)
      if (t % stride == 0 || t == horizon) {
        out.states.push_back(frames[size_t(t)]);
        out.frames.push_back(t);
      }
    out.path = std::move(path);
    std::lock_guard lock(pub_mu);
    rollouts.push_back(std::move(out));
    ++rollouts_queued;
  }

  // one iteration of the task or of SHAC: the rollout it measured (the frames it kept, at
  // the parameters before its step) gives the ghost path and the video's frames
  template <class Method>
  void iterate(Method& m) {
    std::vector<float> before = m.theta();
    auto it = m.iterate();
    if (!it) {
      phase = OptPhase::failed;
      opt_error = opt_task + ", iteration " + std::to_string(m.history().size()) + ": " + it.status().message();
      return;
    }
    if (keep_best(std::move(before), it->iteration, it->loss)) {  // its rollout, for a replay of the best
      std::lock_guard lock(pub_mu);
      best_frames = m.frames();
    }
    // every iteration's ghost, shown or not: ticking Ghosts later shows the iterations so far
    // (not a rejected point whose rollout failed: its frames stop where it failed)
    if (it->failure.empty()) {
      std::vector<vec3<float>> path = ghost_path(m.task(), m.frames());
      if (!path.empty()) add_ghost(path, it->loss);
      record_rollout(m.frames(), std::move(path), it->iteration, it->loss);
    }
    if (it->stalled || int(m.history().size()) >= opt_target) {  // stalled: backtracking found no lower loss
      if constexpr (requires { m.finish(); })  // optimizer.backtrack: a last step that raised the loss undone
        if (m.task().optimizer.backtrack) (void)m.finish();
      phase = OptPhase::finished;
    }
  }

  // the iteration's loss was measured at `theta` (before its step); true when it is the best so far
  bool keep_best(std::vector<float> theta, int iteration, double loss) {
    {
      std::lock_guard lock(pub_mu);
      if (iteration == int(thetas.size()) && theta_floats + theta.size() <= Worker::k_kept_floats) {
        thetas.push_back(theta);
        theta_floats += theta.size();
      }
    }
    if (best_iteration >= 0 && !(loss < best_loss)) return false;
    best_theta = std::move(theta);
    best_iteration = iteration;
    best_loss = loss;
    return true;
  }

  // the replay of iteration i (-1: the best): the best's rollout as it was measured, another
  // iteration's evaluated again at its kept parameters on a copy of the task
  void replay(int i, uint64_t request) {
    ReplayInfo info;
    info.request = request;
    info.run = opt_run;
    info.task = opt_task;
    std::vector<State> frames;
    if (i < 0 || i == best_iteration) {
      std::lock_guard lock(pub_mu);
      frames = best_frames;
      info.iteration = best_iteration;
      info.loss = best_loss;
      if (frames.empty()) info.error = "no iteration has finished yet";
    } else if (shac) {
      info.error = "SHAC and PODS keep the best iteration's rollout only";
    } else {
      std::vector<float> theta;
      {
        std::lock_guard lock(pub_mu);
        if (i < int(thetas.size())) theta = thetas[size_t(i)];
      }
      const scene::Task* t = doc.find_task(opt_task);
      if (theta.empty() || !t || !cs) {
        info.error = "iteration " + std::to_string(i) + "'s parameters are not kept";
      } else {
        if (!replay_task) {
          auto made = optim::make_task(*cs, *t, {.thread_count = thread_count(), .keep_frames = true});
          if (made)
            replay_task = std::move(*made);
          else
            info.error = made.status().message();
        }
        if (replay_task) {
          auto l = replay_task->evaluate(theta);
          if (l) {
            frames = replay_task->frames();
            info.iteration = i;
            info.loss = double(*l);
          } else {
            info.error = l.status().message();
          }
        }
      }
    }
    publish_replay(info, std::move(frames));
  }

  // a replay's frames and what they are, handed to the UI together
  void publish_replay(ReplayInfo& info, std::vector<State> frames) {
    info.frames = int(frames.size());
    std::lock_guard lock(pub_mu);
    replay_frames = std::move(frames);
    pub.replay = info;
  }

  void replay_checkpoint(const std::string& dir, uint64_t request) {
    ReplayInfo info;
    info.request = request;
    info.run = opt_run;
    std::vector<State> frames;
    auto p = app::read_policy_checkpoint(dir);
    auto e = p ? app::evaluate_policy_checkpoint(*p, doc, base_dir) : Result<app::PolicyEpisode>(p.status());
    if (e) {
      frames = std::move(e->states);
      info.task = p->task;
      info.iteration = p->trained - 1;
      info.loss = e->eval_cost;
      char text[160];
      std::snprintf(text, sizeof text, "evaluation return %.6g over %d frames", e->eval_return, e->length);
      info.label = "the " + p->method + " policy of " + p->ck.file + ": " + text;
    } else {
      info.error = e.status().message();
    }
    publish_replay(info, std::move(frames));
  }

  void clear_optimization() {
    task.reset();
    shac.reset();
    replay_task.reset();
    phase = OptPhase::idle;
    opt_task.clear();
    opt_error.clear();
    opt_target = 0;
    opt_generation = 0;
    opt_notes.clear();
    best_theta.clear();
    best_iteration = -1;
    ghost_paths.clear();
    pull_paths.clear();
    ghost_losses.clear();
    grad_check_pending = false;
    std::lock_guard lock(pub_mu);
    thetas.clear();
    theta_floats = 0;
    best_frames.clear();
    replay_frames.clear();
    pub.replay = {};
    pub.grad_check_text.clear();
    pub.grad_check_rows.clear();
    pub.grad_check_max_rel_err = -1;
  }

  // the SHAC run's checkpoint, with the command line's identity and totals (app/run_checkpoint.h)
  void save_checkpoint(const std::string& dir) {
    ++checkpoint_serial;
    checkpoint_ok = false;
    auto* run = dynamic_cast<ShacRun*>(shac.get());
    if (!run) {
      checkpoint_text = "Save checkpoint: no SHAC run to save (start the task's training with the SHAC method first)";
      return;
    }
    optim::Checkpoint ck;
    dist::LocalCommunicator alone;
    app::RunTotals totals;
    if (!run->history().empty()) totals.first = run->history().front().loss;
    const nlohmann::json identity =
        app::shac_run_identity(doc.name, opt_task, opt_windows, opt_seed, opt_ahac ? "ahac" : "shac");
    Status st = run->trainer().save(ck);
    if (st) st = app::write_run_checkpoint(dir, identity, totals, ck, alone);
    if (!st) {
      checkpoint_text = "Save checkpoint: " + st.message();
      return;
    }
    char fp[40];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(run->trainer().fingerprint()));
    checkpoint_ok = true;
    checkpoint_text = "checkpoint after window " + std::to_string(run->trainer().iteration()) + " of " +
                      std::to_string(opt_windows) + " written to " + dir + " (weights fingerprint " + fp +
                      "); continue it here or with: adjoint optimize SCENE --task \"" + opt_task + "\" --method " +
                      (opt_ahac ? "ahac" : "shac") + " --envs " + std::to_string(run->trainer().env_count()) +
                      " --seed " + std::to_string(opt_seed) + " --iterations " + std::to_string(opt_windows) +
                      " --resume " + dir;
  }

  void optimize_once() {
    if (!shac) return iterate(*task);
    iterate(*shac);
    pull_paths.clear();
    for (int which = 0; which < 2; ++which)
      if (const std::vector<State>* f = shac->pulled(which); f && !f->empty())
        pull_paths.push_back(ghost_path(shac->task(), *f));
  }

  void grad_check() {
    grad_check_pending = false;
    std::string text;
    double worst = -1;
    std::vector<optim::GradCheckRow> rows;
    const scene::Task* task = doc.find_task(grad_check_task);
    if (!task) {
      text = "no task named \"" + grad_check_task + "\"";
    } else if (auto csd = scene::compile<double>(doc, base_dir); !csd) {
      text = csd.status().message();
    } else if (auto r = optim::make_task(*csd, *task, {.thread_count = thread_count()}); !r) {
      text = r.status().message();
    } else if (auto rep = (*r)->check_grad(grad_check_samples, 1e-6, 0); !rep) {
      text = rep.status().message();
    } else {
      text = rep->format();
      worst = rep->max_rel_err;
      rows = rep->rows;
    }
    std::lock_guard lock(pub_mu);
    pub.grad_check_text = text;
    pub.grad_check_max_rel_err = worst;
    pub.grad_check_rows = std::move(rows);
  }

  void run() {
    while (true) {
      std::deque<std::function<void()>> jobs;
      {
        std::unique_lock lock(queue_mu);
        if (queue.empty() && !busy()) {
          if (playing)
            cv.wait_until(lock, next_due);
          else
            cv.wait_for(lock, std::chrono::milliseconds(100));
        }
        if (quit) return;
        jobs.swap(queue);
      }
      for (auto& job : jobs) job();
      if (!jobs.empty()) {
        publish();
        unfinished -= int(jobs.size());
      }

      if (grad_check_pending) {
        grad_check();
        publish();
      }
      if (phase == OptPhase::running && optimizing() && !throttled()) {
        optimize_once();
        publish();
      }
      if (pending_steps > 0) {
        step_sim();
        pending_steps = std::max(0, pending_steps - 1);
        publish();
      } else if (playing && cs) {
        auto now = Clock::now();
        const auto period = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(double(cs->frame_dt) / std::max(speed, 1e-3)));
        // a simulation that cannot keep its pace runs at most one frame ahead of the frame the
        // UI took (one that keeps it plays on schedule, faster than the UI draws if it must)
        const bool behind = now - next_due > period;
        if (behind && frame > taken_frame.load()) {
          std::unique_lock lock(queue_mu);  // snapshot() wakes it
          cv.wait_for(lock, std::chrono::milliseconds(20),
                      [&] { return quit || !queue.empty() || frame <= taken_frame.load(); });
        } else if (now >= next_due) {
          step_sim();
          next_due = std::max(next_due + period, now - period * 4);  // fall behind at most 4 frames
          publish();
        }
      }
    }
  }
};

namespace {
// the worker (and the solver threads it starts, which inherit it) yields the CPU to the UI
// thread and to the GPU driver, which on lavapipe renders on the CPU: the viewport stays
// smooth and the simulation falls behind real time instead (its rate is in the status line)
void yield_to_ui() {
#if defined(__linux__)
  setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), 5);
#endif
}
}  // namespace

Worker::Worker() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([this] {
    yield_to_ui();
    impl_->run();
  });
}

Worker::~Worker() {
  {
    std::lock_guard lock(impl_->queue_mu);
    impl_->quit = true;
  }
  impl_->cv.notify_one();
  impl_->thread.join();  // waits for the optimizer iteration in progress, if any
}

void Worker::set_scene(const scene::Scene& doc, const scene::CompiledScene& compiled, const std::string& base_dir,
                       uint64_t generation, bool restart) {
  auto cs = std::make_shared<scene::CompiledScene>(compiled);
  impl_->post([im = impl_.get(), doc, cs, base_dir, generation, restart] {
    const bool keep = !restart && im->cs && im->cs->model.particle_count() == cs->model.particle_count() &&
                      im->cs->model.rigid.q_count() == cs->model.rigid.q_count() &&
                      im->cs->model.rigid.dof_count() == cs->model.rigid.dof_count();
    im->doc = doc;
    im->base_dir = base_dir;
    im->cs = std::make_unique<scene::CompiledScene>(std::move(*cs));
    im->generation = generation;
    im->solver =
        std::make_unique<Solver>(SolverOptions{.substeps = im->cs->substeps, .thread_count = im->thread_count()});
    im->make_worlds(keep);
    im->control = im->model0().make_hold_control();
    im->select_backend();
    if (!keep) im->reset_sim();
  });
}

void Worker::set_world_count(int n) {
  impl_->post([im = impl_.get(), n] {
    im->world_count = std::clamp(n, 1, k_max_worlds);
    im->reset_sim();
    if (im->cs) im->select_backend();  // world 0's model (randomized with several worlds)
  });
}

void Worker::play(bool on) {
  impl_->post([im = impl_.get(), on] {
    im->playing = on && im->cs;
    im->next_due = Clock::now();
    if (on) im->sim_error.clear();
  });
}

void Worker::step(int frames) {
  impl_->post([im = impl_.get(), frames] {
    im->playing = false;
    im->pending_steps += std::max(0, frames);
  });
}

void Worker::reset() {
  impl_->post([im = impl_.get()] { im->reset_sim(); });
}

void Worker::set_speed(double speed) {
  impl_->post([im = impl_.get(), speed] { im->speed = speed; });
}

void Worker::start_optimize(const std::string& task_name, int iterations, const OptMethod& method) {
  impl_->post([im = impl_.get(), task_name, iterations, method] {
    ++im->opt_run;  // failed starts count too: a recording waiting for this run goes on
    im->opt_error.clear();
    im->opt_notes.clear();
    im->task.reset();
    im->shac.reset();
    im->replay_task.reset();
    {
      std::lock_guard lock(im->pub_mu);
      im->best_frames.clear();
    }
    im->opt_task = task_name;
    const scene::Task* task = im->doc.find_task(task_name);
    if (!im->cs || !task) {
      im->phase = OptPhase::failed;
      im->opt_error = im->cs ? "no task named \"" + task_name + "\"" : "no scene";
      return;
    }
    im->opt_task = task->name;
    im->ghost_paths.clear();
    im->pull_paths.clear();
    im->ghost_losses.clear();
    im->best_theta.clear();
    im->best_iteration = -1;
    {
      std::lock_guard lock(im->pub_mu);
      im->thetas.clear();
      im->theta_floats = 0;
    }
    im->opt_target = iterations > 0 ? iterations : task->optimizer.iterations;
    auto fail = [&](const std::string& message) {
      im->task.reset();
      im->phase = OptPhase::failed;
      im->opt_error = message;
    };
    // one task whatever the scene holds, as `adjoint optimize` makes it
    // it keeps its rollouts' frames: ghosts, videos and the replay of the best iterate read them
    auto made = optim::make_task(*im->cs, *task, {.thread_count = im->thread_count(), .keep_frames = true});
    if (!made) return fail(task->name + ": " + made.status().message());
    im->task = std::move(*made);
    if (method.shac) {  // windows over copies, a critic
      auto trainer = optim::make_shac_trainer(*im->task, {.envs = method.envs,
                                                          .windows = im->opt_target,
                                                          .seed = method.seed,
                                                          .thread_count = im->thread_count(),
                                                          .ahac = method.ahac});
      if (!trainer) return fail(trainer.status().message());  // the trainer's messages name the task
      im->opt_windows = im->opt_target;
      im->opt_seed = method.seed;
      im->opt_ahac = method.ahac;
      if (!method.resume.empty()) {  // a run saved here or by `adjoint optimize --checkpoint-dir`
        dist::LocalCommunicator alone;
        app::RunTotals totals;
        const nlohmann::json identity = app::shac_run_identity(im->doc.name, task->name, im->opt_windows, method.seed,
                                                               method.ahac ? "ahac" : "shac");
        auto ck = app::read_run_checkpoint(method.resume, identity, alone, totals);
        if (!ck) return fail(ck.status().message());
        if (Status st = trainer->load(*ck); !st) return fail(st.message());
        im->opt_target = std::max(0, im->opt_windows - trainer->iteration());
        im->opt_notes = {"continued from " + method.resume + " at window " + std::to_string(trainer->iteration()) +
                         " of " + std::to_string(im->opt_windows)};
      }
      im->shac = std::make_unique<ShacRun>(std::move(*trainer), *task);
    } else if (method.pods) {  // improved action sequences from randomized starts, the policy regressed onto them
      optim::PodsOptions po;
      po.order = method.order;
      po.batch = method.envs;
      po.thread_count = im->thread_count();
      scene::Task seeded = *task;
      seeded.seed = method.seed;
      auto pt = optim::make_task(*im->cs, seeded, {.thread_count = 1});
      if (!pt) return fail(pt.status().message());
      auto trainer = optim::PodsTrainerT<float>::create(**pt, po, optim::training_starts(seeded));
      if (!trainer) return fail(trainer.status().message());
      im->shac = std::make_unique<PodsRun>(std::move(*trainer), *task);
    }
    im->opt_generation = im->generation;
    im->phase = im->opt_target > 0 ? OptPhase::running : OptPhase::finished;
    // from what an earlier Apply kept in the task (per-frame inputs, policy weights)
    if (!im->shac) im->opt_notes = optim::start_from_stored(*im->task, im->task->blocks(), *task);
  });
}

void Worker::pause_optimize(bool paused) {
  impl_->post([im = impl_.get(), paused] {
    if (paused && im->phase == OptPhase::running) im->phase = OptPhase::paused;
    if (!paused && im->phase == OptPhase::paused) im->phase = OptPhase::running;
  });
}

void Worker::save_checkpoint(const std::string& dir) {
  impl_->post([im = impl_.get(), dir] { im->save_checkpoint(dir); });
}

void Worker::stop_optimize() {
  impl_->post([im = impl_.get()] {
    if (im->phase == OptPhase::running || im->phase == OptPhase::paused) im->phase = OptPhase::stopped;
  });
}

void Worker::clear_optimization() {
  impl_->post([im = impl_.get()] { im->clear_optimization(); });
}

void Worker::pull(int particle, const vec3<float>& target) {
  impl_->post([im = impl_.get(), particle, target] {
    im->pull_particle = particle;
    im->pull_target = target;
  });
}

void Worker::set_record_rollouts(int fps) {
  impl_->post([im = impl_.get(), fps] {
    im->record_fps = std::max(0, fps);
    if (im->record_fps > 0) return;
    std::lock_guard lock(im->pub_mu);
    im->rollouts.clear();
    im->rollouts_queued = 0;
  });
}

bool Worker::take_rollout(RecordedRollout& out) {
  {
    std::lock_guard lock(impl_->pub_mu);
    if (impl_->rollouts.empty()) return false;
    out = std::move(impl_->rollouts.front());
    impl_->rollouts.pop_front();
    --impl_->rollouts_queued;
  }
  // a throttled optimizer may go on; taking queue_mu first means the wake-up cannot fall
  // between its check and its wait
  { std::lock_guard lock(impl_->queue_mu); }
  impl_->cv.notify_one();
  return true;
}

int Worker::rollouts_queued() const { return impl_->rollouts_queued.load(); }

void Worker::check_gradient(const std::string& task, int samples) {
  impl_->post([im = impl_.get(), task, samples] {
    im->grad_check_task = task;
    im->grad_check_samples = samples;
    im->grad_check_pending = true;
  });
}

void Worker::snapshot(Snapshot& out) const {
  std::lock_guard lock(impl_->pub_mu);
  out = impl_->pub;
  if (impl_->taken_frame.exchange(out.frame) != out.frame) impl_->cv.notify_one();
}

bool Worker::iteration_theta(int i, std::vector<float>& out) const {
  std::lock_guard lock(impl_->pub_mu);
  if (i < 0 || i >= int(impl_->thetas.size())) return false;
  out = impl_->thetas[size_t(i)];
  return true;
}

uint64_t Worker::replay(int iteration) {
  const uint64_t request = ++impl_->replay_requests;
  impl_->post([im = impl_.get(), iteration, request] { im->replay(iteration, request); });
  return request;
}

uint64_t Worker::replay_checkpoint(const std::string& dir) {
  const uint64_t request = ++impl_->replay_requests;
  impl_->post([im = impl_.get(), dir, request] { im->replay_checkpoint(dir, request); });
  return request;
}

bool Worker::replay_state(int frame, State& out) const {
  std::lock_guard lock(impl_->pub_mu);
  if (frame < 0 || frame >= int(impl_->replay_frames.size())) return false;
  out = impl_->replay_frames[size_t(frame)];
  return true;
}

bool Worker::recorded_state(int frame, State& out) const {
  std::lock_guard lock(impl_->pub_mu);
  if (frame < 0 || frame >= int(impl_->timeline.size())) return false;
  out = impl_->timeline[size_t(frame)];
  return true;
}

bool Worker::idle() const {
  if (impl_->unfinished.load() > 0) return false;
  std::lock_guard lock(impl_->pub_mu);
  const Snapshot& s = impl_->pub;
  return s.pending_steps == 0 && s.opt_phase != OptPhase::running && !s.grad_check_running;
}

}  // namespace adj::editor
