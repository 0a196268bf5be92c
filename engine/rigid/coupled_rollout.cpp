#include "engine/rigid/coupled_rollout.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace adj {

namespace {

template <class S>
void zero_fill(Array<vec3<S>>& a, int n) {
  a.assign(std::size_t(n), vec3<S>());
}

template <class S>
void add_into(Array<S>& dst, const Array<S>& src) {
  if (dst.size() < src.size()) dst.resize(src.size(), S(0));
  for (std::size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
}

template <class S>
void add_into(Array<vec3<S>>& dst, const Array<vec3<S>>& src) {
  if (dst.size() < src.size()) dst.resize(src.size(), vec3<S>());
  for (std::size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
}

}  // namespace

template <class S>
CoupledStateT<S> coupled_zero_like(const CoupledStateT<S>& like) {
  CoupledStateT<S> z;
  zero_fill(z.particles.particle_q, like.particles.particle_count());
  zero_fill(z.particles.particle_qd, like.particles.particle_count());
  z.rigid.joint_q.assign(like.rigid.joint_q.size(), S(0));
  z.rigid.joint_qd.assign(like.rigid.joint_qd.size(), S(0));
  return z;
}

template <class S>
CoupledSolverT<S>::CoupledSolverT(CoupledSolverOptions options)
    : options_(options), particle_solver_(SolverOptions{1, options.thread_count, options.check_finite}) {
  options_.substeps = std::max(1, options_.substeps);
}

template <class S>
Status CoupledSolverT<S>::substep(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledControlT<S>& control, S h,
                                  int k, rigid::CouplingContactsT<S>* contacts) {
  const CoupledStateT<S>& in = sub_[std::size_t(k)];
  CoupledStateT<S>& out = sub_[std::size_t(k + 1)];
  rigid::Work<S>& w = tape_[std::size_t(k)];
  const rigid::Params<S> par = rigid::lift_params<S>(rm);
  w.resize(rm.body_count(), rm.q_count(), rm.dof_count());
  // body poses, then the pair forces of this substep's input
  rigid::kinematics(rm, par, in.rigid.joint_q.data(), in.rigid.joint_qd.data(), w);
  rigid::coupling_forces(rm, rigid::coupling_params(pm), w.R, w.p, w.v, pm, in.particles, f_particle_, fext_body_,
                         contacts);
  // particles: the contact forces join the external forces
  ControlT<S>& pc = pcontrol_[std::size_t(k)];
  pc = control.particles;
  if (int(pc.particle_f.size()) != pm.particle_count()) zero_fill(pc.particle_f, pm.particle_count());
  for (int i = 0; i < pm.particle_count(); ++i) pc.particle_f[i] += f_particle_[std::size_t(i)];
  Status st = particle_solver_.step(pm, in.particles, out.particles, pc, h);
  if (!st) return st;
  // bodies: the opposite forces join their external forces
  w.fext_extra = fext_body_;
  out.rigid.joint_q.resize(in.rigid.joint_q.size());
  out.rigid.joint_qd.resize(in.rigid.joint_qd.size());
  if (!rigid::substep(rm, par, in.rigid.joint_q.data(), in.rigid.joint_qd.data(), control.rigid.act.data(), h,
                      out.rigid.joint_q.data(), out.rigid.joint_qd.data(), w, static_cast<RigidContactsT<S>*>(nullptr)))
    return Status::error(
        "coupled step: the rigid mass matrix is not positive definite (a body with dofs and no mass, or the state "
        "blew up: stiff contact for the substep)");
  if (options_.check_finite) return rigid_check_finite(rm, out.rigid, "coupled step");
  return Status::ok();
}

template <class S>
Status CoupledSolverT<S>::step(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledStateT<S>& in,
                               CoupledStateT<S>& out, const CoupledControlT<S>& control, S dt,
                               rigid::CouplingContactsT<S>* contacts) {
  if (in.particles.particle_count() != pm.particle_count())
    return Status::error("coupled step: the particle state does not match the model");
  if (in.rigid.q_count() != rm.q_count() || in.rigid.dof_count() != rm.dof_count())
    return Status::error("coupled step: the rigid state does not match the model");
  if (int(control.rigid.act.size()) != rm.actuator_count())
    return Status::error("coupled step: the rigid control does not match the actuators");
  const int n = options_.substeps;
  const S h = dt / S(n);
  sub_.resize(std::size_t(n + 1));
  tape_.resize(std::size_t(n));
  pcontrol_.resize(std::size_t(n));
  sub_[0] = in;
  if (contacts) *contacts = rigid::CouplingContactsT<S>();
  for (int k = 0; k < n; ++k) {
    Status st = substep(pm, rm, control, h, k, contacts && k + 1 == n ? contacts : nullptr);
    if (!st) return Status::error(st.message() + " (substep " + std::to_string(k) + ")");
  }
  out = sub_[std::size_t(n)];
  return Status::ok();
}

template <class S>
Status CoupledSolverT<S>::step_adjoint(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledStateT<S>& in,
                                       const CoupledControlT<S>& control, S dt, const CoupledStateT<S>& adj_out,
                                       CoupledStateT<S>& adj_in, CoupledControlT<S>& adj_control,
                                       CoupledModelGradT<S>& adj_model) {
  const int nb = rm.body_count(), na = rm.actuator_count(), np = pm.particle_count();
  if (adj_out.particles.particle_count() != np || int(adj_out.rigid.joint_q.size()) != rm.q_count() ||
      int(adj_out.rigid.joint_qd.size()) != rm.dof_count())
    return Status::error("coupled step adjoint: the adjoint of the output state does not match the models");
  if (int(adj_model.particles.particle_mass.size()) != np) adj_model.particles = pm.make_grad();
  if (int(adj_model.rigid.body_mass.size()) != nb || int(adj_model.rigid.actuator_kp.size()) != na)
    adj_model.rigid = rm.make_grad();
  adj_control.rigid.act.resize(std::size_t(na), S(0));
  // forward, keeping every substep
  CoupledStateT<S> scratch_out;
  Status st = step(pm, rm, in, scratch_out, control, dt);
  if (!st) return Status::error(st.message() + " (adjoint recompute)");
  const int n = options_.substeps;
  const S h = dt / S(n);
  const rigid::Params<S> par = rigid::lift_params<S>(rm);
  const rigid::CouplingParams<S> cp = rigid::coupling_params(pm);
  rigid::Params<S> adj_par;
  adj_par.body_mass.assign(std::size_t(nb), S(0));
  adj_par.actuator_kp.assign(std::size_t(na), S(0));
  adj_par.actuator_kd.assign(std::size_t(na), S(0));
  rigid::CouplingParams<S> adj_cp{S(0), S(0), S(0), S(0), S(0)};
  CoupledStateT<S> adj = adj_out, prev = coupled_zero_like(adj_out);
  ControlT<S> pc_adj;
  std::vector<mat33<S>> adj_R;
  std::vector<vec3<S>> adj_p;
  std::vector<rigid::svec<S>> adj_v;
  for (int k = n - 1; k >= 0; --k) {
    const CoupledStateT<S>& s = sub_[std::size_t(k)];
    const rigid::Work<S>& w = tape_[std::size_t(k)];
    // particles (dL/d contact force = dL/d external force)
    pc_adj = pm.make_control();
    zero_fill(pc_adj.particle_f, np);
    st = particle_solver_.step_adjoint(pm, s.particles, pcontrol_[std::size_t(k)], h, adj.particles, prev.particles,
                                       pc_adj, adj_model.particles);
    if (!st) return Status::error("coupled step adjoint, substep " + std::to_string(k) + ": " + st.message());
    if (!control.particles.particle_f.empty()) add_into(adj_control.particles.particle_f, pc_adj.particle_f);
    add_into(adj_control.particles.spring_act, pc_adj.spring_act);
    add_into(adj_control.particles.tet_act, pc_adj.tet_act);
    // bodies: leaves dL/d fext in adj_work_.fext
    prev.rigid.joint_q.assign(std::size_t(rm.q_count()), S(0));
    prev.rigid.joint_qd.assign(std::size_t(rm.dof_count()), S(0));
    rigid::substep_adjoint(rm, par, s.rigid.joint_q.data(), s.rigid.joint_qd.data(), control.rigid.act.data(), h, w,
                           adj.rigid.joint_q.data(), adj.rigid.joint_qd.data(), prev.rigid.joint_q.data(),
                           prev.rigid.joint_qd.data(), adj_control.rigid.act.data(), adj_par, adj_work_);
    // the pair forces, then the body poses and velocities they read
    adj_R.assign(std::size_t(nb), mat33<S>());
    adj_p.assign(std::size_t(nb), vec3<S>());
    adj_v.assign(std::size_t(nb), rigid::svec<S>{});
    rigid::coupling_forces_adjoint(rm, cp, w.R, w.p, w.v, pm, s.particles, pc_adj.particle_f, adj_work_.fext, adj_R,
                                   adj_p, adj_v, prev.particles.particle_q.data(), prev.particles.particle_qd.data(),
                                   adj_cp);
    rigid::motion_vjp(rm, par, s.rigid.joint_q.data(), s.rigid.joint_qd.data(), w, adj_R, adj_p, adj_v,
                      prev.rigid.joint_q.data(), prev.rigid.joint_qd.data());
    std::swap(adj, prev);
    if (options_.check_finite) {
      st = check_state_finite(adj.particles, "coupled adjoint");
      if (st) st = rigid_check_finite(rm, adj.rigid, "coupled adjoint");
      if (!st) return Status::error(st.message() + " (substep " + std::to_string(k) + ")");
    }
  }
  adj_in = std::move(adj);
  for (int i = 0; i < nb; ++i) adj_model.rigid.body_mass[i] += adj_par.body_mass[i];
  for (int i = 0; i < na; ++i) {
    adj_model.rigid.actuator_kp[i] += adj_par.actuator_kp[i];
    adj_model.rigid.actuator_kd[i] += adj_par.actuator_kd[i];
  }
  adj_model.rigid.contact_ke += adj_par.contact_ke;
  adj_model.rigid.contact_kd += adj_par.contact_kd;
  adj_model.rigid.contact_mu += adj_par.contact_mu;
  adj_model.particles.contact_ke += adj_cp.ke;
  adj_model.particles.contact_kd += adj_cp.kd;
  adj_model.particles.contact_mu += adj_cp.mu;
  return Status::ok();
}

template <class S>
CoupledRolloutT<S>::CoupledRolloutT(const ModelT<S>& pm, const RigidModelT<S>& rm, CoupledRolloutOptions<S> options)
    : pm_(&pm), rm_(&rm), options_(options) {
  options_.steps = std::max(1, options_.steps);
  solver_ = CoupledSolverT<S>(CoupledSolverOptions{std::max(1, options_.substeps), options_.thread_count, true});
  k_ = options_.checkpoint_every > 0 ? options_.checkpoint_every : int(std::ceil(std::sqrt(double(options_.steps))));
  k_ = std::min(k_, options_.steps);
  zero_control_.particles = pm.make_control();
  zero_control_.rigid = rm.make_control();
}

template <class S>
const CoupledControlT<S>& CoupledRolloutT<S>::control(int t) const {
  if (controls_.empty()) return zero_control_;
  return controls_.size() == 1 ? controls_[0] : controls_[std::size_t(t)];
}

template <class S>
Status CoupledRolloutT<S>::forward(const CoupledStateT<S>& initial, const std::vector<CoupledControlT<S>>& controls,
                                   const Observer& observe) {
  const int T = options_.steps;
  forward_done_ = false;
  if (!controls.empty() && controls.size() != 1 && int(controls.size()) != T)
    return Status::error("coupled rollout: expected 0, 1 or " + std::to_string(T) + " controls, got " +
                         std::to_string(controls.size()));
  controls_ = controls;
  checkpoints_.assign(1, initial);
  if (observe) observe(0, initial);
  CoupledStateT<S> cur = initial, next;
  for (int t = 0; t < T; ++t) {
    Status st = solver_.step(*pm_, *rm_, cur, next, control(t), options_.dt);
    if (!st) return Status::error("coupled rollout forward, step " + std::to_string(t + 1) + ": " + st.message());
    std::swap(cur, next);
    if ((t + 1) % k_ == 0 && t + 1 < T) checkpoints_.push_back(cur);
    if (observe) observe(t + 1, cur);
  }
  final_ = cur;
  forward_done_ = true;
  return Status::ok();
}

template <class S>
Status CoupledRolloutT<S>::backward(const Seed& seed) {
  if (!forward_done_) return Status::error("coupled rollout: backward() needs a successful forward() first");
  const int T = options_.steps;
  grad_model_.particles = pm_->make_grad();
  grad_model_.rigid = rm_->make_grad();
  grad_controls_.assign(std::size_t(T), zero_control_);
  for (auto& g : grad_controls_) zero_fill(g.particles.particle_f, pm_->particle_count());
  CoupledStateT<S> adj = coupled_zero_like(final_), adj_prev;
  if (seed) seed(T, final_, adj);
  std::vector<CoupledStateT<S>> seg;
  for (int c = int(checkpoints_.size()) - 1; c >= 0; --c) {
    const int t0 = c * k_, t1 = std::min(T, t0 + k_);
    seg.assign(1, checkpoints_[std::size_t(c)]);
    for (int t = t0; t + 1 < t1; ++t) {
      CoupledStateT<S> next;
      Status st = solver_.step(*pm_, *rm_, seg.back(), next, control(t), options_.dt);
      if (!st)
        return Status::error("coupled rollout backward (recompute), step " + std::to_string(t + 1) + ": " +
                             st.message());
      seg.push_back(std::move(next));
    }
    for (int t = t1 - 1; t >= t0; --t) {
      const CoupledStateT<S>& in = seg[std::size_t(t - t0)];
      // per-step particle forces are gradients even when the control has none
      CoupledControlT<S> ctl = control(t);
      if (ctl.particles.particle_f.empty()) zero_fill(ctl.particles.particle_f, pm_->particle_count());
      Status st = solver_.step_adjoint(*pm_, *rm_, in, ctl, options_.dt, adj, adj_prev, grad_controls_[std::size_t(t)],
                                       grad_model_);
      if (!st) return Status::error("coupled rollout backward, step " + std::to_string(t) + ": " + st.message());
      std::swap(adj, adj_prev);
      if (seed) seed(t, in, adj);
    }
  }
  grad_initial_ = adj;
  return Status::ok();
}

template class CoupledSolverT<float>;
template class CoupledSolverT<double>;
template class CoupledRolloutT<float>;
template class CoupledRolloutT<double>;
template CoupledStateT<float> coupled_zero_like(const CoupledStateT<float>&);
template CoupledStateT<double> coupled_zero_like(const CoupledStateT<double>&);

}  // namespace adj
