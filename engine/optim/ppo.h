// PPO (Schulman et al. 2017), the model-free baseline on the same simulator and the same
// network: a Gaussian policy whose mean is the task's MLP policy output (PolicyT) and whose
// log standard deviations are learned per output, a separate value network (tanh MLP, linear
// output), generalized advantage estimation and the clipped surrogate objective, trained
// with Adam over shuffled minibatches. Deterministic for a seed: one random stream, fixed
// loop orders, no threads in the learner.
//
// The episodes run on the task's policy env (TaskT::policy_env, engine/optim/policy_env.h),
// on its copies in turn (randomized resets when the env randomizes); the rewards are the
// negated frame costs (particle tasks: r_t = L(t) - L(t + 1), L(t) the loss the task would
// have if the episode ended at frame t, so an episode's return is L(0) - L(T), for a distance
// loss the distance travelled), and evaluate() returns the mean frame cost of an episode
// from the task's initial state.
//
//   auto task = optim::make_task(compiled_double, spec).value();
//   auto ppo = optim::PpoTrainer::create(*task, {.seed = 1});
//   while (ppo->sim_steps() < budget) { auto it = ppo->iterate(); ... it->eval_loss ... }
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/task.h"

namespace adj::optim {

struct PpoOptions {
  std::uint64_t seed = 0;
  int episodes_per_iteration = 4;      // rollouts collected before each update
  int epochs = 4;                      // passes over the batch
  int minibatch = 256;                 // samples per gradient step
  double lr = 3e-4;                    // Adam, policy and value network
  double clip_ratio = 0.2;             // epsilon of the clipped objective
  double gamma = 0.99, lambda = 0.95;  // discount and GAE
  double max_grad_norm = 0.5;          // global-norm clip of each minibatch gradient
  double initial_log_std = -1.0;       // log sigma of every output at the start
  int value_hidden = 32;               // value network: obs -> tanh(hidden) -> 1
  double value_coef = 0.5;             // weight of the value loss in the value network's step
  double reward_scale = 1.0;           // rewards are multiplied by this for learning
  int thread_count = 1;                // solver threads
};

struct PpoIteration {
  int iteration = 0;
  long long sim_steps = 0;                 // solver substeps run so far (collection only)
  double mean_return = 0;                  // undiscounted, unscaled return of the iteration's episodes
  double policy_loss = 0, value_loss = 0;  // last minibatch's
  double ms = 0;
};

// a tanh MLP with a linear output (the value network)
struct Mlp {
  std::vector<int> sizes;  // input, hidden..., output
  std::vector<double> w;   // per layer: W (out x in, row-major), then b
  void init(std::vector<int> layer_sizes, std::mt19937_64& rng);
  double forward(const std::vector<double>& x) const;  // output 0
  // d_w += d out0 / d w * d_out
  void backward(const std::vector<double>& x, double d_out, double* d_w) const;
  int weight_count() const { return int(w.size()); }
};

class PpoTrainer {
 public:
  PpoTrainer();
  ~PpoTrainer();
  PpoTrainer(PpoTrainer&&) noexcept;
  PpoTrainer& operator=(PpoTrainer&&) noexcept;

  // episodes on task.policy_env(env) (its thread_count: options.thread_count), evaluate()
  // on one more copy from the task's start; the policy network is the env's, initialized
  // with the task's seed. Errors: the task has no policy, parameters other than the policy,
  // an effort term, or options out of range
  static Result<PpoTrainer> create(const TaskT<double>& task, PpoOptions options = {}, PolicyEnvOptions env = {});

  // collect episodes_per_iteration episodes, then update
  Result<PpoIteration> iterate();
  // the mean frame cost of an episode with the mean action (forward only; not counted)
  Result<double> evaluate();

  long long sim_steps() const { return sim_steps_; }
  // the policy's weights, then one log sigma per output
  const std::vector<double>& parameters() const { return pi_; }

 private:
  struct Sample {
    std::vector<double> obs;
    std::vector<double> action;
    double logp = 0, value = 0, reward = 0, adv = 0, ret = 0;
  };
  Result<double> env_episode(bool sample, std::vector<Sample>* out, int copy);
  const MlpT<double>& net() const { return env_->mlp(); }
  void update(std::vector<Sample>& batch, PpoIteration& it);

  PpoOptions options_;
  std::unique_ptr<PolicyEnvT<double>> env_, eval_;
  int substeps_ = 1;
  Mlp value_;
  std::vector<double> pi_, v_;  // policy weights + log sigmas; value weights
  OptimizerT<double> pi_opt_, v_opt_;
  std::mt19937_64 rng_;
  long long sim_steps_ = 0;
  int iteration_ = 0;
  int episodes_ = 0;
};

}  // namespace adj::optim
