#pragma once
// The editor's worker thread: it owns the simulation (a model, solver and state) and the
// optimization (one optim::TaskT, whatever the scene holds), and publishes snapshots of both. The UI thread sends it
// requests and copies the latest snapshot each frame under a short lock; it never waits
// for a simulation step or an optimizer iteration.
//
//   Worker w;
//   w.set_scene(doc.scene(), compiled, doc.base_dir(), doc.revision());  // after every edit
//   w.play(true);
//   Worker::Snapshot s; w.snapshot(s);   // each UI frame
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/rigid_model.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::editor {

enum class OptPhase { idle, running, paused, finished, stopped, failed };

// the ghost path of a rollout: the centre of mass of the first loss term's object with
// particles (the cloth, the soft ball pushed to its goal), else of the robot body the task
// tracks; empty when the task tracks neither
std::vector<vec3<float>> ghost_path(const scene::CompiledScene& cs, const scene::Task& t,
                                    const std::vector<State>& frames);
const char* to_string(OptPhase p);

// one optimizer iteration's rollout, kept for the video of an optimization
// (Worker::set_record_rollouts): the states at a stride, the tracked object's path
struct RecordedRollout {
  uint64_t run = 0;  // which optimization (Snapshot::opt_run)
  std::string task;
  int iteration = 0;              // 0-based, as the optimizer's log
  double loss = 0;                // at the parameters of this rollout
  double frame_dt = 0;            // [s]
  std::vector<State> states;      // at the stride, the last frame included (frames.size()):
                                  // particles and joints, as the task stepped them
  std::vector<int> frames;        // simulation frame of each state, 0..horizon
  std::vector<vec3<float>> path;  // the first loss term's object's centre of mass, every frame
                                  // (empty when it has no particles)
};

// what Worker::replay prepared: an iteration's rollout, frames 0..frames-1 (replay_state)
struct ReplayInfo {
  uint64_t run = 0;      // the optimization it belongs to (Snapshot::opt_run)
  uint64_t request = 0;  // the Worker::replay call it answers
  std::string task;
  int iteration = -1;  // 0-based; -1: none
  double loss = 0;     // at its parameters
  int frames = 0;
  std::string error;  // why there is nothing to replay
  std::string label;  // what is replayed when it is not an iteration (a checkpoint's evaluation)
};

struct Snapshot {
  uint64_t generation = 0;  // document revision the simulation state belongs to
  // simulation
  int frame = 0;    // frames since reset
  double time = 0;  // [s]
  bool playing = false;
  int pending_steps = 0;            // requested single steps not yet taken
  double steps_per_second = 0;      // solver frames per wall second (while playing)
  int recorded_frames = 0;          // frames available to the timeline (0..recorded_frames-1)
  State state;                      // the newest frame (world 0's)
  std::vector<State> world_states;  // worlds 1.. (Worker::set_world_count), the newest frame
  Contacts contacts;                // of the newest frame
  std::string sim_error;            // the step that failed, with its element
  std::string backend = "cpu";      // the solver that runs the simulation: "cpu" or "cuda"
  std::string backend_error;        // why settings.backend "cuda" runs on the CPU (empty: as asked)
  // the robots' contacts and joint forces (empty when the scene has no robots); their joint
  // state is state.joint_q / joint_qd
  RigidContactsT<float> rigid_contacts;
  // optimization
  OptPhase opt_phase = OptPhase::idle;
  std::string opt_task;
  int opt_iteration = 0;                // iterations done
  int opt_iterations = 0;               // asked for
  double opt_ms = 0;                    // last iteration [ms]
  int opt_rejected = 0;                 // optimizer.backtrack: points rejected so far (their losses are in `loss`)
  std::vector<double> loss, grad_norm;  // per iteration
  // SHAC, AHAC: per iteration, the training return (PolicyRun::train_returns; NaN before an episode ends)
  std::vector<double> train_return;
  std::vector<float> step_grad_norms;  // |dL/dx_t| of the last iteration, t = 0..steps
  std::vector<float> theta;            // parameters after the last step
  // the evaluated parameters with the lowest loss so far (what Apply writes), its 0-based
  // iteration and loss; empty / -1 before the first iteration
  std::vector<float> best_theta;
  std::vector<std::string> opt_notes;  // stored values the task could not start from (write_back.h)
  // the last Worker::save_checkpoint's outcome (serial counts them; text: where, or why not)
  int checkpoint_serial = 0;
  bool checkpoint_ok = false;
  std::string checkpoint_text;
  int best_iteration = -1;
  double best_loss = 0;
  std::vector<float> grad;                // dLoss/dtheta of the last iteration
  std::vector<optim::ParamBlock> blocks;  // what the entries of theta and grad are
  std::vector<std::string> theta_names;   // the first few entries' names
  State opt_final_state;                  // end of the best rollout so far (particles and joints)
  // ghost trajectories: the tracked object's centre of mass over the horizon, one path per
  // iteration (newest last, at most k_ghosts), with that iteration's loss
  std::vector<std::vector<vec3<float>>> ghost_paths;
  std::vector<float> ghost_losses;
  // PODS: the last iteration's copy-0 path under the policy, then under the improved actions
  // (where the policy is being pulled to); empty for other methods
  std::vector<std::vector<vec3<float>>> pull_paths;
  bool has_opt_final_state = false;
  int opt_final_iteration = -1;  // the iteration whose rollout end opt_final_state is: the best
  bool opt_shac = false;         // a robot policy trained by SHAC (app/editor/shac_run.h)
  std::string opt_error;
  uint64_t opt_generation = 0;      // document revision the optimizer started from
  uint64_t opt_run = 0;             // optimizations started so far
  bool recording_rollouts = false;  // this optimization's rollouts go to a video (running or paused)
  ReplayInfo replay;                // the last Worker::replay
  // gradient check
  bool grad_check_running = false;
  std::string grad_check_text;  // the table as text, or the error
  std::vector<optim::GradCheckRow> grad_check_rows;
  double grad_check_max_rel_err = -1;
};

// how start_optimize trains a policy task: the task's full-horizon gradient (BPTT, as
// `adjoint optimize`) or SHAC (as `adjoint optimize --method shac`: windows over `envs`
// randomized copies and a critic) or PODS (as `--method pods`); tasks without a policy
// always use BPTT
struct OptMethod {
  bool shac = false;
  bool ahac = false;  // with shac: AHAC (engine/optim/ahac.h), as `--method ahac`
  bool pods = false;  // PODS (engine/optim/pods.h) of `order`, `envs` episodes per iteration
  int order = 1;
  int envs = 32;
  std::uint64_t seed = 0;
  // SHAC: continue the run whose checkpoint folder this is (written by `adjoint optimize
  // --checkpoint-dir` or Worker::save_checkpoint) instead of starting a new one
  std::string resume;
};

class Worker {
 public:
  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // a new document revision: the simulation restarts from the compiled scene's initial
  // state; a running optimization keeps its own copy until stopped. restart = false (an
  // edit that simulates the same, editor/document.h same_simulation): the frame, the
  // playback and the timeline go on under the new revision
  void set_scene(const scene::Scene& doc, const scene::CompiledScene& compiled, const std::string& base_dir,
                 uint64_t generation, bool restart = true);
  void play(bool on);
  void step(int frames);  // as fast as possible, then pause
  void reset();
  void set_speed(double speed);  // 1 = real time
  // the Simulation panel's world count (1..k_max_worlds): copies of the scene stepped beside the
  // inspected world 0, each with its parameters from settings.randomize; restarts the simulation
  static constexpr int k_max_worlds = 64;
  void set_world_count(int n);
  // MuJoCo's perturbation: a spring pulls `particle` towards `target` [m] while the
  // simulation runs (stiffness scaled by the particle's mass); particle < 0 releases it
  void pull(int particle, const vec3<float>& target);
  // ghost trajectories: the last k_ghosts iterations' paths (Snapshot::ghost_paths), always kept
  static constexpr size_t k_ghosts = 24;
  // the video of an optimization: each iteration's rollout at its parameters is kept at a
  // stride of about one second of video at `fps`, queued for take_rollout(); beyond
  // k_rollout_queue waiting, the optimizer waits for the video. fps <= 0: off, drops the queue
  void set_record_rollouts(int fps);
  static constexpr int k_rollout_queue = 3;
  // the oldest finished iteration's rollout (false when none is waiting); never blocks
  bool take_rollout(RecordedRollout& out);
  int rollouts_queued() const;
  // optimization of the task (by name) for `iterations` (<= 0: the task's own count)
  void start_optimize(const std::string& task, int iterations, const OptMethod& method = {});
  void pause_optimize(bool paused);
  // the SHAC run's whole training state into DIR/checkpoint.adjck, as `adjoint optimize
  // --checkpoint-dir DIR` writes it (so `--resume DIR` continues it); the outcome in
  // Snapshot::checkpoint_text. Between two windows, whatever the run's phase
  void save_checkpoint(const std::string& dir);
  void stop_optimize();
  // forget the optimization and the gradient check (another document was opened): stops
  // the runner; the snapshot's optimization fields go back to idle and empty
  void clear_optimization();
  // analytic vs central differences in double precision, `samples` entries
  void check_gradient(const std::string& task, int samples);

  // the parameters iteration i (0-based) measured, for Apply of an iteration picked on the
  // loss plot; false when not kept (every iteration is kept up to k_kept_floats in all)
  bool iteration_theta(int i, std::vector<float>& out) const;
  static constexpr size_t k_kept_floats = size_t(16) << 20;

  // the latest published state; copies under a short lock
  void snapshot(Snapshot& out) const;
  // the rollout of iteration `iteration` (-1: the best) for replay: the best's as it was
  // measured, another's evaluated again at its kept parameters; Snapshot::replay says when
  // it is ready (or why not), replay_state reads its frames
  uint64_t replay(int iteration);  // the request's number (ReplayInfo::request of its answer)
  // the evaluation episode of the policy checkpoint in DIR (SHAC, AHAC or PPO, as `adjoint
  // render --policy` runs it: app/run_checkpoint.h) for replay, the same way: ReplayInfo's
  // label names it (and its return), loss is its mean frame cost; error: why not
  uint64_t replay_checkpoint(const std::string& dir);
  bool replay_state(int frame, State& out) const;
  // a recorded frame of the simulation for the timeline (false if not recorded)
  bool recorded_state(int frame, State& out) const;
  // true when nothing is queued, no steps are pending and no optimization is running
  bool idle() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adj::editor
