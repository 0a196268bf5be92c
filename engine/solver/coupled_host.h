// the coupled step of particles and articulated bodies (engine/solver/coupled_kernels.h's
// functors) in plain host loops: the reference of the CUDA backend's coupled path
// (CudaSolverT, engine/cuda/cuda_coupled.cuh), which launches the same functors in the same
// order. on the host it equals SolverT (engine/solver/coupled.cpp) bit for bit, states and
// gradients (tests/engine/solver/coupled_kernels_test.cpp): the same stage functions, the
// same accumulation orders, and the particle-side model gradients reduced per substep as the
// CPU solver does. mesh body shapes are refused (the view path has none).
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/solver/coupled_kernels.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"

namespace adj {

template <class S>
class CoupledHostT {
 public:
  explicit CoupledHostT(SolverOptions options = {}) : options_(options) {
    if (options_.substeps < 1) options_.substeps = 1;
  }
  CoupledHostT(const CoupledHostT&) = delete;  // the views point into model_
  CoupledHostT& operator=(const CoupledHostT&) = delete;

  // copies the model (with bodies; mesh body shapes are refused)
  Status upload(const ModelT<S>& model) {
    const int mesh = rigid::rigid_first_mesh_shape(model.rigid);
    if (mesh >= 0)
      return Status::error("coupled host step: body shape " + std::to_string(mesh) +
                           " is a mesh; the view path (CUDA and its host twin) has no mesh contact");
    model_ = model;
    pv_ = make_view(model_);
    rv_ = rigid::make_rigid_view(model_.rigid);
    const int n = model_.particle_count(), ns = model_.rigid.shape_count();
    sc_.carve(nullptr, rv_, options_.substeps);
    arena_.assign(sc_.bytes / sizeof(double) + 1, 0.0);
    sc_.carve(reinterpret_cast<char*>(arena_.data()), rv_, options_.substeps);
    sub_.assign(std::size_t(options_.substeps + 1), model_.make_state());
    f_total_.assign(std::size_t(options_.substeps), std::vector<vec3<S>>(std::size_t(n)));
    adj_ping_.assign(2, model_.make_state());
    pf_.assign(std::size_t(n), vec3<S>());
    adj_pf_.assign(std::size_t(n), vec3<S>());
    for (auto* a : {&f_slot_, &adj_q_slot_, &adj_qd_slot_}) a->assign(std::size_t(model_.slot_count()), vec3<S>());
    for (auto* a : {&adj_f_, &dummy_q_, &dummy_qd_}) a->assign(std::size_t(n), vec3<S>());
    pairs_.assign(std::size_t(ns) * n, rigid::CouplingPair<S>());
    grads_.assign(std::size_t(ns) * n, rigid::CouplingPairGrad<S>());
    table_ = grid_table_size(n);
    cell_start_.assign(std::size_t(table_ + 1), 0);
    grid_fill_.assign(std::size_t(table_), 0);
    sorted_.assign(std::size_t(n), 0);
    cell_.assign(std::size_t(n), Idx3{});
    uploaded_ = true;
    return Status::ok();
  }

  Status step(const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt) {
    Status st = forward(in, control, dt);
    if (!st) return st;
    const int n = options_.substeps, nq = rv_.q_count(), nv = rv_.dof_count();
    out.particle_q = sub_[std::size_t(n)].particle_q;
    out.particle_qd = sub_[std::size_t(n)].particle_qd;
    out.joint_q.assign(sc_.q.data() + std::size_t(n) * nq, sc_.q.data() + std::size_t(n + 1) * nq);
    out.joint_qd.assign(sc_.qd.data() + std::size_t(n) * nv, sc_.qd.data() + std::size_t(n + 1) * nv);
    return options_.check_finite ? check_state_finite(model_, out, "coupled host step") : Status::ok();
  }

  // as SolverT::step_adjoint: adj_control and adj_model accumulate
  Status step_adjoint(const StateT<S>& in, const ControlT<S>& control, S dt, const StateT<S>& adj_out,
                      StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model) {
    const ModelT<S>& pm = model_;
    const int np = pm.particle_count(), nq = rv_.q_count(), nv = rv_.dof_count();
    if (adj_out.particle_count() != np || int(adj_out.joint_q.size()) != nq || int(adj_out.joint_qd.size()) != nv)
      return Status::error("coupled host step_adjoint: the adjoint of the output state does not match the model");
    fit_coupled_grads(model_, control, adj_control, adj_model);
    Status st = forward(in, control, dt);
    if (!st) return Status::error(st.message() + " (adjoint recompute)");
    for (S& x : sc_.adj_act) x = S(0);
    for (int k = 0; k < rv_.actuator_count(); ++k) sc_.adj_act[k] = adj_control.joint_act[std::size_t(k)];
    for (S& x : sc_.adj_param) x = S(0);
    for (S& x : sc_.adj_coupling) x = S(0);
    const GradSlots slots = grad_slots(pm);
    adj_top_ = adj_out;
    std::vector<S> joint_out(adj_out.joint_q.begin(), adj_out.joint_q.end());
    joint_out.insert(joint_out.end(), adj_out.joint_qd.begin(), adj_out.joint_qd.end());
    CoupledBuffers<S> b = buffers();
    b.adj_q[0] = adj_top_.particle_q.data();
    b.adj_qd[0] = adj_top_.particle_qd.data();
    b.adj_joint_out = joint_out.data();
    CoupledArgs<S> a = shared_args(control, dt / S(options_.substeps));
    a.adj_control_f = control.particle_f.empty() ? nullptr : adj_control.particle_f.data();
    a.p.adj_spring_act = data_or_null(adj_control.spring_act);
    a.p.adj_tet_act = data_or_null(adj_control.tet_act);
    // the particle-side model gradients as the CPU solver takes them, per substep
    auto before = [&](CoupledArgs<S>& x) {
      partials_.assign(std::size_t(slots.size), S(0));
      x.p.g = grad_view(adj_model, slots, partials_.data());
    };
    auto after = [&] { add_slots(slots, partials_.data(), adj_model, /*per_element=*/false); };
    const CoupledAdjointOut<S> r = coupled_adjoint_substeps(
        ElementExec{}, a, sc_, b, options_.substeps, [&](const vec3<S>* q) { return grid(q); }, before, after);
    adj_in = zero_like(adj_out);
    adj_in.particle_q.assign(b.adj_q[r.particles], b.adj_q[r.particles] + np);
    adj_in.particle_qd.assign(b.adj_qd[r.particles], b.adj_qd[r.particles] + np);
    adj_in.joint_q.assign(r.joints, r.joints + nq);
    adj_in.joint_qd.assign(r.joints + nq, r.joints + nq + nv);
    for (int k = 0; k < rv_.actuator_count(); ++k) adj_control.joint_act[std::size_t(k)] = sc_.adj_act[k];
    rigid::batch_sum_param_grads(pm.rigid, 1, sc_.adj_param.data(), adj_model.rigid);
    adj_model.contact_ke += sc_.adj_coupling[0];
    adj_model.contact_kd += sc_.adj_coupling[1];
    adj_model.contact_mu += sc_.adj_coupling[2];
    return options_.check_finite ? check_state_finite(pm, adj_in, "coupled host adjoint") : Status::ok();
  }

 private:
  // what every substep shares (control as given)
  CoupledArgs<S> shared_args(const ControlT<S>& control, S h) {
    CoupledArgs<S> a;
    a.p = KernelArgs<S>{};
    a.p.m = pv_;
    a.p.dt = h;
    a.p.spring_act = data_or_null(control.spring_act);
    a.p.tet_act = data_or_null(control.tet_act);
    a.p.f_slot = f_slot_.data();
    a.m = rv_;
    a.c = rigid::coupling_params(model_);
    a.h = h;
    a.act = data_or_null(control.joint_act);
    a.control_f = data_or_null(control.particle_f);
    return a;
  }

  // the particle-side arrays of a step (the output's adjoint set by the caller)
  CoupledBuffers<S> buffers() {
    CoupledBuffers<S> b;
    for (StateT<S>& s : sub_) {
      b.q.push_back(s.particle_q.data());
      b.qd.push_back(s.particle_qd.data());
    }
    for (auto& f : f_total_) b.f_total.push_back(f.data());
    b.pf = pf_.data();
    b.adj_pf = adj_pf_.data();
    b.pairs = pairs_.data();
    b.grads = grads_.data();
    for (int k = 1; k < 3; ++k) {
      b.adj_q[k] = adj_ping_[std::size_t(k - 1)].particle_q.data();
      b.adj_qd[k] = adj_ping_[std::size_t(k - 1)].particle_qd.data();
    }
    b.dummy_q = dummy_q_.data();
    b.dummy_qd = dummy_qd_.data();
    b.adj_f = adj_f_.data();
    b.adj_q_slot = adj_q_slot_.data();
    b.adj_qd_slot = adj_qd_slot_.data();
    return b;
  }

  GridView grid(const vec3<S>* q) {
    if (model_.particle_contact)
      build_hash_grid(q, model_.particle_count(), model_.grid_cell, table_, cell_start_.data(), sorted_.data(),
                      cell_.data(), grid_fill_.data());
    return {table_, cell_start_.data(), sorted_.data(), cell_.data()};
  }

  // every substep of a step, keeping each one's states, scratch and total particle force
  Status forward(const StateT<S>& in, const ControlT<S>& control, S dt) {
    if (!uploaded_) return Status::error("coupled host step: upload() a model first");
    const int np = model_.particle_count(), nq = rv_.q_count(), nv = rv_.dof_count();
    if (in.particle_count() != np || int(in.joint_q.size()) != nq || int(in.joint_qd.size()) != nv)
      return Status::error("coupled host step: the state does not match the model");
    if (int(control.joint_act.size()) != rv_.actuator_count() ||
        (!control.particle_f.empty() && int(control.particle_f.size()) != np))
      return Status::error("coupled host step: the control does not match the model");
    sub_[0].particle_q = in.particle_q;
    sub_[0].particle_qd = in.particle_qd;
    for (int i = 0; i < nq; ++i) sc_.q[i] = in.joint_q[std::size_t(i)];
    for (int i = 0; i < nv; ++i) sc_.qd[i] = in.joint_qd[std::size_t(i)];
    coupled_forward_substeps(ElementExec{}, shared_args(control, dt / S(options_.substeps)), sc_, buffers(),
                             options_.substeps, [&](const vec3<S>* q) { return grid(q); });
    for (int k = 0; k < options_.substeps; ++k) {
      if (!sc_.ok[k])
        return Status::error("coupled host step: the mass matrix is not positive definite (substep " +
                             std::to_string(k) + ")");
    }
    return Status::ok();
  }

  SolverOptions options_;
  bool uploaded_ = false;
  ModelT<S> model_;
  ModelView<S> pv_{};
  rigid::RigidViewT<S> rv_;
  CoupledScratch<S> sc_;
  std::vector<double> arena_;        // doubles: 8-byte aligned
  std::vector<StateT<S>> sub_;       // particle states of each substep, (substeps + 1)
  std::vector<StateT<S>> adj_ping_;  // the substeps' particle adjoints, ping-pong, (2)
  StateT<S> adj_top_;                // the output's adjoint
  std::vector<std::vector<vec3<S>>> f_total_;
  std::vector<vec3<S>> pf_, adj_pf_, f_slot_, adj_q_slot_, adj_qd_slot_, adj_f_, dummy_q_, dummy_qd_;
  std::vector<rigid::CouplingPair<S>> pairs_;
  std::vector<rigid::CouplingPairGrad<S>> grads_;
  std::vector<S> partials_;
  int table_ = 0;
  std::vector<int> cell_start_, grid_fill_, sorted_;
  std::vector<Idx3> cell_;
};

}  // namespace adj
