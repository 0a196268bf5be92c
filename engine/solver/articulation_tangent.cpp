// the articulation stage's step and reverse pass on tangent numbers (forward over reverse:
// articulation_stage.h), apart from articulation_stage.cpp so that the dual instantiation of the
// dynamics and their adjoint compiles beside the plain one
#include <string>

#include "engine/solver/articulation_stage.h"

namespace adj {

namespace {

// the values of a tangent state and control (what failures are told on)
template <class S>
StateT<S> values(const StateT<Dual<S, 1>>& t) {
  StateT<S> s;
  for (const Dual<S, 1>& x : t.joint_q) s.joint_q.push_back(x.v);
  for (const Dual<S, 1>& x : t.joint_qd) s.joint_qd.push_back(x.v);
  return s;
}
template <class S>
ControlT<S> values(const ControlT<Dual<S, 1>>& t) {
  ControlT<S> c;
  for (const Dual<S, 1>& x : t.joint_act) c.joint_act.push_back(x.v);
  return c;
}

template <class S>
Status shape_check(const RigidModelT<S>& m, const StateT<Dual<S, 1>>& s, int act_count, const char* what) {
  if (s.q_count() != m.q_count() || s.dof_count() != m.dof_count() || act_count != m.actuator_count())
    return Status::error(std::string("rigid tangent ") + what + ": " + std::to_string(s.q_count()) + " coordinates, " +
                         std::to_string(s.dof_count()) + " dofs and " + std::to_string(act_count) +
                         " actuator inputs; the model has " + std::to_string(m.q_count()) + ", " +
                         std::to_string(m.dof_count()) + " and " + std::to_string(m.actuator_count()));
  return Status::ok();
}

// a non-finite value is told as the plain step tells it; a non-finite tangent (finite values)
// by its coordinate
template <class S>
Status check_finite(const RigidModelT<S>& m, const StateT<Dual<S, 1>>& t, const char* what) {
  Status st = rigid_check_finite(m, values(t), what);
  if (!st) return st;
  for (int i = 0; i < t.q_count(); ++i)
    if (!is_finite(t.joint_q[i].d[0]))
      return Status::error(std::string(what) + ": the tangent of joint_q[" + std::to_string(i) + "] is not finite");
  for (int i = 0; i < t.dof_count(); ++i)
    if (!is_finite(t.joint_qd[i].d[0]))
      return Status::error(std::string(what) + ": the tangent of joint_qd[" + std::to_string(i) + "] is not finite");
  return Status::ok();
}

}  // namespace

template <class S>
Status ArticulationStageT<S>::tangent_step(const RigidModelT<S>& m, const StateT<Tangent>& in, StateT<Tangent>& out,
                                           const ControlT<Tangent>& control, S dt) {
  if (Status st = shape_check(m, in, int(control.joint_act.size()), "step"); !st) return st;
  const rigid::Params<Tangent> par = rigid::lift_params<Tangent>(m);
  tangent_work_.resize(m.body_count(), m.q_count(), m.dof_count());
  out.joint_q.resize(in.joint_q.size());
  out.joint_qd.resize(in.joint_qd.size());
  if (!rigid::step(m, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), dt,
                   std::max(1, options_.substeps), out.joint_q.data(), out.joint_qd.data(), tangent_work_))
    return rigid_step_failure(m, values(in), values(control), dt, options_.substeps);
  if (options_.check_finite) {
    if (Status st = check_finite(m, out, "rigid tangent step"); !st) {
      Status why = rigid_step_failure(m, values(in), values(control), dt, options_.substeps);
      return why ? st : why;
    }
  }
  return Status::ok();
}

template <class S>
Status ArticulationStageT<S>::tangent_step_adjoint(const RigidModelT<S>& m, const StateT<Tangent>& in,
                                                   const ControlT<Tangent>& control, S dt,
                                                   const StateT<Tangent>& adj_out, StateT<Tangent>& adj_in,
                                                   ControlT<Tangent>& adj_control) {
  if (Status st = shape_check(m, in, int(control.joint_act.size()), "step adjoint"); !st) return st;
  if (Status st = shape_check(m, adj_out, m.actuator_count(), "step adjoint's output adjoint"); !st) return st;
  const rigid::Params<Tangent> par = rigid::lift_params<Tangent>(m);
  rigid::Params<Tangent> adj_par = rigid::zero_params<Tangent>(m);
  adj_in.joint_q.resize(std::size_t(m.q_count()));
  adj_in.joint_qd.resize(std::size_t(m.dof_count()));
  adj_control.joint_act.resize(std::size_t(m.actuator_count()), Tangent(0));
  if (!rigid::step_adjoint(m, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), dt,
                           std::max(1, options_.substeps), adj_out.joint_q.data(), adj_out.joint_qd.data(),
                           adj_in.joint_q.data(), adj_in.joint_qd.data(), adj_control.joint_act.data(), adj_par,
                           tangent_tape_))
    return rigid_step_failure(m, values(in), values(control), dt, options_.substeps);
  if (options_.check_finite) return check_finite(m, adj_in, "rigid tangent step adjoint");
  return Status::ok();
}

template Status ArticulationStageT<float>::tangent_step(const RigidModelT<float>&, const StateT<Tangent>&,
                                                        StateT<Tangent>&, const ControlT<Tangent>&, float);
template Status ArticulationStageT<double>::tangent_step(const RigidModelT<double>&, const StateT<Tangent>&,
                                                         StateT<Tangent>&, const ControlT<Tangent>&, double);
template Status ArticulationStageT<float>::tangent_step_adjoint(const RigidModelT<float>&, const StateT<Tangent>&,
                                                                const ControlT<Tangent>&, float, const StateT<Tangent>&,
                                                                StateT<Tangent>&, ControlT<Tangent>&);
template Status ArticulationStageT<double>::tangent_step_adjoint(const RigidModelT<double>&, const StateT<Tangent>&,
                                                                 const ControlT<Tangent>&, double,
                                                                 const StateT<Tangent>&, StateT<Tangent>&,
                                                                 ControlT<Tangent>&);

}  // namespace adj
