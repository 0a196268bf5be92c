// PPO (Schulman et al. 2017), the model-free baseline on the same simulator and the same
// network: a Gaussian policy whose mean is the task's MLP policy output (PolicyT) and whose
// log standard deviations are learned per output, a separate value network (tanh MLP, linear
// output), generalized advantage estimation and the clipped surrogate objective, trained
// with Adam over shuffled minibatches. Deterministic for a seed: one random stream, fixed
// loop orders, no threads in the learner.
//
// Rewards come from the task's loss: r_t = L(t) - L(t + 1), where L(t) is the loss the
// task would have if the episode ended at frame t, so an episode's return is L(0) - L(T)
// (for a distance loss: the distance travelled).
//
// On a PolicyEnv (robots: RigidPolicyEnvT) the rewards are the negated frame costs, the
// episodes run on the env's copies in turn (randomized resets when the env randomizes) and
// evaluate() returns the eval copy's mean frame cost from the task's initial state.
//
//   auto ppo = optim::PpoTrainer::create(compiled, task, {.seed = 1});
//   while (ppo->sim_steps() < budget) { auto it = ppo->iterate(); ... it->eval_loss ... }
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/loss.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/policy.h"
#include "engine/optim/policy_env.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"
#include "engine/solver/solver.h"

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

  // errors: the task has no policy, parameters other than the policy, an effort term,
  // or options out of range
  static Result<PpoTrainer> create(const scene::CompiledSceneT<double>& cs, const scene::Task& task,
                                   PpoOptions options = {});

  // the same on a batch of environment copies (env) with a separate copy for evaluate()
  // (eval); the policy network is the env's, initialized with init_seed
  static Result<PpoTrainer> create(std::unique_ptr<PolicyEnvT<double>> env, std::unique_ptr<PolicyEnvT<double>> eval,
                                   std::uint64_t init_seed, PpoOptions options = {});

  // collect episodes_per_iteration episodes, then update
  Result<PpoIteration> iterate();
  // the task's loss over an episode with the mean action (forward only; not counted)
  Result<double> evaluate();

  long long sim_steps() const { return sim_steps_; }
  // the policy's weights, then one log sigma per output
  const std::vector<double>& parameters() const { return pi_; }
  const PolicyT<double>& policy() const { return policy_; }

 private:
  struct Sample {
    std::vector<double> obs;
    std::vector<double> action;
    double logp = 0, value = 0, reward = 0, adv = 0, ret = 0;
  };
  Result<double> episode(bool sample, std::vector<Sample>* out);
  Result<double> env_episode(bool sample, std::vector<Sample>* out, int copy);
  const MlpT<double>& net() const { return env_ ? env_->mlp() : policy_.mlp(); }
  double frame_loss(const StateT<double>& s0, const StateT<double>& s);
  void update(std::vector<Sample>& batch, PpoIteration& it);

  scene::Task task_;
  PpoOptions options_;
  PolicyT<double> policy_;                          // particle tasks
  std::unique_ptr<PolicyEnvT<double>> env_, eval_;  // env tasks
  LossT<double> step_loss_;                         // the task's terms reading frame 1 (fed s0 and s_t)
  std::unique_ptr<ModelT<double>> model_;
  std::unique_ptr<SolverT<double>> solver_;
  double dt_ = 0;
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
