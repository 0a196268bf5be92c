// PPO (Schulman et al. 2017), the model-free baseline on the same simulator and the same
// network, with the recipe of well-kept implementations (CleanRL's ppo_continuous_action,
// rl_games as SHAC's paper ran it):
//   - a Gaussian policy whose mean is the task's MLP policy output (PolicyT)
//     and whose log standard deviations are free parameters, one per output; the sampled
//     action is clipped to the mean's range (+-output_scale) before it reaches the world, the
//     log-probability is that of the unclipped draw;
//   - env_count copies of the world (PolicyEnvOptions::env_count) that each run
//     steps_per_env frames per iteration; episodes continue across iterations, end at the
//     task's horizon (a time limit: the value of the last state bootstraps the return) and
//     restart from a randomized state when the env randomizes;
//   - observations normalized by their running mean and standard deviation (clipped to
//     +-obs_clip); rewards scaled by a constant, or (an option) divided by the running
//     standard deviation of the discounted return (clipped to +-reward_clip);
//   - generalized advantage estimation (gamma, lambda), advantages normalized per minibatch;
//   - the clipped surrogate objective with an entropy bonus; a separate value network (tanh
//     MLP, linear output), its loss optionally clipped; Adam over shuffled minibatches, each
//     gradient clipped to max_grad_norm; the step size annealed linearly over a budget.
// Deterministic for a seed: each copy draws its resets and action noise from a stream of its
// own, the learner its initial value weights and shuffles from another; fixed loop orders, no
// threads in the learner.
//
// Over MPI ranks (PpoOptions::comm): each rank steps its contiguous block of the copies; every
// frame the copies' observations and returns reach every rank for the running statistics, and
// at the end of the collection every copy's samples, in copy order, so every rank runs the
// same update on the same batch: the same bits for any number of ranks.
//
// Rewards are the negated frame costs (policy_env.h: particle tasks r_t = L(t) - L(t + 1), so
// an episode's return is L(0) - L(T), for a distance loss the distance travelled; robot tasks
// the task's per-frame cost), and evaluate() returns the mean frame cost of an episode from
// the task's initial state under the mean action.
//
//   auto task = optim::make_task(compiled_double, spec).value();
//   auto ppo = optim::PpoTrainer::create(*task, {.seed = 1}, {.env_count = 64}).value();
//   while (ppo.sim_steps() < budget) { auto it = ppo.iterate(); ... ppo.evaluate() ... }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/dist/communicator.h"
#include "engine/optim/checkpoint.h"
#include "engine/optim/mlp.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/task.h"

namespace adj::optim {

// the defaults are what swings the cartpole up (docs/benchmarks.md, "Sample efficiency"); value clipping
// and return normalization are there, off: on the cartpole, tuning runs with return
// normalization stayed hanging and value clipping took twice the steps
struct PpoOptions {
  std::uint64_t seed = 0;
  int steps_per_env = 32;                  // frames each copy runs per iteration (batch: env_count x this)
  int epochs = 5;                          // passes over the batch
  int minibatches = 16;                    // gradient steps per epoch (the batch split evenly)
  double lr = 1e-3;                        // Adam, policy and value network
  long long lr_anneal_steps = 0;           // > 0: lr falls linearly to 0 at this many substeps
  double clip_ratio = 0.2;                 // epsilon of the clipped objective
  double value_clip = 0;                   // > 0: the value's change per update is clipped in its loss
  double gamma = 0.99, lambda = 0.95;      // discount and GAE
  double max_grad_norm = 0.5;              // global-norm clip of each minibatch gradient (per network)
  double entropy_coef = 0.0;               // weight of the policy's entropy bonus
  double initial_log_std = -0.5;           // log sigma of every output at the start
  std::vector<int> value_hidden{64, 64};   // value network: obs -> tanh(hidden)... -> 1
  double value_coef = 0.5;                 // weight of the value loss in the value network's step
  bool normalize_observations = true;      // running mean / std of the observations
  bool normalize_rewards = false;          // rewards / running std of the discounted return
  double obs_clip = 10, reward_clip = 10;  // after normalization
  // rewards are multiplied by this for learning: Adam moves the value network's output by
  // about lr x its width per step, so returns of O(10) fit well, O(100) slowly
  double reward_scale = 1.0;
  int thread_count = 1;  // solver threads of each copy (particle stages)
  // MPI ranks sharing the copies (null: this process alone); every `fingerprint_every`
  // iterations the ranks compare their parameters and stop when one differs
  dist::Communicator* comm = nullptr;
  int fingerprint_every = 10;
};

struct PpoIteration {
  int iteration = 0;
  long long sim_steps = 0;                 // solver substeps run so far (collection only)
  double mean_reward = 0;                  // unscaled reward per frame over the iteration's frames
  int episodes = 0;                        // episodes that ended during the iteration
  double mean_return = 0;                  // their undiscounted, unscaled return (the previous value if none ended)
  double policy_loss = 0, value_loss = 0;  // last minibatch's
  double approx_kl = 0;                    // last epoch's mean of (ratio - 1) - log ratio
  double lr = 0;                           // the step size of the iteration
  double ms = 0;
  // a copy's simulation step failed during collection (a state that blew up): its episode
  // restarted and the iteration's update was skipped, named here ("PPO iteration K skipped: the
  // simulation step failed: env N, frame F: ..."; the first failing copy in copy order)
  bool skipped = false;
  std::string skip_reason;
  int skipped_iterations = 0;  // so far in the run
};

// running mean and variance (population) per entry, merged batch by batch (Chan et al.):
// the same numbers as the mean and variance of everything seen so far
struct RunningMeanStd {
  std::vector<double> mean, var;  // (size); var starts at 1
  double count = 0;
  void resize(int n);
  // merge a batch of `rows` rows of size() entries each, row-major
  void update(const double* x, int rows);
  // (x - mean) / sqrt(var + 1e-8), clipped to +-clip
  void normalize(std::vector<double>& x, double clip) const;
  int size() const { return int(mean.size()); }
};

// one frame of a copy, for generalized advantage estimation: `done` when the episode ended
// after it, `boot` then the value of the state it ended in (a time limit; 0 for a terminal state)
struct GaeFrame {
  double reward = 0, value = 0;
  bool done = false;
  double boot = 0;
};
// advantages of one copy's frames in order (adv.size() = frames.size()); last_value: the
// value of the state after the last frame (unused when it is done). returns = adv + value
void generalized_advantages(const std::vector<GaeFrame>& frames, double last_value, double gamma, double lambda,
                            std::vector<double>& adv);

class PpoTrainer {
 public:
  PpoTrainer();
  ~PpoTrainer();
  PpoTrainer(PpoTrainer&&) noexcept;
  PpoTrainer& operator=(PpoTrainer&&) noexcept;

  // copies from task.policy_env(env) (its thread_count: options.thread_count), evaluate() on
  // one more copy from the task's start; the policy network is the env's, initialized with the
  // task's seed. Errors: the task has no policy, parameters other than the policy, an effort
  // term, or options out of range
  static Result<PpoTrainer> create(const TaskT<double>& task, PpoOptions options = {}, PolicyEnvOptions env = {});

  // run every copy steps_per_env frames, then update
  Result<PpoIteration> iterate();
  // the mean frame cost of an episode with the mean action (forward only; not counted);
  // observe(t + 1) after frame t (as SHAC's). A step that fails ends the episode there and
  // does not end the run: evaluation_failure() names it ("" otherwise)
  Result<double> evaluate(const std::function<void(int t, const PolicyEnvT<double>& env)>& observe = {});
  const std::string& evaluation_failure() const { return eval_failure_; }
  // viewers (app/serve): the states of the first `copies` copies (those this rank steps) over
  // each iteration's collection from now on, frame 0 its start (a copy whose episode ends
  // restarts within it); 0 keeps none. Keeping them changes nothing the training computes
  void keep_copy_frames(int copies);
  const std::vector<std::vector<StateT<double>>>& copy_frames() const { return copy_frames_; }

  long long sim_steps() const { return sim_steps_; }
  int env_count() const;
  // the policy's weights, then one log sigma per output
  const std::vector<double>& parameters() const { return pi_; }
  void set_parameters(std::vector<double> pi) { pi_ = std::move(pi); }  // (tests: a replica that differs)
  const RunningMeanStd& observation_stats() const { return obs_rms_; }
  int iteration() const { return iteration_; }  // iterations run so far
  // the training state into a checkpoint (header "ppo" and arrays: both networks, both Adams,
  // the statistics, the random engine, every copy's episode and returns so far); load() puts
  // it back into a trainer of the same task, networks and copies, errors naming the file and
  // what differs (engine/optim/checkpoint.h)
  Status save(Checkpoint& ck);  // collective over the ranks: every copy's episode from its owner
  Status load(const Checkpoint& ck);
  std::uint64_t fingerprint() const;  // FNV-1a of the policy and value weights

 private:
  struct Sample {
    std::vector<double> obs;     // normalized
    std::vector<double> action;  // drawn, before clipping
    double logp = 0, value = 0, reward = 0, boot = 0, adv = 0, ret = 0;
    double unscaled = 0;        // the frame's reward as the task gives it (the iteration's mean)
    double episode_return = 0;  // when done: the episode's undiscounted return
    bool done = false;
  };
  const MlpT<double>& net() const;
  void observe_normalized(PolicyEnvT<double>& env, int i, std::vector<double>& obs);
  double value_of(const std::vector<double>& obs) const;
  Status collect(PpoIteration& it);
  bool distributed() const { return options_.comm && options_.comm->size() > 1; }
  // this rank's copies' values (per copy `width` doubles, in copy order) made every copy's
  Status gather_copies(std::vector<double>& values, int width);
  Status gather_samples();  // batch_ and last_value_ of every copy, on every rank
  Status check_replicas();
  Status broadcast_weights();  // rank 0's policy and value weights to every rank
  void advantages();
  void update(PpoIteration& it);
  void minibatch_step(const int* idx, int n, PpoIteration& it);

  PpoOptions options_;
  std::unique_ptr<PolicyEnvT<double>> env_, eval_;
  std::string eval_failure_;  // the last evaluation's failed step, if one failed
  int substeps_ = 1;
  MlpT<double> value_net_;
  std::vector<double> pi_, v_;  // policy weights + log sigmas; value weights
  OptimizerT<double> pi_opt_, v_opt_;
  std::mt19937_64 rng_;                // the learner's: value initialization, shuffles
  std::vector<std::mt19937_64> rngs_;  // per copy (all copies'; a rank draws from its own)
  dist::Block mine_;                   // this rank's copies [begin, end) of total_
  int total_ = 0;
  RunningMeanStd obs_rms_, ret_rms_;
  // per copy (all copies' slots; a rank keeps its own copies' up to date):
  std::vector<std::vector<double>> obs_;  // the normalized observation of its state
  std::vector<double> disc_return_;       // discounted return so far (reward scaling)
  std::vector<double> ep_return_;         // undiscounted, unscaled return so far
  std::vector<Sample> batch_;             // frame t of copy i at t x env_count + i
  std::vector<double> last_value_;        // per copy: the value after the batch's last frame
  double last_mean_return_ = 0;
  long long sim_steps_ = 0;
  int iteration_ = 0, skipped_ = 0;
  std::vector<std::string> failure_;  // per copy: why its step failed this iteration (empty: it did not)
  std::vector<std::vector<StateT<double>>> copy_frames_;  // keep_copy_frames
};

}  // namespace adj::optim
