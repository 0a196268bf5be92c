// RigidPolicy: an MLP that drives a robot's actuators from its state (closed loop), as
// PolicyT does for particle robots; trained by backpropagation through the whole rollout
// (TaskRunnerT keeps every state: horizon + 1 small rigid states).
//   observations: the task's named terms (PolicySpec::observation: a body's height,
//                 orientation, com velocity, angular velocity, up and heading projections; the
//                 joints' coordinates and velocities; the previous frame's outputs; each
//                 scaled), else per joint of the robot,
//                 revolute: sin q, cos q; prismatic: q; ball: its quaternion; free: position and
//                 quaternion; then every dof velocity; then, in both cases,
//                 sin(2 pi time / period + 2 pi k / phases), k = 0..phases-1
//   layers:       tanh hidden layers (PolicySpec.hidden), out = output_scale * tanh(z)
//   outputs:      added to the robot's actuator inputs (one per actuator)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_model.h"
#include "engine/optim/mlp.h"
#include "engine/scene/compile.h"

namespace adj::optim {

template <class S>
class RigidPolicyT {
 public:
  // the robot: the policy ParamSpec's object, else the first robot in the scene
  // hidden: the hidden layers' activation (the scene's policies: tanh)
  static Result<RigidPolicyT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                     MlpActivation hidden = MlpActivation::tanh);

  int input_size() const { return mlp_.input_size(); }
  int output_size() const { return mlp_.output_size(); }
  int weight_count() const { return mlp_.weight_count(); }
  const std::string& robot() const { return robot_; }
  const MlpT<S>& mlp() const { return mlp_; }
  std::string weight_name(int k) const { return mlp_.weight_name(k); }
  void init_weights(S* w, std::uint64_t seed) const { mlp_.init_weights(w, seed); }

  // the model the named terms evaluate kinematics on (create() binds the scene's)
  void bind(const RigidModelT<S>* model) { model_ = model; }
  // prev_action: the outputs the frame before applied (a previous_action term reads them;
  // null: zeros, as at an episode's start)
  void observe(int t, const StateT<S>& s, std::vector<S>& obs, const std::vector<S>* prev_action = nullptr) const;
  // adj += d <d_obs, obs(t, s)> / d s; d_prev_action (output_size(), when given) += its part
  // with respect to prev_action
  void observe_adjoint(const StateT<S>& s, const std::vector<S>& d_obs, StateT<S>& adj,
                       std::vector<S>* d_prev_action = nullptr) const;
  // whether the observation reads the previous frame's outputs (a previous_action term)
  bool reads_previous_action() const { return reads_previous_action_; }
  void forward(const S* w, const std::vector<S>& obs, std::vector<S>& out) const { mlp_.forward(w, obs, out); }
  // d_w += dL/dw, d_obs = dL/d obs, given d_out
  void backward(const S* w, const std::vector<S>& obs, const std::vector<S>& d_out, S* d_w,
                std::vector<S>& d_obs) const {
    mlp_.backward(w, obs, d_out, d_w, d_obs);
  }
  // control.joint_act of the robot's actuators += out; d_out = those entries of a control gradient
  // (T: S, or the tangent numbers of PolicyEnvT::action_hvp)
  template <class T>
  void apply_outputs(const std::vector<T>& out, ControlT<T>& control) const {
    for (std::size_t k = 0; k < out.size(); ++k) control.joint_act[actuator_begin_ + int(k)] += out[k];
  }
  template <class T>
  void output_grads(const ControlT<T>& grad_control, std::vector<T>& d_out) const {
    d_out.resize(std::size_t(output_size()));
    for (int k = 0; k < output_size(); ++k) d_out[std::size_t(k)] = grad_control.joint_act[actuator_begin_ + k];
  }

 private:
  // the named terms of task.policy.observation on robot r; returns their size
  Result<int> add_terms(const scene::CompiledSceneT<S>& cs, const scene::Task& task, const scene::ObjectRange& r);
  struct Obs {
    int kind;  // 0: sin/cos of q[index]; 1: q[index] as is; 2: qd[index]
    int index;
  };
  std::vector<Obs> obs_;
  // a named observation term (PolicySpec::observation)
  struct Term {
    scene::ObservationKind kind;
    int body = -1;         // the body probed (rigid_body_probe)
    std::vector<int> idx;  // orientation: q of the quaternion; joint terms: q or dof indices
    vec3<S> axis, dir;     // projections: body-frame axis, unit world direction
    S scale = S(1);
  };
  std::vector<Term> terms_;
  const RigidModelT<S>* model_ = nullptr;  // the terms' kinematics (create: the scene's; bind: an env's copy)
  int up_ = 1;
  bool reads_previous_action_ = false;
  MlpT<S> mlp_;  // observations -> actuator inputs
  int actuator_begin_ = 0;
  int phases_ = 0;
  S phase_period_ = S(1), frame_dt_ = S(1.0 / 60.0);
  std::string robot_;
};

}  // namespace adj::optim
