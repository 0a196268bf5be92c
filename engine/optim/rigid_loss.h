// Losses of a robot task: a weighted sum of terms over the frames of a rigid rollout, with
// the same observe/value/seed shape as LossT. c_b(t) is the world centre of mass of body b
// at frame t (its gradient with respect to q by forward-mode duals through the kinematics).
//   position: |c_b(step) - target|^2
//   distance: -dot(c_b(step) - c_b(0), axis / |axis|)
//   joint:    (q_b(step) - value)^2 (the body's revolute/prismatic coordinate)
//   effort:   sum of actuator_control entries^2 (the object's, or all)
//   cartpole: 1/F sum_{t=1..F} 2(1 - cos theta_t) + 0.1 thetadot_t^2 + 0.05 x_t^2 + 0.1 xdot_t^2,
//             F = step; x: the robot's first prismatic joint, theta: its first revolute
//             (SHAC's reward with theta^2 made smooth and periodic: 2(1 - cos) ~ theta^2)
//   running costs of a walker, 1/F sum_{t=1..F} of a cost of body b (F = step):
//   height:   max(0, value - c_b(t).up)^2 (the com below `value` [m]; up: the scene's up axis)
//   upright:  1 - dot(R_b(t) axis, up) (axis: unit, body frame)
//   speed:    (dot(v_b(t), axis) - value)^2, v_b: com velocity (axis: unit, world)
//   running rewards (the cost is minus the reward; the locomotion suite's terms):
//   forward_velocity: -dot(v_b(t), axis);  up_projection: -dot(R_b(t) axis, up);
//   heading: -dot(R_b(t) axis, direction) (direction: unit, in the ground plane);
//   height_reward: -(above d) for d >= 0, -(below d - quadratic d^2) for d < 0, with
//     d = clip(c_b(t).up - value, lower, upper)
//   alive: -value (a constant reward per frame, no gradient)
//   their gradients with respect to (q, qd) come from the hand-written reverse kinematics
//   (engine/articulation/rigid_adjoint.h) seeded with the adjoints of c_b, R_b and v_b
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/rigid_parameters.h"

namespace adj::optim {

// these functions and RigidLossT::seed run on the model's scalar S, and on tangent numbers
// T = Dual<S, 1> over the same model for the H v products of engine/optim/pods.h

// world centre of mass of `body` and, when jac is given, d com / d q (q_count rows)
template <class T, class S>
vec3<T> rigid_body_com(const RigidModelT<S>& m, const std::vector<T>& q, int body, std::vector<vec3<T>>* jac);

// what the running costs read of one body at (q, qd): com c [m], axes R, com velocity vc [m/s],
// angular velocity w (world) [rad/s]
template <class S>
struct RigidBodyProbe {
  vec3<S> c, vc;
  mat33<S> R;
  vec3<S> w;
};
template <class T, class S>
RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd,
                                   int body);
// adj_q += d <adj, probe> / d q, adj_qd likewise (adj.c, adj.R, adj.vc: adjoints of the probe)
template <class T, class S>
void rigid_body_probe_adjoint(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd, int body,
                              const RigidBodyProbe<T>& adj, std::vector<T>& adj_q, std::vector<T>& adj_qd);

template <class S>
class RigidLossT {
 public:
  // errors name the task and the term
  static Result<RigidLossT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                   const RigidParametersT<S>& params);

  void begin();
  void observe(int t, const StateT<S>& state);
  S value(const std::vector<S>& theta);
  const std::vector<S>& term_values() const { return term_values_; }
  // adj += dL/d state of frame t (T: S, or Dual<S, 1>: then the tangent of adj is the loss's
  // second derivative along the state's tangent)
  template <class T>
  void seed(int t, const StateT<T>& state, StateT<T>& adj) const;
  void add_effort(const std::vector<S>& theta, std::vector<S>& grad) const;
  // a policy task's effort terms' summed weight: they measure the policy's outputs, which the
  // runner (and the policy envs) add as weight x |outputs|^2 per frame
  S action_effort() const { return action_effort_; }
  // the model the terms evaluate kinematics on (create() binds cs.model.rigid; the runner binds its
  // copy with theta applied, so body masses and placements match the rollout)
  void bind(const RigidModelT<S>* model) { model_ = model; }

  int term_count() const { return int(terms_.size()); }
  std::string term_name(int k) const { return terms_[k].label; }

 private:
  struct Term {
    scene::LossKind kind = scene::LossKind::position;
    S weight = S(1);
    int frame = 0;
    int body = -1;             // position, distance, height, upright, speed: body; joint: its coordinate in q
    int x = -1, theta = -1;    // cartpole: coordinates in q
    int xd = -1, thetad = -1;  // cartpole: dofs in qd
    vec3<S> target, axis;      // axis: unit (distance, speed: world; upright: body frame); heading: target
                               // is the unit direction in the ground plane
    S value = S(0);
    S lower = S(0), upper = S(0), above = S(0), below = S(0), quadratic = S(0);  // height_reward
    std::vector<std::pair<int, int>> blocks;
    std::string label;
  };

  // a running cost (height, upright, speed) of one frame; grad: its adjoints of the body probe
  template <class T>
  T running_cost(const Term& t, const std::vector<T>& q, const std::vector<T>& qd, RigidBodyProbe<T>* grad) const;

  const RigidModelT<S>* model_ = nullptr;  // the runner's (parameters applied); set by bind()
  int up_ = 1;                             // the scene's up axis (height, upright)
  S action_effort_ = S(0);
  std::vector<Term> terms_;
  std::vector<S> term_values_;
  std::vector<std::vector<S>> q_, qd_;  // observed frames
};

}  // namespace adj::optim
