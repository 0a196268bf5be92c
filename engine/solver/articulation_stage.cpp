// SolverT's articulation stage (articulation_stage.h): the step of a model of bodies only and
// its adjoint by the reverse pass
#include "engine/solver/articulation_stage.h"

#include <algorithm>
#include <string>

namespace adj {

template <class S>
Status ArticulationStageT<S>::step(const RigidModelT<S>& m, const StateT<S>& in, StateT<S>& out,
                                   const ControlT<S>& control, S dt, RigidContactsT<S>* contacts,
                                   rigid::StepTape<S>* record) {
  Status st = rigid_check_shape(m, in, "input state");
  if (!st) return st;
  if (int(control.joint_act.size()) != m.actuator_count())
    return Status::error("rigid: control does not match the actuators");
  rigid::Params<S> par = rigid::lift_params<S>(m);
  work_.resize(m.body_count(), m.q_count(), m.dof_count());
  out.joint_q.resize(in.joint_q.size());
  out.joint_qd.resize(in.joint_qd.size());
  const int n = std::max(1, options_.substeps);
  if (record) {
    if (!rigid::record_step(m, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), dt, n, *record))
      return rigid_step_failure(m, in, control, dt, options_.substeps);
    std::copy(record->q[std::size_t(n)].begin(), record->q[std::size_t(n)].end(), out.joint_q.begin());
    std::copy(record->qd[std::size_t(n)].begin(), record->qd[std::size_t(n)].end(), out.joint_qd.begin());
  } else if (!rigid::step(m, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), dt, n,
                          out.joint_q.data(), out.joint_qd.data(), work_)) {
    return rigid_step_failure(m, in, control, dt, options_.substeps);
  }
  if (options_.check_finite && !rigid_check_finite(m, out, "rigid step"))
    return rigid_step_failure(m, in, control, dt, options_.substeps);
  if (contacts) {
    st = rigid_contacts(m, in, control, *contacts);
    if (!st) return st;
  }
  return Status::ok();
}

template <class S>
Status ArticulationStageT<S>::step_adjoint(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control,
                                           S dt, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                           RigidModelGradT<S>& adj_model, const rigid::StepTape<S>* record) {
  Status st = rigid_check_shape(m, in, "input state");
  if (!st) return st;
  st = rigid_check_shape(m, adj_out, "adjoint of the output state");
  if (!st) return st;
  const int nv = m.dof_count(), na = m.actuator_count(), nb = m.body_count();
  if (int(control.joint_act.size()) != na) return Status::error("rigid: control does not match the actuators");
  adj_control.joint_act.resize(std::size_t(na), S(0));
  if (int(adj_model.body_mass.size()) != nb || int(adj_model.actuator_kp.size()) != na ||
      int(adj_model.dof_damping.size()) != nv)
    adj_model = m.make_grad();
  return reverse_adjoint(m, in, control, dt, adj_out, adj_in, adj_control, adj_model, record);
}

template <class S>
Status ArticulationStageT<S>::reverse_adjoint(const RigidModelT<S>& m, const StateT<S>& in, const ControlT<S>& control,
                                              S dt, const StateT<S>& adj_out, StateT<S>& adj_in,
                                              ControlT<S>& adj_control, RigidModelGradT<S>& adj_model,
                                              const rigid::StepTape<S>* record) {
  rigid::Params<S> par = rigid::lift_params<S>(m), adj_par = rigid::zero_params(m);
  adj_in.joint_q.resize(std::size_t(m.q_count()));
  adj_in.joint_qd.resize(std::size_t(m.dof_count()));
  const int n = std::max(1, options_.substeps);
  if (record) {
    if (int(record->work.size()) != n || int(record->q[0].size()) != m.q_count())
      return Status::error("rigid step adjoint: the record does not belong to this model and substep count");
    rigid::reverse_step(m, par, control.joint_act.data(), dt, n, *record, adj_out.joint_q.data(),
                        adj_out.joint_qd.data(), adj_in.joint_q.data(), adj_in.joint_qd.data(),
                        adj_control.joint_act.data(), adj_par, tape_.adj, tape_.adj_buf);
  } else if (!rigid::step_adjoint(m, par, in.joint_q.data(), in.joint_qd.data(), control.joint_act.data(), dt,
                                  std::max(1, options_.substeps), adj_out.joint_q.data(), adj_out.joint_qd.data(),
                                  adj_in.joint_q.data(), adj_in.joint_qd.data(), adj_control.joint_act.data(), adj_par,
                                  tape_))
    return rigid_step_failure(m, in, control, dt, options_.substeps);
  if (options_.param_grads) rigid::add_param_grads(adj_par, adj_model);
  if (options_.check_finite) return rigid_check_finite(m, adj_in, "rigid step adjoint");
  return Status::ok();
}

template class ArticulationStageT<float>;
template class ArticulationStageT<double>;

}  // namespace adj
