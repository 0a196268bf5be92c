// queries of one articulated state and one step, in generalized coordinates: contacts and joint
// forces (for drawing), body poses, the mass matrix, inverse and forward dynamics, energy, the
// step's full Jacobian by dual numbers (the reference the hand-written reverse pass is tested
// against), and why a step failed. The step itself, and its adjoint, is SolverT's
// (engine/solver/solver.h), whose articulation stage calls the same stages
// (rigid_dynamics.h, rigid_adjoint.h).
#pragma once

#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/articulation/rigid_adjoint.h"
#include "engine/core/status.h"

namespace adj {

// the step's forward-mode Jacobian runs kRigidJacobianChunk dual tangents per pass
inline constexpr int kRigidJacobianChunk = 8;
template <class S>
using RigidJacobianDual = Dual<S, kRigidJacobianChunk>;

// one pass of the forward-mode Jacobian: inputs chunk * kRigidJacobianChunk onwards of (q, qd,
// act, body mass, actuator kp, kd, dof damping, armature, contact ke, kd, mu) seeded as dual
// tangents and the step (`substeps` substeps of dt / substeps) run on them; out: (q_out,
// qd_out) with their tangents; work: the dual step's scratch
template <class S>
Status rigid_step_dual_chunk(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                             int substeps, int chunk, std::vector<RigidJacobianDual<S>>& out,
                             rigid::Work<RigidJacobianDual<S>>& work);

// the full step Jacobian d(q_out, qd_out) / d(q, qd, act, params), row-major
// ((q_count + dof_count) x (q_count + dof_count + actuator_count + param_count)), columns in
// rigid_step_dual_chunk's input order; cost ~ (inputs / kRigidJacobianChunk) dual steps
template <class S>
Status rigid_step_jacobian(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                           int substeps, std::vector<S>& jacobian);

// dL/d (q, qd, act, params) of one step (`substeps` substeps) by the forward-mode Jacobian
// contracted with adj_out = dL/d (q_out, qd_out), rigid_step_dual_chunk's passes: the reference
// the hand-written reverse pass (SolverT::step_adjoint) is tested against, ~100x its cost.
// Writes adj_in, adds to adj_control and adj_model (sized by make_control / make_grad)
template <class S>
Status rigid_step_adjoint_dual(const RigidModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                               int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                               RigidModelGradT<S>& adj_model);

// a state sized for the model (its coordinates and dofs), else an error naming `what`
template <class S>
Status rigid_check_shape(const RigidModelT<S>& model, const StateT<S>& state, const char* what);

// contacts and joint reaction forces of a state under a control, for drawing
template <class S>
Status rigid_contacts(const RigidModelT<S>& model, const StateT<S>& state, const ControlT<S>& control,
                      RigidContactsT<S>& out);

// the body-particle contacts of a coupled state (the pairs a substep from it would find), for
// drawing and for AHAC's contact measure; out is overwritten
template <class S>
void body_particle_contacts(const ModelT<S>& model, const StateT<S>& state, rigid::CouplingContactsT<S>& out);

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
