// Policy: an MLP controller with hand-written forward and backward passes, for particle
// robots (DiffTaichi's mass-spring walkers) and articulated robots alike, and the closed-loop
// rollout that trains a particle policy by backpropagation through time over the whole horizon
// (a robot policy's closed loop is the task runner's, engine/optim/trainer.h). The policy
// drives the robots when the task names a robot (task_names_robot, parameters.h), else the
// particles.
//
// observations at frame t (time = t * frame_dt), in this order:
//   particles: phases, then the object's state
//     phases:  sin(2 pi time / period + 2 pi k / phases), k = 0..phases-1
//     state:   when the policy's ParamSpec names an object, for each of its particles
//              x_i - c and v_i - v_c (c, v_c: plain means over the object's particles)
//   robots: the task's named terms (PolicySpec::observation: a body's height, orientation,
//     com velocity, angular velocity, up and heading projections; the joints' coordinates and
//     velocities; the previous frame's outputs; in a coupled scene a particle object's centre of
//     mass and its velocity; each scaled), else per joint of the robot,
//     revolute: sin q, cos q; prismatic: q; ball: its quaternion; free: position and
//     quaternion; then every dof velocity; then the phases
// layers:    hidden layers (PolicySpec.hidden; tanh, or the activation create() is given),
//            output = output_scale * tanh(z)
// outputs:   Control.spring_act of the actuated springs, then Control.tet_act of the
//            actuated tets (the named object's, or all); or Control.joint_act of the
//            robot's actuators (the policy ParamSpec's robot, else the scene's first); each
//            output (an action) reaches its control as action_offset + action_scale x action,
//            so that one network range serves actuators of different units (a gripper's lift
//            in decimetres, its fingers in millimetres); trainers see actions
// normalization (optional, SHAC): the particle state entries become (obs - mean) / std with
//            constants set by set_normalizer(); the phases pass through unchanged
// Each observation kind is a row of a table (ObsRowT: its size, value and adjoint), the robots'
// named terms looked up by the name the scene writes (policy_bodies.cpp), the phases and the
// particle state in policy.cpp; a policy's observation is a list of terms, one per row used.
//
// The closed loop differentiates through the observations too: dL/d obs_t flows back
// into dL/d state_t, so the gradient is the full BPTT gradient of the loss. A phases-only
// policy is open loop: the task runner computes its controls up front and runs the
// checkpointed RolloutT instead (memory O(T/K + K) states, as for any control task).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/optim/mlp.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

template <class S>
class PolicyT;
template <class S>
struct ObsRowT;

// one term of a policy's observation: entries [offset, offset + size) of the input vector
template <class S>
struct ObsTermT {
  const ObsRowT<S>* row = nullptr;
  int offset = 0, size = 0;
  S scale = S(1);
  int body = -1;            // body terms: the body probed (rigid_body_probe)
  std::vector<int> idx;     // orientation: q of the quaternion; joint terms: q or dof indices;
                            // particle_state, object terms: the observed particles
  std::vector<S> w;         // object terms: the particles' centre-of-mass weights
  std::vector<int> mode;    // joints: per idx, 0: sin/cos of q, 1: q as is, 2: qd
  vec3<S> axis, dir;        // projections: body-frame axis, unit world direction
  bool body_clock = false;  // phases: the robots' rounding order of the clock (kept for the same bits)
};

// what an observation row needs of the scene when a term is made
template <class S>
struct ObsBuildT {
  const scene::CompiledSceneT<S>& cs;
  const scene::ObjectRange& robot;  // the robot the policy drives
  const std::string& where;         // "task 'x': policy.observation[n] (kind)", for messages
};

// an observation kind: its name (as the scene writes it, for the named terms), its size and
// value, and the adjoint the policy's backward pass needs (the tangent pieces of the policy env
// are open loop and read no observation)
template <class S>
struct ObsRowT {
  const char* name;
  // check the spec and fill the term (its size; scale is set); null for the rows the policy
  // adds itself (phases, particle_state, joints)
  Status (*create)(const ObsBuildT<S>& b, const scene::ObservationTerm& spec, ObsTermT<S>& term);
  // out[0 .. size) = the term's value at frame t (prev_action: the previous frame's outputs or null)
  void (*value)(const PolicyT<S>& p, const ObsTermT<S>& term, int t, const StateT<S>& s,
                const std::vector<S>* prev_action, S* out);
  // adj += d <d, value> / d state; d_prev_action += its part with respect to prev_action (when
  // given); s: the observed state (null where the row does not read it); null: no state read
  void (*adjoint)(const PolicyT<S>& p, const ObsTermT<S>& term, const StateT<S>* s, const S* d, StateT<S>& adj,
                  std::vector<S>* d_prev_action);
  bool normalized = false;  // set_normalizer's constants apply to its entries
};

// the rows: the robots' named terms (policy_bodies.cpp; with a particle object's centre of
// mass and velocity, which a robot policy in a coupled scene reads), looked up by kind; the rows the policy
// adds itself: the robots' default joint observation, the phases and a particle object's state
template <class S>
const std::vector<ObsRowT<S>>& body_observation_rows();
template <class S>
const ObsRowT<S>& joints_observation_row();
template <class S>
const ObsRowT<S>& phases_observation_row();
template <class S>
const ObsRowT<S>& particle_observation_row();

template <class S>
class PolicyT {
 public:
  PolicyT() = default;

  // errors: no actuated springs or tets (no robot, or a robot without actuators), unknown
  // object or body, a layer of width < 1, a zero axis; form: the hidden layers' activation,
  // LayerNorm and init of a robot policy (particle policies are tanh networks, MlpForm{})
  static Result<PolicyT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task, MlpForm form = {});

  int input_size() const { return mlp_.input_size(); }
  int output_size() const { return mlp_.output_size(); }
  int weight_count() const { return mlp_.weight_count(); }
  const MlpT<S>& mlp() const { return mlp_; }
  const std::vector<int>& layer_sizes() const { return mlp_.layer_sizes(); }
  const std::vector<int>& outputs() const { return springs_; }   // model spring index of the first outputs
  const std::vector<int>& tet_outputs() const { return tets_; }  // model tet index of the next
  // whether the policy drives a robot's actuators (else particle springs and tets)
  bool drives_bodies() const { return !robot_.empty(); }
  const std::string& robot() const { return robot_; }  // the robot it drives, or empty
  // false for phases only: the controls do not depend on the state (open loop)
  bool observes_state() const { return drives_bodies() || observes_state_; }
  // whether the observation reads the previous frame's outputs (a previous_action term)
  bool reads_previous_action() const { return reads_previous_action_; }

  // a weight's readable name: "W1[r][c]" (layer 1, output r, input c) or "b1[r]"
  std::string weight_name(int k) const { return mlp_.weight_name(k); }

  // weights: uniform Glorot per layer (the output layer scaled by 0.1), biases 0
  void init_weights(S* w, std::uint64_t seed) const { mlp_.init_weights(w, seed); }
  // the model the robot terms evaluate kinematics on (create() binds the scene's)
  void bind(const RigidModelT<S>* model) { model_ = model; }

  // what the observation rows read
  const RigidModelT<S>& rigid_model() const { return *model_; }
  int up_axis() const { return up_; }
  int phases() const { return phases_; }
  S phase_period() const { return phase_period_; }
  S frame_dt() const { return frame_dt_; }
  const std::vector<S>& norm_inv_std() const { return norm_inv_std_; }  // empty: not normalized

  // observation of a state at frame t, (input_size), normalized when a normalizer is set;
  // prev_action: the outputs the frame before applied (a previous_action term reads them;
  // null: zeros, as at an episode's start)
  void observe(int t, const StateT<S>& s, std::vector<S>& obs, const std::vector<S>* prev_action = nullptr) const;
  // the same before normalization (for running statistics)
  void observe_raw(int t, const StateT<S>& s, std::vector<S>& obs) const;
  // adj += d <d_obs, obs(t, s)> / d s; d_prev_action (output_size(), when given) += its part
  // with respect to prev_action
  void observe_adjoint(const StateT<S>& s, const std::vector<S>& d_obs, StateT<S>& adj,
                       std::vector<S>* d_prev_action = nullptr) const;
  // the observation's terms, in input order
  const std::vector<ObsTermT<S>>& observation_terms() const { return terms_; }
  // normalize observation entry k as (obs_k - mean_k) / std_k (phase entries are left alone);
  // empty vectors turn normalization off
  void set_normalizer(std::vector<S> mean, std::vector<S> std);

  // control.spring_act / tet_act / joint_act of the outputs += the actions' controls (offset +
  // scale x out, PolicySpec::action_scale and action_offset); d_out = those entries of a
  // control gradient, times the scale (T: S, or the tangent numbers of PolicyEnvT::action_hvp)
  template <class T>
  void apply_outputs(const std::vector<T>& out, ControlT<T>& control) const {
    const int ns = int(springs_.size()), nt = int(tets_.size());
    auto u = [&](int k) { return action_offset(k) + action_scale(k) * out[std::size_t(k)]; };
    for (int k = 0; k < ns; ++k) control.spring_act[springs_[k]] += u(k);
    for (int k = 0; k < nt; ++k) control.tet_act[tets_[k]] += u(ns + k);
    for (int k = 0; k < actuator_count_; ++k) control.joint_act[actuator_begin_ + k] += u(ns + nt + k);
  }
  template <class T>
  void output_grads(const ControlT<T>& grad_control, std::vector<T>& d_out) const {
    const int ns = int(springs_.size()), nt = int(tets_.size());
    d_out.resize(std::size_t(output_size()));
    for (int k = 0; k < ns; ++k) d_out[k] = action_scale(k) * grad_control.spring_act[springs_[k]];
    for (int k = 0; k < nt; ++k) d_out[ns + k] = action_scale(ns + k) * grad_control.tet_act[tets_[k]];
    for (int k = 0; k < actuator_count_; ++k)
      d_out[ns + nt + k] = action_scale(ns + nt + k) * grad_control.joint_act[actuator_begin_ + k];
  }
  // output k's control per unit action, and its control at action 0
  S action_scale(int k) const { return action_scale_.empty() ? S(1) : action_scale_[std::size_t(k)]; }
  S action_offset(int k) const { return action_offset_.empty() ? S(0) : action_offset_[std::size_t(k)]; }

  // out = policy(obs), (output_size)
  void forward(const S* w, const std::vector<S>& obs, std::vector<S>& out) const { mlp_.forward(w, obs, out); }
  // given d_out = dL/d out: d_w += dL/d w, d_obs = dL/d obs (recomputes the forward pass)
  void backward(const S* w, const std::vector<S>& obs, const std::vector<S>& d_out, S* d_w,
                std::vector<S>& d_obs) const {
    mlp_.backward(w, obs, d_out, d_w, d_obs);
  }

 private:
  // each side's observations and outputs (policy.cpp, policy_bodies.cpp)
  Status create_particles(const scene::CompiledSceneT<S>& cs, const scene::Task& task);
  Status create_bodies(const scene::CompiledSceneT<S>& cs, const scene::Task& task, MlpForm form);
  // the named terms of task.policy.observation on robot r; returns their size
  Result<int> add_terms(const scene::CompiledSceneT<S>& cs, const scene::Task& task, const scene::ObjectRange& r);
  // a term of a row the policy adds itself, at the end of the input
  ObsTermT<S>& add_term(const ObsRowT<S>& row, int size);
  // the task's action_scale and action_offset, checked against the outputs
  Status set_action_map(const scene::Task& task);

  MlpT<S> mlp_;                                  // observations -> outputs
  std::vector<int> springs_;                     // outputs: actuated springs
  std::vector<int> tets_;                        // outputs after the springs: actuated tets
  int actuator_begin_ = 0, actuator_count_ = 0;  // outputs after them: the robot's actuators
  std::vector<S> norm_mean_, norm_inv_std_;      // (input_size) or empty
  std::vector<S> action_scale_, action_offset_;  // (output_size) or empty: 1 and 0
  std::vector<ObsTermT<S>> terms_;               // the observation, in input order
  int phases_ = 0;
  S phase_period_ = S(1), frame_dt_ = S(1.0 / 60.0);
  bool observes_state_ = false;            // a term reads the state (else phases only: open loop)
  const RigidModelT<S>* model_ = nullptr;  // the terms' kinematics (create: the scene's; bind: an env's copy)
  int up_ = 1;
  bool reads_previous_action_ = false;
  std::string robot_;
};

}  // namespace adj::optim
