// SolverT's articulation stage: the step of a model of bodies only (no particles) and its
// adjoint, in generalized coordinates. Internal to engine/solver: SolverT runs it (its
// scratch lives in bodies_scratch.h) and nothing else steps it; a caller steps bodies through
// SolverT with a Model that holds them. step() reads `in` and writes `out`.
//
// the stage runs the ADJ_HD stages of engine/articulation (rigid::step and rigid::substep of
// rigid_dynamics.h, rigid::substep_adjoint of rigid_adjoint.h) on the model itself; the
// CUDA batch's functors (engine/articulation/rigid_batch.h) run the same functions on the
// model's view, one world per thread, with the same bits on the host.
//
// step_adjoint() runs the hand-written reverse pass (rigid_adjoint.h), exact and deterministic:
// it records the substeps of the step (forward scratch) and runs them backwards; cost ~ a few
// forward steps. A record that step() filled is reversed without recomputing the step. Its
// reference, the step's forward-mode Jacobian on dual numbers, is rigid_step_adjoint_dual
// (engine/articulation/rigid_queries.h).
// second derivatives, forward over reverse: tangent_step() and tangent_step_adjoint() run the
// same step and reverse pass on Tangent numbers (a value and its derivative along one direction
// of the inputs), so the adjoint's tangent is a directional derivative of the gradient
// (articulation_tangent.cpp; engine/optim/pods.h, where its measured cost is).
#pragma once

#include <vector>

#include "engine/articulation/rigid_queries.h"
#include "engine/core/status.h"

namespace adj {

struct ArticulationStageOptions {
  int substeps = 1;          // substeps per step
  bool check_finite = true;  // report the first non-finite coordinate with its joint
  bool param_grads = true;   // step_adjoint: also dL/d params
};

template <class S>
class ArticulationStageT {
 public:
  using Tangent = Dual<S, 1>;  // forward over reverse

  explicit ArticulationStageT(ArticulationStageOptions options = {}) : options_(options) {}

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

  // step() and step_adjoint() on tangent numbers over the same plain model (the adjoint's
  // tangent: the directional derivative of dL/d in and dL/d control along the inputs' tangents,
  // adj_out's carrying the loss's own second derivatives); no parameter adjoints; errors as
  // step()'s, told on the values. defined in articulation_tangent.cpp
  Status tangent_step(const RigidModelT<S>& model, const StateT<Tangent>& in, StateT<Tangent>& out,
                      const ControlT<Tangent>& control, S dt);
  Status tangent_step_adjoint(const RigidModelT<S>& model, const StateT<Tangent>& in, const ControlT<Tangent>& control,
                              S dt, const StateT<Tangent>& adj_out, StateT<Tangent>& adj_in,
                              ControlT<Tangent>& adj_control);

  const ArticulationStageOptions& options() const { return options_; }

 private:
  Status reverse_adjoint(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                         const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                         RigidModelGradT<S>& adj_model, const rigid::StepTape<S>* record);

  ArticulationStageOptions options_;
  rigid::Work<S> work_;
  rigid::StepTape<S> tape_;  // the reverse pass's record of a step
  rigid::Work<Tangent> tangent_work_;
  rigid::StepTape<Tangent> tangent_tape_;
};

}  // namespace adj
