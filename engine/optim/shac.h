// SHAC-style policy training (Xu et al. 2022, without the critic): the episode is cut into
// short windows (16-32 frames); each window runs the closed-loop policy on the task's policy
// env (TaskT::policy_env) from where the last one stopped, sums the window's frame costs (for
// a distance term: the progress made in the window) and backpropagates through those frames
// only. The gradient is clipped to a global norm and applied with Adam at once, so one
// episode gives episode / window updates. Observations are normalized with a running mean
// and standard deviation, frozen inside a window so that the window's gradient is exact.
//
//   auto task = optim::make_task(compiled, spec).value();
//   auto shac = optim::ShacTrainerT<double>::create(*task, {.window = 24});
//   for (int k = 0; k < 200; ++k) shac->step_window();   // {loss, grad_norm, frame, ...}
//   double loss = shac->evaluate().value();             // an episode's summed frame costs
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/dist/communicator.h"
#include "engine/optim/ahac.h"
#include "engine/optim/checkpoint.h"
#include "engine/optim/loss.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/parameters.h"
#include "engine/optim/policy.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

struct ShacOptions {
  int window = 24;    // frames per window
  double lr = 0;      // Adam step; 0 = the task's optimizer lr
  double clip = 1.0;  // global gradient-norm clip (SHAC's 1.0); 0 = none
  bool normalize_observations = true;
  int thread_count = 0;
};

struct ShacWindowStats {
  int window = 0;           // 0-based count of windows trained so far
  int frame = 0;            // episode frame the window started at
  double loss = 0;          // the window's loss before the step
  double grad_norm = 0;     // before clipping
  long long sim_steps = 0;  // solver substeps run so far (forward; the adjoint runs as many again)
};

// running mean and variance of each observation entry (Welford, in double)
struct RunningStats {
  std::vector<double> mean, m2;
  long long count = 0;
  void add(const double* x, int n);
  template <class S>
  void add(const std::vector<S>& x);
  double stddev(int k) const;
};

template <class S>
class ShacTrainerT {
 public:
  ShacTrainerT();
  ~ShacTrainerT();
  ShacTrainerT(ShacTrainerT&&) noexcept;
  ShacTrainerT& operator=(ShacTrainerT&&) noexcept;

  // the task needs a policy; its other parameters must be policy weights only; errors
  // name the task (window < 1 or longer than the horizon, effort terms, no policy)
  static Result<ShacTrainerT> create(const TaskT<S>& task, ShacOptions options = {});

  // train on the next window (a new episode starts when the last one is used up)
  Result<ShacWindowStats> step_window();
  // the current window's loss at weights w (and dL/dw) without stepping (for gradient checks)
  Result<S> window_loss(const std::vector<S>& w, std::vector<S>* grad);
  // an episode's summed frame costs from the task's start with the current weights (forward
  // only; not counted); for a distance term, the task's loss
  Result<S> evaluate();

  const std::vector<S>& weights() const { return w_; }
  void set_weights(std::vector<S> w) { w_ = std::move(w); }
  const PolicyEnvT<S>& env() const { return *env_; }
  long long sim_steps() const { return sim_steps_; }
  int windows_per_episode() const { return horizon_ / options_.window; }

 private:
  // copy `i` runs `frames` frames from where it is; with grad, backward through them; the
  // recorded frames are kept (the episode goes on) or undone
  Result<S> run(int i, int frames, const std::vector<S>& w, std::vector<S>* grad, bool keep);
  Result<S> window(const std::vector<S>& w, std::vector<S>* grad, bool keep);
  void normalize(const std::vector<S>& raw, std::vector<S>& obs) const;

  ShacOptions options_;
  std::unique_ptr<PolicyEnvT<S>> env_;  // copy 0 trains, copy 1 evaluates
  OptimizerT<S> optimizer_;
  RunningStats stats_;
  std::vector<S> norm_mean_, norm_inv_std_;  // frozen for a window; empty: raw observations
  std::vector<std::vector<S>> raw_;          // the last window's raw observations
  std::vector<S> w_;
  int horizon_ = 0, windows_ = 0, window_start_ = 0;
  long long sim_steps_ = 0;
};

// SHAC as Xu et al. 2022 run it: a batch of environment copies (PolicyEnvT: robots, ...)
// advances a window of `window` frames at a time under the deterministic policy; the actor
// loss is the discounted frame costs of every copy's window plus the discounted value of
// its last state, by a learned critic, averaged over copies and frames:
//   J = 1/(N W) sum_i [ sum_t gamma^t c_it + gamma^W V(s_iW) ]
// and its exact gradient (through the simulator, the policy and the critic's input; the
// critic's weights frozen) takes one clipped Adam step. The critic (tanh MLP, linear output,
// in units of mean frame cost: V = critic / (1 - gamma)) then fits TD(lambda) targets of the
// window, computed with a slowly following target critic, over a few shuffled minibatch
// passes. As in SHAC's code, the actor's terminal values come from the target critic and
// both Adams use betas (0.7, 0.95): with Kingma & Ba's (0.9, 0.999) and the online critic,
// the cartpole swing-up collapsed to hanging still for seeds 1 and 2 (the defaults below swing
// up and hold seeds 0-9, test). Observations are normalized by running statistics frozen within a
// window. Copies whose episode is used up restart, from a randomized state when the env
// randomizes. Deterministic for a seed at any thread count: each copy has its own random
// stream and its own gradient slot, summed in copy order.
//
// Over MPI ranks (BatchShacOptions::comm): each rank steps its contiguous block of the copies;
// after a window every rank receives every copy's window (costs, observations, gradient slot),
// and all ranks then take the same steps from the same sums in copy order: the same bits for
// any number of ranks with the same copies and seed. A training run's state (weights, Adam
// moments, statistics, random engines, each copy's episode) goes to a checkpoint and back
// (save/load): a resumed run continues with the same bits.
//
//   auto task = optim::make_task(compiled, spec).value();
//   auto shac = optim::BatchShacTrainerT<double>::create(*task, {}, {.env_count = 32, .q_range = 3.14});
//   for (int k = 0; k < 300; ++k) shac->step();                 // {actor_loss, critic_loss, ...}
//   double cost = shac->evaluate().value();                     // mean frame cost of one episode
// defaults: the cartpole swing-up's (robot_cartpole.json, 32 copies, 300 windows)
struct BatchShacOptions {
  int window = 32;  // frames per window
  double actor_lr = 0.01, critic_lr = 0.001;
  double clip = 1.0;  // actor global gradient-norm clip; 0 = none
  // a window whose actor gradient is not finite, or whose norm (before clipping) is above this
  // bound, is skipped: no actor step and no critic fit; the episodes go on (0 = no bound)
  double grad_bound = 1e8;
  double critic_clip = 0;            // critic global gradient-norm clip per minibatch; 0 = none
  double beta1 = 0.7, beta2 = 0.95;  // Adam's moment decays, both networks (SHAC's)
  // both learning rates fall linearly from their value towards lr_end at this window count
  // (SHAC's schedule: 1e-5 at the last epoch); 0 = constant
  int lr_decay_windows = 0;
  double lr_end = 0;
  double gamma = 0.99, lambda = 0.95;  // discount and TD(lambda)
  std::vector<int> critic_hidden{32, 32};
  MlpForm critic_form;         // the critic's activation, LayerNorm and init (the scene's shac block)
  int critic_passes = 4;       // passes over the window's samples
  int critic_minibatches = 4;  // per pass
  // target critic <- alpha target + (1 - alpha) critic (SHAC's cartpole: 0.2; with 0.2 here
  // seeds 7 and 9 of 10 collapsed to hanging still, with 0.5 none did)
  double target_alpha = 0.5;
  // the actor's terminal values from the target critic (SHAC) or from the critic just fitted
  bool actor_target_critic = true;
  bool normalize_observations = true;
  // exploration: actions are policy + action_noise x N(0, 1) in training (reparameterized: the
  // gradient flows through the policy's mean); evaluate() runs the mean. actor_loss() calls
  // draw the same noise (the copies' random streams are restored after each)
  double action_noise = 0.3;
  // a learned state-independent exploration std instead (SHAC's stochastic actor): the noise is
  // added before the policy's output squashing, a = scale tanh(z + exp(log_std) x N(0, 1)), z the
  // network's output layer before its tanh, so training actions stay within the policy's range as
  // the evaluation's scale tanh(z) does (and the previous_action observation reads that a); log_std
  // (one per action) starts at log_std_init and trains with the policy weights by the same clipped
  // Adam (d J / d log_std_k = sum_t dJ/du_tk std_k eps_tk, u = z + std eps)
  bool learned_std = false;
  double log_std_init = -1.0;
  std::uint64_t seed = 0;  // policy and critic initialization, resets, noise
  int thread_count = 0;    // copies stepped in parallel; 0 = OpenMP's default
  // the ranks that share the copies (null: this process steps them all); not owned
  dist::Communicator* comm = nullptr;
  // with several ranks: every this many windows the ranks compare their parameters' fingerprint
  int fingerprint_every = 10;
  // AHAC (ahac.h): windows cut at stiff contact, their length adapting, and a double critic
  AhacOptions ahac;
};

// TD(lambda) targets of one copy's window (the critic's targets): cost (frames), value[t] the
// value of the state after t frames (t = 0..frames; value[frames] is 0 after a termination);
// target[t] = cost[t] + gamma ((1 - lambda) value[t + 1] + lambda target[t + 1]), target[frames] =
// value[frames]
template <class S>
void td_lambda_targets(const std::vector<S>& cost, const std::vector<S>& value, int frames, S gamma, S lambda,
                       std::vector<S>& target);

// where a window's time went [s of wall time]: the copies' parts are summed over the copies,
// which run on several threads at once; idle is the threads' time in the rollout that no copy
// used (waiting at its end for the last copy); the rest runs on the calling thread, its
// parallel parts (the critic's batches) on the trainer's threads
struct ShacWindowTimes {
  double rollout = 0;          // every copy's window, forward and backward (wall)
  double sim_forward = 0;      // the env's steps: the simulator, the frame costs, terminations
  double sim_backward = 0;     // their adjoints: the costs' seeds and the simulator's adjoint
  double policy_forward = 0;   // the actor network and the exploration noise
  double policy_backward = 0;  // the actor network's backward pass
  double observe = 0;          // observations, their normalization and their adjoints
  double end_value = 0;        // the critic's value at the windows' ends and its input gradient
  double idle = 0;             // threads x rollout minus the copies' parts
  double actor_step = 0;       // the copies' gradients summed, clipped, Adam
  double critic_targets = 0;   // TD(lambda) targets through the target critic(s)
  double critic_fit = 0;       // the critics' minibatch steps and the targets' update
  double statistics = 0;       // the observations' running statistics
  ShacWindowTimes& operator+=(const ShacWindowTimes& o);
};

// the training episodes BatchShacStats::train_return averages (as SHAC's code does: its reward
// meter keeps the last 100 episodes)
constexpr int kTrainEpisodes = 100;

struct BatchShacStats {
  int iteration = 0;        // windows trained so far (0-based)
  double actor_loss = 0;    // J before the step
  double mean_cost = 0;     // mean frame cost over the window's copies and frames
  double grad_norm = 0;     // actor gradient, before clipping
  double critic_loss = 0;   // mean squared error of the last minibatch [mean-frame-cost units^2]
  double end_value = 0;     // mean critic value at the windows' ends [mean-frame-cost units]
  double value_share = 0;   // the terminal values' share of actor_loss
  long long sim_steps = 0;  // solver substeps run so far (forward; the adjoint runs as many again)
  // an exploding gradient (BatchShacOptions::grad_bound): this window was skipped, why (the
  // environment copy, the episode frame and the quantity), and how many have been so far
  bool skipped = false;
  std::string skip_reason;
  int skipped_windows = 0;
  int terminated = 0;  // copies whose episode ended early in this window (their windows cut there)
  // the papers' training reward: the mean return (the summed reward: minus the summed frame
  // costs) of the last kTrainEpisodes training episodes that ended (stochastic policy, randomized
  // starts; an episode whose step failed is left out), NaN before the first ends; and how many
  double train_return = std::numeric_limits<double>::quiet_NaN();
  int train_episodes = 0;
  // AHAC: the horizon (frames) this window ran, the copies whose window stiff contact cut, the
  // mean contact measure over the frames run [N], and the horizon and dual variable after it
  int window_frames = 0;
  int contact_cut = 0;
  double contact_mean = 0;
  double horizon = 0, dual = 0;
  ShacWindowTimes time;  // where the window's time went
};

// a network's form as a checkpoint's header keeps it (the actor's and the critic's): the scene's
// shac keys and words, {"activation": "tanh" | "elu", "layer_norm": bool, "init": "glorot" | "orthogonal"}
nlohmann::json network_form_json(const MlpForm& form);

template <class S>
class BatchShacTrainerT {
 public:
  // the copies that train: task.policy_env(env); evaluate() runs one more copy from the
  // task's start. Errors name the task.
  static Result<BatchShacTrainerT> create(const TaskT<S>& task, BatchShacOptions options = {},
                                          PolicyEnvOptions env = {});

  // one window on every copy, an actor step and the critic's fit
  Result<BatchShacStats> step();
  // J and dJ/dw at policy weights w for the next window (and dJ/d log_std with a learned std),
  // without stepping: the copies' episodes and random streams are restored (gradient checks)
  Result<S> actor_loss(const std::vector<S>& w, std::vector<S>* grad, std::vector<S>* grad_log_std = nullptr);
  // one episode of the eval copy from the task's initial state under the policy; returns the
  // mean frame cost (for the cartpole term: the task's loss); observe(t) after frame t. A step
  // that fails (the state blew up) ends the episode there, as a termination does, and does not
  // end the run: evaluation_failure() then names the frame and the quantity ("" otherwise)
  Result<S> evaluate(const std::function<void(int t, const PolicyEnvT<S>& env)>& observe = {});
  const std::string& evaluation_failure() const { return eval_failure_; }

  const std::vector<S>& weights() const { return w_; }
  void set_weights(std::vector<S> w) { w_ = std::move(w); }
  // the learned exploration std's logarithm, one per action (empty: a fixed action_noise)
  const std::vector<S>& log_std() const { return log_std_; }
  void set_log_std(std::vector<S> v) { log_std_ = std::move(v); }
  const BatchShacOptions& options() const { return options_; }
  // viewers (app/serve): the states of the first `copies` copies (those this rank steps) over
  // each window run from now on, frame 0 the window's start; 0 keeps none. Keeping them
  // changes nothing the training computes
  void keep_copy_frames(int copies) { copy_frames_.assign(std::size_t(std::clamp(copies, 0, env_count())), {}); }
  const std::vector<std::vector<StateT<S>>>& copy_frames() const { return copy_frames_; }
  long long sim_steps() const { return sim_steps_; }
  const PolicyEnvT<S>& env() const { return *env_; }  // this rank's copies (all without ranks)
  const PolicyEnvT<S>& eval_env() const { return *eval_; }
  int env_count() const { return int(copies_.size()); }  // every rank's copies
  int iteration() const { return iteration_; }           // windows trained so far
  // AHAC: the horizon T [frames] and the dual variable phi (ahac.h); SHAC: the window and 0
  double horizon() const { return horizon_; }
  double dual() const { return dual_; }
  int window_frames() const;  // the frames the next window runs (floor T)
  // the last window of copy i: the frames it ran and whether stiff contact cut it (AHAC)
  int copy_frames_run(int i) const { return copies_[std::size_t(i)].frames; }
  bool copy_cut(int i) const { return copies_[std::size_t(i)].cut; }
  // the value of a normalized observation [frame-cost units summed], as the critic targets and
  // the actor's bootstrap read it: the (target) critic's, or with AHAC's double critic the
  // larger cost of the two (the smaller return); critic_output(obs, k, target): critic k's (0 or 1) own output
  S value(const std::vector<S>& obs, bool target) const;
  S critic_output(const std::vector<S>& obs, int k, bool target) const;
  // normalized observation (the running statistics frozen)
  void normalize(const std::vector<S>& raw, std::vector<S>& obs) const;

  // the training state into a checkpoint (header "shac" and arrays), collective over the ranks:
  // every rank gets every copy's episode and random engine (rank 0 then writes the file)
  Status save(Checkpoint& ck);
  // back from a checkpoint of the same task, network shapes, copies and window; errors name
  // the file and what differs
  Status load(const Checkpoint& ck);
  // FNV-1a of the policy, critic and target critic weights
  std::uint64_t fingerprint() const;
  // with several ranks: every rank's fingerprint compared; a mismatch names the ranks
  Status check_replicas();

 private:
  struct Copy {                       // one copy's window
    std::vector<std::vector<S>> obs;  // normalized, (window + 1)
    std::vector<std::vector<S>> raw;  // (window + 1)
    std::vector<S> cost;              // (window)
    std::vector<S> d_w;               // gradient of the copy's share of J
    std::vector<S> d_log_std;         // and of the learned std's logarithm (learned_std)
    std::vector<std::vector<S>> eps;  // the window's unit exploration draws, (window) x actions (learned_std)
    std::vector<std::vector<S>> th;   // learned_std: tanh(z + std eps) of each frame, (window) x actions
    S value = S(0);                   // loss share of the copy
    S end_value = S(0);               // critic output at the window's end
    std::string blowup;               // why the copy's gradient is not finite (empty: it is)
    int frames = 0;                   // frames run: the window, or fewer where the episode ended
    int start = 0;                    // the episode frame the window started at
    bool done = false;                // the episode ended (terminated) in the window's last frame
    bool cut = false;                 // AHAC: stiff contact ended the window in its last frame
    bool failed = false;              // the simulation step failed (blew up): the window ends there, the copy restarts
    std::vector<S> contact;           // AHAC: each frame's contact measure [N], (frames)
    int critic = 0;                   // the critic whose value bootstrapped the window's end
    Status status;
    typename MlpT<S>::Batch actor;   // the policy network's values of each frame, (window)
    typename MlpT<S>::Batch end[2];  // the critics' values at the window's end
    ShacWindowTimes time;            // this copy's share of the window's time
  };
  Status run_windows(const std::vector<S>& w, bool backward);
  Status run_copy(int i, const std::vector<S>& w, bool backward);
  void fit_critic(BatchShacStats& stats);
  void adapt_horizon(BatchShacStats& stats);   // AHAC's dual step after a window
  void count_episodes(BatchShacStats& stats);  // the window's rewards into the training episodes' returns
  // with several ranks: every rank's copies' windows to every rank (shac_state.cpp)
  Status gather_copies(bool backward);
  // rank 0's weights to every rank
  Status broadcast_weights();
  bool distributed() const { return options_.comm && options_.comm->size() > 1; }

  BatchShacOptions options_;
  std::unique_ptr<PolicyEnvT<S>> env_, eval_;
  std::string eval_failure_;  // the last evaluation's failed step, if one failed
  MlpT<S> critic_;
  // learned_std: the policy network with a linear output (z; the same weights): the noise goes in
  // before the tanh the policy's own output applies
  MlpT<S> actor_z_;
  // a window's networks in the forward pass's layout (MlpT::pack): the policy, the critics that
  // bootstrap the windows' ends; the critic fit's batches
  std::vector<S> packed_w_, packed_end_[2], packed_fit_;
  typename MlpT<S>::Batch fit_batch_;
  double rollout_ = 0;       // the last window's rollout [s of wall time]
  int rollout_threads_ = 1;  // and the threads that ran it
  std::vector<S> w_, critic_w_, target_w_;
  std::vector<S> critic2_w_, target2_w_;  // AHAC's second critic (empty without)
  std::vector<S> log_std_;                // learned_std: one per action (else empty)
  struct Adam {                           // Adam with configurable moment decays; moments in double
    double lr = 0, clip = 0;
    std::vector<double> m, v;
    int t = 0;
    double step(const BatchShacOptions& o, std::vector<S>& w, const std::vector<S>& g);  // |g| before clipping
  };
  Adam actor_opt_, critic_opt_, critic2_opt_;
  RunningStats stats_;
  std::vector<S> norm_mean_, norm_inv_std_;
  std::vector<Copy> copies_;                         // every rank's copies, in copy order
  dist::Block mine_;                                 // the copies this rank steps (env_ index = copy - mine_.begin)
  std::vector<std::mt19937_64> rngs_;                // per copy: resets and noise (this rank's copies advance)
  std::vector<std::vector<StateT<S>>> copy_frames_;  // keep_copy_frames
  std::mt19937_64 rng_;                              // critic minibatches
  S value_scale_ = S(100);
  long long sim_steps_ = 0;
  int iteration_ = 0, skipped_ = 0;
  double horizon_ = 0, dual_ = 0;       // AHAC's T and phi (SHAC: the window and 0)
  std::vector<double> episode_return_;  // per copy: its episode's return so far
  std::deque<double> recent_returns_;   // the last kTrainEpisodes ended episodes' returns
};

}  // namespace adj::optim
