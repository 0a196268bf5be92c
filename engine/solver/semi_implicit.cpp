#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "engine/articulation/rigid_queries.h"
#include "engine/core/parallel.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"
#include "engine/solver/kernels_simd.h"
#include "engine/solver/model_view.h"
#include "engine/solver/particle_scratch.h"
#include "engine/solver/solver.h"
#include "engine/solver/stability.h"
#include "engine/solver/team.h"

namespace adj {

template <class S>
void SolverT<S>::ScratchDelete::operator()(Scratch* p) const {
  delete p;
}

template <class S>
SolverT<S>::SolverT(SolverOptions options) : options_(options), scratch_(new Scratch) {
  options_.substeps = std::max(1, options_.substeps);
  scratch_->lane_bytes = widest_lane_bytes(options_.max_lane_bytes);
}
template <class S>
SolverT<S>::~SolverT() = default;
template <class S>
SolverT<S>::SolverT(SolverT&&) noexcept = default;
template <class S>
SolverT<S>& SolverT<S>::operator=(SolverT&&) noexcept = default;

template <class S>
std::size_t SolverT<S>::scratch_bytes() const {
  const Scratch& s = *scratch_;
  std::size_t b = (s.f_slot.size() * 3 + s.f_total.size() * 5) * sizeof(vec3<S>) +
                  (s.grad_partials.size() + 2 * s.state_pack[0].size()) * sizeof(S);
  for (auto& st : s.sub) b += st.bytes();
  for (auto& f : s.f_total_sub) b += f.size() * sizeof(vec3<S>);
  return b + s.adj_a.bytes() + s.adj_b.bytes() + s.implicit.scratch_bytes();
}

template <class S>
const ImplicitStats& SolverT<S>::implicit_stats() const {
  return scratch_->implicit.stats();
}

template <class S>
ImplicitSolverT<S>& SolverT<S>::implicit_solver() {
  return scratch_->implicit;
}

template <class S>
Status check_state_finite(const StateT<S>& s, const char* what) {
  for (int i = 0; i < s.particle_count(); ++i) {
    if (!finite3(s.particle_q[i]))
      return Status::error(std::string(what) + ": particle " + std::to_string(i) + " position is not finite");
    if (!finite3(s.particle_qd[i]))
      return Status::error(std::string(what) + ": particle " + std::to_string(i) + " velocity is not finite");
  }
  return Status::ok();
}

template <class S>
Status check_state_finite(const ModelT<S>& model, const StateT<S>& s, const char* what) {
  Status st = check_state_finite(s, what);
  if (st && model.body_count() > 0) st = rigid_check_finite(model.rigid, s, what);
  return st;
}

template <class S>
StepRecordT<S>::StepRecordT() = default;
template <class S>
StepRecordT<S>::~StepRecordT() = default;
template <class S>
StepRecordT<S>::StepRecordT(const StepRecordT&) = default;
template <class S>
StepRecordT<S>::StepRecordT(StepRecordT&&) noexcept = default;
template <class S>
StepRecordT<S>& StepRecordT<S>::operator=(const StepRecordT&) = default;
template <class S>
StepRecordT<S>& StepRecordT<S>::operator=(StepRecordT&&) noexcept = default;

template <class S>
void StepRecordT<S>::resize(int particle_count, int substep_count) {
  substeps = substep_count;
  v_plus.clear();
  sub.resize(std::size_t(substep_count - 1));
  f_total.resize(std::size_t(substep_count));
  for (auto& s : sub) {
    s.particle_q.resize(std::size_t(particle_count));
    s.particle_qd.resize(std::size_t(particle_count));
  }
  for (auto& f : f_total) f.resize(std::size_t(particle_count));
}

template <class S>
bool StepRecordT<S>::matches(int particle_count) const {
  for (const auto& f : f_total)
    if (int(f.size()) != particle_count) return false;
  for (const auto& s : sub)
    if (s.particle_count() != particle_count) return false;
  return int(f_total.size()) == substeps && int(sub.size()) == substeps - 1;
}

template <class S>
std::size_t StepRecordT<S>::bytes() const {
  std::size_t b = 0;
  for (const auto& s : sub) b += s.bytes();
  for (const auto* a : {&f_total, &v_plus})
    for (const auto& f : *a) b += f.size() * sizeof(vec3<S>);
  for (const auto& t : bodies) b += t.bytes();
  return b;
}

template <class S>
Status SolverT<S>::particle_step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out,
                                 const ControlT<S>& control, S dt, int substeps, ContactsT<S>* contacts,
                                 StepRecordT<S>* record) {
  int n = model.particle_count();
  if (in.particle_count() != n) return Status::error("step: state does not match the model");
  if (&in == &out) return Status::error("step: states are never updated in place (in and out are the same)");
  if (!control_ok(model, control)) return Status::error("step: control does not match the model");
  Scratch& sc = *scratch_;
  if (model.integrator == INTEGRATOR_IMPLICIT)
    return sc.implicit.step(model, in, out, control, dt, substeps, contacts, options_.implicit, record);
  sc.resize(model, substeps);
  out.particle_q.resize(n);
  out.particle_qd.resize(n);
  if (record) record->resize(n, substeps);
  KernelArgs<S> a = base_args(model, control, dt / S(substeps));
  int threads = team_size(options_.thread_count);
  sc.forward(model, a, threads, in, out, substeps, contacts, record, /*check_each=*/false);
  // a non-finite position or velocity stays non-finite in every later substep's positions, so
  // one check of the step's output finds it; then a rerun checks each substep to name the first
  if (!options_.check_finite || particles_finite(out)) return Status::ok();
  Status st = sc.forward(model, a, threads, in, out, substeps, nullptr, record, /*check_each=*/true);
  if (st) st = check_state_finite(out, "state");
  // the first non-finite force names the symptom; the stiffest element against the substep, the cause
  return st ? st : Status::error(st.message() + stability_note(model, double(dt) / substeps, double(dt)));
}

template <class S>
Status SolverT<S>::particle_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                                    int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                    ModelGradT<S>& adj_model, const StepRecordT<S>* record) {
  int n = model.particle_count();
  if (in.particle_count() != n || adj_out.particle_count() != n)
    return Status::error("step_adjoint: state does not match the model");
  if (&adj_in == &adj_out) return Status::error("step_adjoint: adj_in and adj_out must be different states");
  if (int(adj_model.particle_mass.size()) != n || int(adj_model.spring_ke.size()) != model.spring_count() ||
      int(adj_model.tri_ke.size()) != model.tri_count() || int(adj_model.edge_ke.size()) != model.edge_count() ||
      int(adj_model.tet_mu.size()) != model.tet_count())
    return Status::error("step_adjoint: adj_model must come from model.make_grad()");
  if (!control_ok(model, control)) return Status::error("step_adjoint: control does not match the model");
  Scratch& sc = *scratch_;
  if (model.integrator == INTEGRATOR_IMPLICIT) {
    adj_control.particle_f.resize(n);
    adj_control.spring_act.resize(model.spring_count());
    adj_control.tet_act.resize(model.tet_count());
    return sc.implicit.adjoint(model, in, control, dt, substeps, adj_out, adj_in, adj_control, adj_model,
                               options_.implicit, record);
  }
  sc.resize(model, substeps);
  KernelArgs<S> a = base_args(model, control, dt / S(substeps));
  int threads = team_size(options_.thread_count);
  // each substep's input and total force: recorded by step(), or recomputed here
  sc.inputs.assign(std::size_t(substeps), &in);
  sc.forces.assign(std::size_t(substeps), nullptr);
  if (record && record->substeps == substeps && record->matches(n)) {
    for (int k = 0; k < substeps; ++k) {
      if (k > 0) sc.inputs[k] = &record->sub[k - 1];
      sc.forces[k] = record->f_total[k].data();
    }
  } else {
    using Out = typename Scratch::SubstepOut;
    sc.forward_all(
        model, a, threads, in, substeps,
        [&](int k) {
          return Out{&sc.sub[k], sc.f_total_sub[k].data()};
        },
        nullptr);
    for (int k = 0; k < substeps; ++k) {
      if (k > 0) sc.inputs[k] = &sc.sub[k - 1];
      sc.forces[k] = sc.f_total_sub[k].data();
    }
  }
  adj_control.particle_f.resize(n);
  adj_control.spring_act.resize(model.spring_count());
  adj_control.tet_act.resize(model.tet_count());
  const GradSlots slots = grad_slots(model);
  sc.grad_partials.assign(std::size_t(slots.size), S(0));
  sc.backward(model, a, threads, adj_out, adj_in, adj_control, adj_model, slots, /*check_each=*/false);
  // adjoints are linear in the upstream adjoint: a non-finite one stays so down to adj_in
  if (options_.check_finite && !particles_finite(adj_in)) {
    Status st = sc.backward(model, a, threads, adj_out, adj_in, adj_control, adj_model, slots, /*check_each=*/true);
    return st ? check_state_finite(adj_in, "adjoint") : st;
  }
  // scene-wide fields (contact, aerodynamics, gravity): fixed-order serial sums
  add_slots(slots, sc.grad_partials.data(), adj_model, /*per_element=*/false);
  return Status::ok();
}

template <class S>
void compute_contacts(const ModelT<S>& model, const StateT<S>& state, ContactsT<S>& c) {
  c.clear();
  ModelView<S> m = make_view(model);
  for (int p = 0; p < model.particle_count(); ++p) {
    for (int s = 0; s < model.shape_count(); ++s) {
      vec3<S> n, surface;
      S d = shape_distance(m.shape(s), state.particle_q[p], n, surface);
      if (!(d - model.particle_radius[p] < S(0))) continue;
      c.point.push_back(surface);
      c.normal.push_back(n);
      c.force.push_back(contact_force(d - model.particle_radius[p], n, state.particle_qd[p], model.contact_ke,
                                      model.contact_kd, model.contact_kf, model.contact_mu, model.contact_eps));
      c.particle.push_back(p);
      c.other.push_back(s);
    }
  }
  if (!model.particle_contact) return;
  // particle pairs (each once, p < q), found through the hash grid
  int n = model.particle_count(), table = grid_table_size(n);
  Array<int> start(table + 1), sorted(n), fill(table);
  Array<Idx3> cell(n);
  build_hash_grid(state.particle_q.data(), n, model.grid_cell, table, start.data(), sorted.data(), cell.data(),
                  fill.data());
  KernelArgs<S> a{};
  a.m = m;
  a.grid = {table, start.data(), sorted.data(), cell.data()};
  a.q = state.particle_q.data();
  a.qd = state.particle_qd.data();
  for (int p = 0; p < n; ++p) {
    auto visit = [&](int q) {
      if (q < p) return;
      S rs = model.particle_radius[p] + model.particle_radius[q];
      vec3<S> d = state.particle_q[p] - state.particle_q[q];
      S l = length(d);
      if (!(l < rs) || l < S(1e-9)) return;
      vec3<S> nrm = d / l;
      c.point.push_back(state.particle_q[q] + nrm * model.particle_radius[q]);
      c.normal.push_back(nrm);
      c.force.push_back(particle_pair_force(state.particle_q[p], state.particle_q[q], state.particle_qd[p],
                                            state.particle_qd[q], rs, model.contact_ke, model.contact_kd,
                                            model.contact_kf, model.contact_mu, model.contact_eps));
      c.particle.push_back(p);
      c.other.push_back(-1 - q);
    };
    for_each_neighbour(a, p, visit);
  }
}

template class SolverT<float>;
template class SolverT<double>;
template struct StepRecordT<float>;
template struct StepRecordT<double>;
template void compute_contacts(const ModelT<float>&, const StateT<float>&, ContactsT<float>&);
template void compute_contacts(const ModelT<double>&, const StateT<double>&, ContactsT<double>&);
template Status check_state_finite(const StateT<float>&, const char*);
template Status check_state_finite(const StateT<double>&, const char*);
template Status check_state_finite(const ModelT<float>&, const StateT<float>&, const char*);
template Status check_state_finite(const ModelT<double>&, const StateT<double>&, const char*);

}  // namespace adj
