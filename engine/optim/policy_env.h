// PolicyEnv: a batch of independent copies of a task's world that a policy trainer (SHAC
// windows with a critic, shac.h; PPO, ppo.h) drives one frame at a time. The trainer owns
// the policy network (the env's mlp(), weights in the trainer) and calls, per copy:
//
//   reset(i, rng)             the task's initial state, or a randomized one
//   observe(i, obs)           raw observation of the current state (before normalization)
//   step(i, action) -> cost   one frame under the action; the frame's cost; recorded on a tape
//   backward: begin_backward(i); add_observation_adjoint(i, d_obs) on the last state;
//             then per recorded frame, last first: backward_step(i, d_cost, d_action) moves
//             the adjoint to the frame's input state; add_observation_adjoint(i, d_obs) again
//   clear_tape(i)             forget the recorded frames (the state stays: the episode goes on)
//   rewind(i)                 undo the recorded frames (gradient checks run a window twice)
//   action_hvp(i, a, v, ...)  H v of an open-loop action sequence from the copy's state (PODS-2),
//                             exact, forward over reverse (SolverT's tangent steps, particles or
//                             bodies alone: has_action_hvp())
//
// Copies share nothing that steps mutate, so different copies may run on different threads.
// A task makes its env (TaskT::policy_env, engine/optim/task.h); the trainers never ask what
// the world holds. One env (ScenePolicyEnvT) serves every scene (particles, robots, or both
// coupled); the cost of a frame is the sum of its loss terms' parts, each term read by its side's
// rule (a coupled task's terms lie on both sides, split as the loss splits them, loss.h):
//   robot terms: the task's loss over a one-frame horizon read on (s_t, s_t+1),
//     plus the effort terms' weights x |a_t|^2 (an action penalty on the frame's action a_t):
//     for a distance term, the progress of the frame; for the cartpole term, the cost of
//     s_t+1. An episode's costs sum to the task's loss times the horizon for the cartpole
//     term and to the task's loss for a distance term.
//   particle terms: L(s_t+1) - L(s_t), L(s) the task's loss were the episode
//     to end in s (its terms read the episode's start and s): an episode's costs sum to the
//     task's loss minus its value at the start (PPO's rewards on particle tasks).
// A robot policy in a scene with particles (the arm pushing a soft ball) steps SolverT's coupled
// step and reverses its step adjoint; its observation may read the particle objects (policy.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/articulation/rigid_queries.h"
#include "engine/core/status.h"
#include "engine/optim/loss.h"
#include "engine/optim/mlp.h"
#include "engine/optim/policy.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"
#include "engine/solver/solver.h"

namespace adj::optim {

template <class S>
class PolicyEnvT {
 public:
  virtual ~PolicyEnvT() = default;

  virtual int env_count() const = 0;
  virtual int horizon() const = 0;   // frames per episode
  virtual int substeps() const = 0;  // solver substeps per frame (for step counts)
  // the policy network: observation_size -> action_size
  virtual const MlpT<S>& mlp() const = 0;
  int observation_size() const { return mlp().input_size(); }
  int action_size() const { return mlp().output_size(); }

  // state of copy i: the task's initial state (rng null) or a randomized one; frame 0
  virtual void reset(int i, std::mt19937_64* rng) = 0;
  virtual int frame(int i) const = 0;  // frames since the last reset
  // the episode of copy i ended early in its last step (the task's termination); reset starts anew
  virtual bool terminated(int /*i*/) const { return false; }
  virtual const StateT<S>& state(int i) const = 0;
  virtual void observe(int i, std::vector<S>& obs) const = 0;
  // one frame under `action` (the policy's outputs); returns the frame's cost
  virtual Result<S> step(int i, const std::vector<S>& action) = 0;
  virtual void clear_tape(int i) = 0;
  virtual int tape_size(int i) const = 0;
  // back to the state before the first recorded frame; the tape is cleared
  virtual void rewind(int i) = 0;

  virtual void begin_backward(int i) = 0;
  virtual void add_observation_adjoint(int i, const std::vector<S>& d_obs) = 0;
  virtual Status backward_step(int i, S d_cost, std::vector<S>& d_action) = 0;

  // the open-loop problem J(a) = d_cost x (the sum of the frame costs) of the frames that the
  // actions a (frame-major, action_size() per frame) drive from copy i's state: out = H v,
  // H = d^2 J / da^2, by forward over reverse: the frames and their reverse pass run on tangent
  // numbers Dual<S, 1> whose tangents start as v on the actions, and the tangent of dJ/da is H v
  // (exact up to rounding). Neither the copy's state nor its tape change; the frames' steps are
  // one forward and one reverse pass, as a gradient's. Errors: a step that fails (its frame)
  virtual Status action_hvp(int i, const std::vector<S>& a, const std::vector<S>& v, S d_cost, std::vector<S>& out) = 0;
  // whether action_hvp can run: the world's step has a tangent form (particles or bodies alone;
  // the coupled step has none)
  virtual bool has_action_hvp() const { return true; }

  // copy i's episode in progress, for checkpoints (engine/optim/checkpoint.h): its state, the
  // episode's first state (what a particle world's costs read), its frame and termination.
  // set_episode continues from one (the tape cleared); an env that cannot says so
  struct Episode {
    StateT<S> state, start;
    int frame = 0;
    bool done = false;
    std::vector<S> action;  // the last frame's action (what a previous_action observation reads; empty: zeros)
  };
  virtual Episode episode(int i) const { return {state(i), state(i), frame(i), terminated(i), {}}; }
  virtual Status set_episode(int /*i*/, const Episode& /*e*/) {
    return Status::error("this kind of world cannot continue an episode from a checkpoint");
  }

  // AHAC's stiffness measure (shac.h AhacOptions): with measure_contacts(true), each step also
  // reads the contacts of the state it ends in (the solver's contact forces under the frame's
  // control, those the next step starts from; with particles, the bodies' pairs with them too) and
  // contact_measure(i) is their norm sqrt(sum |f_k|^2) [N] over copy i's contact points; worlds
  // without contacts read 0
  virtual void measure_contacts(bool /*on*/) {}
  virtual S contact_measure(int /*i*/) const { return S(0); }
};

// randomized initial states (reset with an rng): every coordinate of a revolute or prismatic
// joint moves from the task's initial value by `q_range` x uniform(-1, 1) [rad or m], and is
// kept within the joint's limits; every dof velocity by `qd_range` x uniform(-1, 1) (worlds
// without joints start where the task starts). The policy network is the task's (PolicySpec),
// unless `hidden` names other hidden layers; `net` is their activation, LayerNorm and init
// (SHAC's networks: the scene's shac block; particle policies are tanh networks, MlpForm{}).
struct PolicyEnvOptions {
  int env_count = 1;
  double q_range = 0;
  double qd_range = 0;
  // free roots: position moved by up to root_position_range [m] per axis, orientation turned by
  // up to root_angle_range [rad] about a uniformly random axis
  double root_position_range = 0, root_angle_range = 0;
  std::vector<int> hidden;  // empty: the task's policy.hidden
  MlpForm net;
  int thread_count = 1;  // OpenMP threads of each copy's particle stages (0: OpenMP's default)
  // per-world parameters (the scene's settings.randomize, engine/model/randomize.h): copy i is
  // world world_begin + i of world_seed; randomize false (the evaluation copy): the scene's own parameters
  std::uint64_t world_seed = 0;
  bool randomize = true;
  // copy i is world world_begin + i (a rank's block of the copies, engine/dist)
  int world_begin = 0;
};

// the one env of every task with a policy: copies of the scene's model (particles, robots, or
// both), each stepped by its own SolverT; the actions drive the policy's outputs (a robot's
// actuators; a particle robot's actuated springs and tets).
// The policy drives the robots when the task names a robot (task_names_robot, parameters.h).
// Robots keep each frame's substeps (StepRecordT), so backward_step does not recompute them,
// and the frames of cleared tapes keep their memory for the next steps.
template <class S>
class ScenePolicyEnvT final : public PolicyEnvT<S> {
 public:
  // errors: no policy, parameters other than the policy, effort terms on particle policies,
  // terms reading a step, a particle policy with a network form other than MlpForm{}
  static Result<std::unique_ptr<ScenePolicyEnvT>> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                         PolicyEnvOptions options = {});

  int env_count() const override { return int(copies_.size()); }
  int horizon() const override { return horizon_; }
  int substeps() const override { return substeps_; }
  const MlpT<S>& mlp() const override { return policy_.mlp(); }
  void reset(int i, std::mt19937_64* rng) override;
  int frame(int i) const override { return copies_[i].frame; }
  bool terminated(int i) const override { return copies_[i].done; }
  void observe(int i, std::vector<S>& obs) const override;
  Result<S> step(int i, const std::vector<S>& action) override;
  void clear_tape(int i) override;
  int tape_size(int i) const override { return int(copies_[i].tape.size()); }
  void rewind(int i) override;
  void begin_backward(int i) override;
  void add_observation_adjoint(int i, const std::vector<S>& d_obs) override;
  Status backward_step(int i, S d_cost, std::vector<S>& d_action) override;
  Status action_hvp(int i, const std::vector<S>& a, const std::vector<S>& v, S d_cost, std::vector<S>& out) override;
  bool has_action_hvp() const override { return !coupled_; }

  const StateT<S>& state(int i) const override { return copies_[i].state; }
  typename PolicyEnvT<S>::Episode episode(int i) const override;
  Status set_episode(int i, const typename PolicyEnvT<S>::Episode& e) override;
  void measure_contacts(bool on) override { measure_ = on; }
  S contact_measure(int i) const override { return copies_[i].contact; }
  const ModelT<S>& model() const { return *model_; }
  // copy i's model: its world's randomized parameters, or the scene's
  const ModelT<S>& world_model(int i) const { return models_.empty() ? *model_ : models_[std::size_t(i)]; }
  // the policy: its outputs drive the robots' actuators, or the particles' actuated springs and tets
  const PolicyT<S>& policy() const { return policy_; }

 private:
  // errors name a copy by its world (world_begin + i): the same name on any number of ranks
  std::string env_name(int i) const { return "env " + std::to_string(options_.world_begin + i); }
  struct Frame {
    StateT<S> in;
    ControlT<S> control;
    StepRecordT<S> record;  // the step's substeps (robots), reversed by backward_step without a recompute
    std::vector<S> prev;    // the copy's previous action before this frame (rewind restores it)
    std::vector<S> action;  // this frame's action (the effort's gradient)
  };
  struct Copy {
    StateT<S> start, state, adj, adj_in, seed;  // start: the episode's first state (the particle terms read it)
    // the last frame's action (zeros after a reset) and, in the backward pass, the observations'
    // adjoint with respect to it: added to the action gradient of the frame reversed next
    std::vector<S> action, d_action;
    std::vector<Frame> tape;
    std::vector<Frame> spare;  // frames of cleared tapes, their memory reused by the next steps
    std::unique_ptr<SolverT<S>> solver;
    // the task's terms over a one-frame horizon, each side's apart (the robots' bound to the copy's model)
    std::optional<LossT<S>> body_loss, particle_loss;
    S last = S(0);  // particle terms: L(state)
    ControlT<S> grad_control;
    ModelGradT<S> grad_model;
    int frame = 0;
    int back = 0;       // backward: frames of the tape not yet reversed
    bool done = false;  // the last step ended the episode (termination)
    S contact = S(0);   // measure_contacts: the contact forces' norm at the last step's end [N]
    RigidContactsT<S> contacts;
    rigid::CouplingContactsT<S> particle_contacts;
  };

  static void drop_tape(Copy& c);  // the tape's frames to the spares
  // robots: the joints moved within options_' ranges (see PolicyEnvOptions)
  void randomize_start(StateT<S>& s, std::mt19937_64& rng) const;
  S particle_value(Copy& c, const StateT<S>& s) const;  // L(s) of the particle terms, against c.start
  // the frame cost of the step from `in` to c.state (the action penalty aside)
  S frame_cost(Copy& c, const StateT<S>& in) const;
  // adj += scale x d(frame cost)/d s at the frame's output (end 1) or input (end 0)
  void add_cost_seed(Copy& c, int end, const StateT<S>& s, S scale, StateT<S>& adj) const;

  std::unique_ptr<ModelT<S>> model_;
  std::vector<ModelT<S>> models_;  // per copy, when the scene randomizes (else empty)
  // One policy serves both sides, and each side's terms are a loss of their own (Copy::body_loss,
  // particle_loss: either, or both in a coupled task), each read by its side's rule (header
  // comment): the bodies' terms read the frame (s_t, s_t+1), the particles' terms read the
  // episode (start, s) and the cost is the difference of L over the frame.
  PolicyT<S> policy_;
  bool coupled_ = false;  // the scene has robots and particles (the coupled step: no tangent form)
  S effort_ = S(0);       // the task's effort terms' weights: frame cost += effort_ |a|^2 (robot policies)
  int done_body_ = -1;    // the task's termination: this body's com below done_height_ (-1: none)
  S done_height_ = S(0);
  int up_ = 1;            // the scene's up axis
  bool record_ = false;   // keep each frame's substeps (worlds without particles: a few KiB a frame)
  bool measure_ = false;  // measure_contacts
  StateT<S> initial_;
  PolicyEnvOptions options_;
  std::vector<Copy> copies_;
  S dt_ = S(1.0 / 60.0);
  int horizon_ = 0, substeps_ = 1;
};

}  // namespace adj::optim
