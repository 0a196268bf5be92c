// SolverT's particle stages and their reverse pass on tangent numbers (forward over reverse:
// solver.h), apart from semi_implicit.cpp so that the dual instantiation of the kernels compiles
// beside the plain one: the same kernels (engine/solver/kernels.h) over T = Dual<S, 1>, the
// model's parameters lifted to constants (model_view.h), on one thread and one element at a time
// (the SIMD lanes of kernels_simd.h are for plain scalars). The element adjoints that run on dual
// numbers themselves (contact: vjp) nest them: Dual<Dual<S, 1>, N>. A model of bodies only runs
// the articulation stage's tangent step instead (engine/solver/articulation_tangent.cpp);
// one with bodies and particles is refused (the coupling stage has no tangent form).
#include <string>

#include "engine/core/float_env.h"
#include "engine/solver/bodies_scratch.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"

namespace adj {

namespace {

template <class S>
bool finite(const vec3<Dual<S, 1>>& v) {
  bool ok = true;
  for (int c = 0; c < 3; ++c) ok = ok && is_finite(v[c].v) && is_finite(v[c].d[0]);
  return ok;
}

// the first particle whose position or velocity (value or tangent) is not finite
template <class S>
Status check_finite(const StateT<Dual<S, 1>>& s, const char* what) {
  for (int i = 0; i < s.particle_count(); ++i) {
    if (!finite(s.particle_q[std::size_t(i)]))
      return Status::error(std::string(what) + ": particle " + std::to_string(i) + " position is not finite");
    if (!finite(s.particle_qd[std::size_t(i)]))
      return Status::error(std::string(what) + ": particle " + std::to_string(i) + " velocity is not finite");
  }
  return Status::ok();
}

template <class S, class T>
Status shape_check(const ModelT<S>& m, const StateT<T>& s, const ControlT<T>& c, const char* what) {
  if (m.body_count() > 0)
    return Status::error(std::string("particle tangent ") + what +
                         ": a world with bodies and particles (coupled) has no tangent step: its coupling stage "
                         "(engine/solver/coupled.cpp) does not run on tangent numbers");
  if (m.integrator == INTEGRATOR_IMPLICIT)
    return Status::error(std::string("particle tangent ") + what +
                         ": the implicit integrator (engine/solver/implicit.h) has no tangent step");
  if (s.particle_count() != m.particle_count())
    return Status::error(std::string("particle tangent ") + what + ": the state has " +
                         std::to_string(s.particle_count()) + " particles, the model " +
                         std::to_string(m.particle_count()));
  if ((!c.particle_f.empty() && int(c.particle_f.size()) != m.particle_count()) ||
      (!c.spring_act.empty() && int(c.spring_act.size()) != m.spring_count()) ||
      (!c.tet_act.empty() && int(c.tet_act.size()) != m.tet_count()))
    return Status::error(std::string("particle tangent ") + what + ": control does not match the model");
  return Status::ok();
}

}  // namespace

template <class S>
struct SolverT<S>::Tangents {
  using T = Tangent;
  LiftedArrays<T> lifted;               // the model's parameters as constants
  std::vector<StateT<T>> sub;           // each substep's input, then the step's output, (substeps + 1)
  std::vector<Array<vec3<T>>> f_total;  // each substep's total force, (substeps)
  Array<vec3<T>> f_slot, adj_f, adj_q_slot, adj_qd_slot, dummy_q, dummy_qd;
  Array<T> grad_sink;  // the model gradient's slots: not wanted, written anyway
  StateT<T> adj_a, adj_b;
  // the hash grid, over the positions' values
  Array<vec3<S>> q_value;
  Array<int> cell_start, sorted, grid_fill;
  Array<Idx3> cell;

  KernelArgs<T> args(const ModelT<S>& m, const ControlT<T>& c, S h) {
    lifted = {};
    KernelArgs<T> a{};
    a.m = make_view<T>(m, &lifted);
    a.dt = T(h);
    a.control_f = data_or_null(c.particle_f);
    a.spring_act = data_or_null(c.spring_act);
    a.tet_act = data_or_null(c.tet_act);
    const std::size_t n = std::size_t(m.particle_count());
    f_slot.assign(std::size_t(m.slot_count()), vec3<T>());
    adj_q_slot.assign(f_slot.size(), vec3<T>());
    adj_qd_slot.assign(f_slot.size(), vec3<T>());
    adj_f.assign(n, vec3<T>());
    dummy_q.assign(n, vec3<T>());
    dummy_qd.assign(n, vec3<T>());
    a.f_slot = f_slot.data();
    return a;
  }

  GridView grid(const ModelT<S>& m, const vec3<T>* q) {
    const int n = m.particle_count(), table = grid_table_size(n);
    if (!m.particle_contact) return {table, nullptr, nullptr, nullptr};
    q_value.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) q_value[std::size_t(i)] = {q[i].x.v, q[i].y.v, q[i].z.v};
    cell_start.resize(std::size_t(table) + 1);
    grid_fill.resize(std::size_t(table));
    sorted.resize(std::size_t(n));
    cell.resize(std::size_t(n));
    build_hash_grid(q_value.data(), n, m.grid_cell, table, cell_start.data(), sorted.data(), cell.data(),
                    grid_fill.data());
    return {table, cell_start.data(), sorted.data(), cell.data()};
  }

  // the substeps from `in`: sub[0] = in, ..., sub[substeps] = the step's output
  void forward(const ModelT<S>& m, KernelArgs<T> a, const StateT<T>& in, int substeps) {
    const std::size_t n = std::size_t(m.particle_count());
    sub.resize(std::size_t(substeps) + 1);
    f_total.resize(std::size_t(substeps));
    sub[0].particle_q = in.particle_q;
    sub[0].particle_qd = in.particle_qd;
    for (int k = 0; k < substeps; ++k) {
      StateT<T>& next = sub[std::size_t(k) + 1];
      next.particle_q.resize(n);
      next.particle_qd.resize(n);
      f_total[std::size_t(k)].resize(n);
      a.q = sub[std::size_t(k)].particle_q.data();
      a.qd = sub[std::size_t(k)].particle_qd.data();
      a.q_out = next.particle_q.data();
      a.qd_out = next.particle_qd.data();
      a.f_total = f_total[std::size_t(k)].data();
      a.grid = grid(m, a.q);
      substep_forward(ElementExec{}, a);
    }
  }

  // backwards through the substeps that forward() ran
  void backward(const ModelT<S>& m, KernelArgs<T> a, const StateT<T>& adj_out, StateT<T>& adj_in,
                ControlT<T>& adj_control) {
    const std::size_t n = std::size_t(m.particle_count());
    const int substeps = int(f_total.size());
    const GradSlots slots = grad_slots(m);
    grad_sink.assign(std::size_t(slots.size), T(0));
    point_adjoint_outputs(a, *this, adj_control, grad_view(slots, grad_sink.data()));
    const StateT<T>* upstream = &adj_out;
    for (int k = substeps - 1; k >= 0; --k) {
      StateT<T>& target = (k == 0) ? adj_in : ((k % 2) ? adj_a : adj_b);
      target.particle_q.resize(n);
      target.particle_qd.resize(n);
      a.q = sub[std::size_t(k)].particle_q.data();
      a.qd = sub[std::size_t(k)].particle_qd.data();
      a.adj_q_out = upstream->particle_q.data();
      a.adj_qd_out = upstream->particle_qd.data();
      a.adj_q_in = target.particle_q.data();
      a.adj_qd_in = target.particle_qd.data();
      a.f_total = f_total[std::size_t(k)].data();
      a.grid = grid(m, a.q);
      substep_adjoint(ElementExec{}, a, /*recompute=*/false);
      upstream = &target;
    }
  }
};

template <class S>
void SolverT<S>::TangentsDelete::operator()(Tangents* p) const {
  delete p;
}

template <class S>
Status SolverT<S>::tangent_step(const ModelT<S>& m, const StateT<Tangent>& in, StateT<Tangent>& out,
                                const ControlT<Tangent>& control, S dt) {
  // bodies only: the articulation stage's tangent step (articulation_tangent.cpp)
  if (m.body_count() > 0 && m.particle_count() == 0) return bodies().rigid.tangent_step(m.rigid, in, out, control, dt);
  const FlushSubnormals flush;  // engine/core/float_env.h
  if (Status st = shape_check(m, in, control, "step"); !st) return st;
  if (&in == &out) return Status::error("particle tangent step: in and out are the same state");
  if (!tangents_) tangents_.reset(new Tangents);
  Tangents& t = *tangents_;
  const int substeps = options_.substeps;
  t.forward(m, t.args(m, control, dt / S(substeps)), in, substeps);
  out.particle_q = t.sub.back().particle_q;
  out.particle_qd = t.sub.back().particle_qd;
  if (options_.check_finite) return check_finite(out, "particle tangent step");
  return Status::ok();
}

template <class S>
Status SolverT<S>::tangent_step_adjoint(const ModelT<S>& m, const StateT<Tangent>& in, const ControlT<Tangent>& control,
                                        S dt, const StateT<Tangent>& adj_out, StateT<Tangent>& adj_in,
                                        ControlT<Tangent>& adj_control) {
  if (m.body_count() > 0 && m.particle_count() == 0)
    return bodies().rigid.tangent_step_adjoint(m.rigid, in, control, dt, adj_out, adj_in, adj_control);
  const FlushSubnormals flush;
  if (Status st = shape_check(m, in, control, "step adjoint"); !st) return st;
  if (adj_out.particle_count() != m.particle_count())
    return Status::error("particle tangent step adjoint: the output adjoint does not match the model");
  if (&adj_in == &adj_out) return Status::error("particle tangent step adjoint: adj_in and adj_out are the same");
  if (!tangents_) tangents_.reset(new Tangents);
  Tangents& t = *tangents_;
  const int substeps = options_.substeps;
  const KernelArgs<Tangent> a = t.args(m, control, dt / S(substeps));
  t.forward(m, a, in, substeps);
  adj_control.particle_f.resize(std::size_t(m.particle_count()));
  adj_control.spring_act.resize(std::size_t(m.spring_count()));
  adj_control.tet_act.resize(std::size_t(m.tet_count()));
  t.backward(m, a, adj_out, adj_in, adj_control);
  if (options_.check_finite) return check_finite(adj_in, "particle tangent step adjoint");
  return Status::ok();
}

template Status SolverT<float>::tangent_step(const ModelT<float>&, const StateT<Tangent>&, StateT<Tangent>&,
                                             const ControlT<Tangent>&, float);
template Status SolverT<double>::tangent_step(const ModelT<double>&, const StateT<Tangent>&, StateT<Tangent>&,
                                              const ControlT<Tangent>&, double);
template Status SolverT<float>::tangent_step_adjoint(const ModelT<float>&, const StateT<Tangent>&,
                                                     const ControlT<Tangent>&, float, const StateT<Tangent>&,
                                                     StateT<Tangent>&, ControlT<Tangent>&);
template Status SolverT<double>::tangent_step_adjoint(const ModelT<double>&, const StateT<Tangent>&,
                                                      const ControlT<Tangent>&, double, const StateT<Tangent>&,
                                                      StateT<Tangent>&, ControlT<Tangent>&);
template void SolverT<float>::TangentsDelete::operator()(Tangents*) const;
template void SolverT<double>::TangentsDelete::operator()(Tangents*) const;

}  // namespace adj
