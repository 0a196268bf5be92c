// the rigid step and its adjoint. states are never updated in place: step() reads `in` and
// writes `out`.
//
// gradients, two ways, both exact and deterministic:
//  - step_adjoint() by default runs the reverse pass of rigid_adjoint.h: hand-written adjoints
//    of integration, Cholesky, CRBA and RNEA, with per-element dual-number VJPs for one body's
//    kinematics, one contact point and one joint's quaternion update. it records the substeps
//    of the step (forward scratch) and runs them backwards; cost ~ a few forward steps.
//  - step_jacobian() (and step_adjoint() with options.dual_adjoint) computes the full step
//    Jacobian in forward mode with the dual numbers of engine/core/math.h, run through the same
//    generic step (rigid_dynamics.h) in chunks of kChunk inputs over (q, qd, act, params): the
//    reference the reverse pass is tested against; cost ~ (inputs / kChunk) dual steps.
// second derivatives, forward over reverse: tangent_step() and tangent_step_adjoint() run the
// same step and reverse pass on Tangent numbers (a value and its derivative along one direction
// of the inputs), so the adjoint's tangent is a directional derivative of the gradient: a share of
// a Hessian-vector product (engine/optim/pods.h, where its measured cost is).
#pragma once

#include <vector>

#include "engine/articulation/rigid_adjoint.h"
#include "engine/core/status.h"

namespace adj {

struct RigidSolverOptions {
  int substeps = 1;           // substeps per step
  bool check_finite = true;   // report the first non-finite coordinate with its joint
  bool param_grads = true;    // step_adjoint: also dL/d params (more dual chunks when dual_adjoint)
  bool dual_adjoint = false;  // step_adjoint by the forward-mode Jacobian instead of the reverse pass
};

template <class S>
class RigidSolverT {
 public:
  static constexpr int kChunk = 8;  // dual tangents per forward-mode pass
  using D = Dual<S, kChunk>;
  using Tangent = Dual<S, 1>;  // forward over reverse

  explicit RigidSolverT(RigidSolverOptions options = {}) : options_(options) {}

  // advance by dt (options.substeps substeps); optionally the contacts and joint forces of
  // the input state (for drawing); record (optional): the substeps' inputs and scratch, kept for
  // step_adjoint (the same bits; the reverse pass then runs without recomputing the step)
  Status step(const RigidModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
              RigidContactsT<S>* contacts = nullptr, rigid::StepTape<S>* record = nullptr);

  // given adj_out = dL/d out, write adj_in = dL/d in and accumulate dL/d control and dL/d
  // params into adj_control and adj_model (from make_control / make_grad); record (optional):
  // what step() recorded from this `in` and control, reversed instead of a recompute
  Status step_adjoint(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                      const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                      RigidModelGradT<S>& adj_model, const rigid::StepTape<S>* record = nullptr);

  // the full step Jacobian d(q_out, qd_out) / d(q, qd, act, params), row-major
  // ((q_count + dof_count) x (q_count + dof_count + actuator_count + param_count))
  Status step_jacobian(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                       std::vector<S>& jacobian);

  // step() and step_adjoint() on tangent numbers over the same plain model (the adjoint's
  // tangent: the directional derivative of dL/d in and dL/d control along the inputs' tangents,
  // adj_out's carrying the loss's own second derivatives); no parameter adjoints; errors as
  // step()'s, told on the values. defined in rigid_tangent.cpp
  Status tangent_step(const RigidModelT<S>& model, const StateT<Tangent>& in, StateT<Tangent>& out,
                      const ControlT<Tangent>& control, S dt);
  Status tangent_step_adjoint(const RigidModelT<S>& model, const StateT<Tangent>& in, const ControlT<Tangent>& control,
                              S dt, const StateT<Tangent>& adj_out, StateT<Tangent>& adj_in,
                              ControlT<Tangent>& adj_control);

  const RigidSolverOptions& options() const { return options_; }

 private:
  // runs chunk c of the inputs on duals; out holds (q_out, qd_out)
  Status dual_chunk(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt, int chunk,
                    std::vector<D>& out);

  Status reverse_adjoint(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                         const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                         RigidModelGradT<S>& adj_model, const rigid::StepTape<S>* record);

  RigidSolverOptions options_;
  rigid::Work<S> work_;
  rigid::StepTape<S> tape_;  // the reverse pass's record of a step
  rigid::Work<D> dual_work_;
  rigid::Work<Tangent> tangent_work_;
  rigid::StepTape<Tangent> tangent_tape_;
};

using RigidSolver = RigidSolverT<float>;

// the free-function form of step_adjoint (a solver with `substeps`)
template <class S>
Status rigid_step_adjoint(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                          int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                          RigidModelGradT<S>& adj_model);

// contacts and joint reaction forces of a state under a control, for drawing
template <class S>
Status rigid_contacts(const RigidModelT<S>& model, const StateT<S>& state, const ControlT<S>& control,
                      RigidContactsT<S>& out);

// body poses of a state: origin [m] and axes, world, (body_count)
template <class S>
void rigid_forward_kinematics(const RigidModelT<S>& model, const StateT<S>& state, std::vector<vec3<S>>& pos,
                              std::vector<mat33<S>>& rot);

// joint-space mass matrix (row-major, dof_count^2), by CRBA
template <class S>
std::vector<S> rigid_mass_matrix(const RigidModelT<S>& model, const StateT<S>& state);

// inverse dynamics by RNEA: M qdd + c(q, qd) - J^T f_contact, (dof_count)
template <class S>
std::vector<S> rigid_inverse_dynamics(const RigidModelT<S>& model, const StateT<S>& state, const std::vector<S>& qdd);

// forward dynamics: qdd under the control (actuators, damping, limits, contact)
template <class S>
Result<std::vector<S>> rigid_forward_dynamics(const RigidModelT<S>& model, const StateT<S>& state,
                                              const ControlT<S>& control);

// kinetic and potential energy [J]
template <class S>
S rigid_energy(const RigidModelT<S>& model, const StateT<S>& state);

// the first non-finite coordinate of a state, named by joint and body
template <class S>
Status rigid_check_finite(const RigidModelT<S>& model, const StateT<S>& state, const char* what);

// why a step from `in` failed (a system matrix not positive definite, or a state that is not
// finite): the substeps run again to the first that fails, whose message names the substep,
// the joint and the quantity (joint_q / joint_qd / joint_act), and for a blow-up the dof moving
// fastest before it and the remedies (substeps, damping, armature); ok if the step runs
template <class S>
Status rigid_step_failure(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                          int substeps);
// why substep k (of n) found its system matrix not positive definite, from its input (q, qd): a
// coordinate already not finite, a dof whose bodies have no mass or inertia, or a blow-up
template <class S>
Status rigid_substep_failure(const RigidModelT<S>& model, const S* q, const S* qd, int k, int n);

}  // namespace adj
