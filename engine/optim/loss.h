// Task losses: one weighted sum of terms, each read on what the model has: particles (an
// object's centre of mass, shape, velocity), bodies (a body's com, orientation, velocity, a
// joint coordinate, a robot's running costs) or theta (effort). A term kind is a row of a table
// (LossRowT: its side, create, value and seed functions; the particle rows in
// loss_terms_particles.cpp, the body rows in loss_terms_bodies.cpp), so one LossT serves
// particle, robot and coupled tasks. The forward Observer records what the terms need
// (observe), the value is summed after the forward pass, and the backward Seed callback adds
// dLoss/dState at the frames the terms read (seed). Effort terms read theta: their gradient
// goes straight into the gradient of the control parameters (add_effort).
//
// A term is the bodies' when its object is a robot (split_task, parameters.h; in a scene of
// robots alone every term of a task that names a robot is). Each side's terms are numbered
// in the side's order in messages ("loss[0] (position)"), the bodies' terms come first in
// term_values(), and value() sums each side from zero and adds the two sums.
//
// particles: centre of mass c(t) = sum_i w_i x_i(t) over the object's particles (or the ones
// the term lists: a cloth's corner, an edge), w_i = m_i / M (pinned particles, mass 0, do not
// count; particles with no mass use equal weights).
//   position: |c(step) - target|^2
//   distance: -dot(c(step) - c(0), axis / |axis|)              (distance travelled)
//   shape:    1/n sum_i |x_i(step) - x_i(0) - (target - c(0))|^2  (initial shape moved to the target),
//             or 1/n sum_i |x_i(step) - p_i|^2 when the target lists points p_i (a reference shape)
//   velocity: |sum_i w_i v_i(step)|^2
//   effort:   sum over the control entries of theta^2 (the object's, or all when no object)
// bodies: c_b(t) is the world centre of mass of body b at frame t (its gradient with respect
// to q by forward-mode duals through the kinematics, body_probe.h).
//   position: |c_b(step) - target|^2
//   distance: -dot(c_b(step) - c_b(0), axis / |axis|)
//   joint:    (q_b(step) - value)^2 (the body's revolute/prismatic coordinate)
//   effort:   sum of actuator_control entries^2 (the object's, or all); in a policy task without
//             them, the policy's outputs: action_effort() x |outputs|^2 per frame, added by the
//             runner and the policy env
//   cartpole: 1/F sum_{t=1..F} 2(1 - cos theta_t) + 0.1 thetadot_t^2 + 0.05 x_t^2 + 0.1 xdot_t^2,
//             F = step; x: the robot's first prismatic joint, theta: its first revolute
//             (SHAC's reward with theta^2 made smooth and periodic: 2(1 - cos) ~ theta^2)
//   running costs of a walker, 1/F sum_{t=1..F} of a cost of body b (F = step):
//   height:   max(0, value - c_b(t).up)^2 (the com below `value` [m]; up: the scene's up axis)
//   upright:  1 - dot(R_b(t) axis, up) (axis: unit, body frame)
//   speed:    (dot(v_b(t), axis) - value)^2, v_b: com velocity (axis: unit, world)
//   reach:    |c_b(t) - target|^2
//   running rewards (the cost is minus the reward; the locomotion suite's terms):
//   forward_velocity: -dot(v_b(t), axis);  up_projection: -dot(R_b(t) axis, up);
//   heading: -dot(R_b(t) axis, direction) (direction: unit, in the ground plane);
//   height_reward: -(above d) for d >= 0, -(below d - quadratic d^2) for d < 0, with
//     d = clip(c_b(t).up - value, lower, upper)
//   alive: -value (a constant reward per frame, no gradient)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/optim/body_probe.h"
#include "engine/optim/parameters.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

template <class S>
struct LossRowT;

// one term of a loss: the fields its row reads (the others stay at their defaults)
template <class S>
struct LossTermT {
  const LossRowT<S>* row = nullptr;
  scene::LossKind kind = scene::LossKind::position;
  S weight = S(1);
  int frame = 0;                            // the state index the term reads (running terms: the last)
  std::vector<std::pair<int, int>> blocks;  // effort: [begin, end) entry ranges of theta
  std::string label;
  // particles
  std::vector<int> particles;      // model indices
  std::vector<S> w;                // centre-of-mass weights, (particles)
  vec3<S> target;                  // position, shape, reach; heading: the unit direction in the ground plane
  std::vector<vec3<S>> points;     // shape against the target's points, (particles) or empty
  vec3<S> axis;                    // unit (distance, speed: world; upright and projections: body frame)
  std::vector<vec3<S>> q0, q, qd;  // recorded: positions at frame 0 and at `frame`, velocities at `frame`
  // bodies
  int body = -1;             // the body probed; joint: its coordinate in q
  int x = -1, theta = -1;    // cartpole: coordinates in q
  int xd = -1, thetad = -1;  // cartpole: dofs in qd
  S value = S(0);
  S lower = S(0), upper = S(0), above = S(0), below = S(0), quadratic = S(0);  // height_reward
};

// the frames a seed reads: the state of frame t (`at`) and of frame 0 (`first`); null `at`:
// what observe() recorded (the bodies' joints of frame t, the particle terms' snapshots);
// recorded: the particle terms read their snapshots even where `at` is given
template <class T>
struct SeedFramesT {
  const StateT<T>* first = nullptr;
  const StateT<T>* at = nullptr;
  bool recorded = true;
};

template <class S>
class LossT;

// adj += d term / d state_t
template <class S, class T>
using LossSeedFn = void (*)(const LossT<S>& loss, const LossTermT<S>& term, int t, const SeedFramesT<T>& frames,
                            StateT<T>& adj);

// what one term kind needs of the scene when it is made
template <class S>
struct LossBuildT {
  const scene::CompiledSceneT<S>& cs;
  const scene::Task& task;
  const ParametersT<S>& params;
  const scene::ObjectRange* object;  // the term's object (null when it names none or an unknown one)
  const std::string& where;          // "task 'x': loss[n] (kind)", for messages
};

// a term kind: one row per (kind, side)
template <class S>
struct LossRowT {
  scene::LossKind kind;
  TermSide side;
  // check the term spec and fill the row's fields (frame and weight are set)
  Status (*create)(const LossBuildT<S>& b, const scene::LossTerm& spec, LossTermT<S>& term);
  // the term's unweighted value from what observe() recorded (theta: effort)
  S (*value)(const LossT<S>& loss, const LossTermT<S>& term, const std::vector<S>& theta);
  LossSeedFn<S, S> seed;  // null: the term reads no state (effort, alive)
  LossSeedFn<S, Dual<S, 1>> seed_tangent;
};

// a row of SIDE's table, written where the term's functions are: its seed, a template over the
// scalar and the seed's type, instantiated for the gradient (S) and the tangent (a dual)
#define ADJ_LOSS_ROW(side, kind, create, value, seed) \
  LossRowT<S> { LossKind::kind, TermSide::side, &create<S>, &value<S>, seed<S, S>, seed<S, Dual<S, 1>> }

// the rows of each side (loss_terms_particles.cpp, loss_terms_bodies.cpp)
template <class S>
const std::vector<LossRowT<S>>& particle_loss_rows();
template <class S>
const std::vector<LossRowT<S>>& body_loss_rows();

template <class S>
class LossT {
 public:
  using Term = LossTermT<S>;
  LossT() = default;

  // errors name the task and the term (unknown object, body or target, step outside the
  // horizon, zero axis, effort without control parameters, target points that do not match
  // the object's particles, a kind the object's side does not define)
  static Result<LossT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                              const ParametersT<S>& params);

  // forward: clear, then observe every state t = 0..horizon
  void begin();
  void observe(int t, const StateT<S>& state);
  // the loss of the states observed, plus effort(theta); per-term values in term_values()
  S value(const std::vector<S>& theta);
  const std::vector<S>& term_values() const { return term_values_; }

  // backward: adj += dLoss/d state_t from what observe() recorded
  void seed(int t, StateT<S>& adj) const;
  // the same where state_t is given: the body terms read `state` (T: S, or tangent numbers
  // Dual<S, 1>: then the tangent of adj is the loss's second derivative along the state's
  // tangent); the particle terms read what observe() recorded
  template <class T>
  void seed(int t, const StateT<T>& state, StateT<T>& adj) const;
  // the same without observe(), for a loss whose terms all read frame t (effort aside): first,
  // the state of frame 0 (the particle terms read it); at, the state of frame t (the H v
  // products of engine/optim/policy_env.h)
  template <class T>
  void seed(int t, const StateT<T>& first, const StateT<T>& at, StateT<T>& adj) const;
  // add d effort/d theta into grad
  void add_effort(const std::vector<S>& theta, std::vector<S>& grad) const;
  // a policy task's effort terms' summed weight where they measure the policy's outputs (its
  // robot's actuator inputs): the runner and the policy env add weight x |outputs|^2 per frame
  S action_effort() const { return action_effort_; }
  // the model the body terms evaluate kinematics on (create() binds cs.model.rigid; the runner
  // binds its copy with theta applied, so body masses and placements match the rollout)
  void bind(const RigidModelT<S>* model) { model_ = model; }

  int term_count() const { return int(terms_.size()); }
  std::string term_name(int k) const { return terms_[k].label; }  // "position[ball -> goal]"
  bool has_side(TermSide side) const { return side_terms_[int(side)] > 0; }

  // what the rows read
  const RigidModelT<S>& rigid_model() const { return *model_; }
  int up_axis() const { return up_; }
  const std::vector<S>& frame_q(int t) const { return q_[t]; }  // the joints observed at frame t
  const std::vector<S>& frame_qd(int t) const { return qd_[t]; }

 private:
  template <class T>
  void seed_frames(int t, const SeedFramesT<T>& f, StateT<T>& adj) const;

  std::vector<Term> terms_;
  std::vector<S> term_values_;
  int side_terms_[2] = {0, 0};             // terms per side
  const RigidModelT<S>* model_ = nullptr;  // bind()
  int up_ = 1;                             // the scene's up axis (height, upright)
  S action_effort_ = S(0);
  std::vector<std::vector<S>> q_, qd_;  // the joints observed per frame (tasks with body terms)
};

// a particle object's particles (model indices: all of them, or those `subset` lists, numbered
// within the object) and their centre-of-mass weights w_i = m_i / M over them (pinned particles,
// mass 0, weigh 0; no mass: equal weights), as the particle terms read them and a policy's object
// observations (policy.h); errors (prefixed `where`): a subset index outside the object's particles
template <class S>
Status object_com_weights(const ModelT<S>& model, const scene::ObjectRange& object, std::vector<int>& particles,
                          std::vector<S>& w, const std::vector<int>& subset = {}, const std::string& where = {});

// an effort term's unweighted value: its theta entries squared, summed (either side's row)
template <class S>
S effort_value(const LossT<S>&, const LossTermT<S>& t, const std::vector<S>& theta) {
  S v = 0;
  for (auto [a, b] : t.blocks)
    for (int i = a; i < b; ++i) v += theta[i] * theta[i];
  return v;
}

using Loss = LossT<float>;

}  // namespace adj::optim
