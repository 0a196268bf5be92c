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
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/rigid_parameters.h"

namespace adj::optim {

// world centre of mass of `body` and, when jac is given, d com / d q (q_count rows)
template <class S>
vec3<S> rigid_body_com(const RigidModelT<S>& m, const std::vector<S>& q, int body, std::vector<vec3<S>>* jac);

template <class S>
class RigidLossT {
 public:
  // errors name the task and the term
  static Result<RigidLossT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                   const RigidParametersT<S>& params);

  void begin();
  void observe(int t, const RigidStateT<S>& state);
  S value(const std::vector<S>& theta);
  const std::vector<S>& term_values() const { return term_values_; }
  void seed(int t, const RigidStateT<S>& state, RigidStateT<S>& adj) const;
  void add_effort(const std::vector<S>& theta, std::vector<S>& grad) const;
  // the model the terms evaluate kinematics on (create() binds cs.rigid; the runner binds its
  // copy with theta applied, so body masses and placements match the rollout)
  void bind(const RigidModelT<S>* model) { model_ = model; }

  int term_count() const { return int(terms_.size()); }
  std::string term_name(int k) const { return terms_[k].label; }

 private:
  struct Term {
    scene::LossKind kind = scene::LossKind::position;
    S weight = S(1);
    int frame = 0;
    int body = -1;           // position, distance: body; joint: its coordinate in q
    int x = -1, theta = -1;    // cartpole: coordinates in q
    int xd = -1, thetad = -1;  // cartpole: dofs in qd
    vec3<S> target, axis;
    S value = S(0);
    std::vector<std::pair<int, int>> blocks;
    std::string label;
  };

  const RigidModelT<S>* model_ = nullptr;  // the runner's (parameters applied); set by bind()
  std::vector<Term> terms_;
  std::vector<S> term_values_;
  std::vector<std::vector<S>> q_, qd_;  // observed frames
};

}  // namespace adj::optim
