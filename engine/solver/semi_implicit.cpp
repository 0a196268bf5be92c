#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "engine/articulation/rigid_solver.h"
#include "engine/core/parallel.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"
#include "engine/solver/kernels_simd.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"
#include "engine/solver/stability.h"
#include "engine/solver/team.h"

namespace adj {

namespace {

// particles + elements of a substep: below k_team_min the substep runs on one thread
template <class S>
int substep_work(const ModelView<S>& m) {
  return m.particle_count + m.spring_count + m.tri_count + m.edge_count + m.tet_count;
}

// pack_state for the team: the particles in blocks of k_block, a block an item
template <class S>
struct PackStates {
  static constexpr int k_block = 64;
  const vec3<S>* q;
  const vec3<S>* qd;
  int n;
  S* pack;
  int blocks() const { return (n + k_block - 1) / k_block; }
  void operator()(int b) const {
    const int p0 = b * k_block;
    pack_state(q + p0, qd + p0, std::min(k_block, n - p0), pack + 8 * std::ptrdiff_t(p0));
  }
};

template <class S>
bool finite3(const vec3<S>& v) {
  return is_finite(v.x) && is_finite(v.y) && is_finite(v.z);
}

// element kind and index owning a force slot
template <class S>
std::string slot_owner(const ModelT<S>& m, int s) {
  if (s < m.tri_slot()) return "spring " + std::to_string(s / 2);
  if (s < m.edge_slot()) return "triangle " + std::to_string((s - m.tri_slot()) / 3);
  if (s < m.tet_slot()) return "bending edge " + std::to_string((s - m.edge_slot()) / 4);
  return "tet " + std::to_string((s - m.tet_slot()) / 4);
}

}  // namespace

template <class S>
struct SolverT<S>::Scratch {
  Array<StateT<S>> sub;               // substep k's output state (adjoint recompute), (substeps)
  Array<Array<vec3<S>>> f_total_sub;  // total force of each recomputed substep, (substeps)
  Array<vec3<S>> f_slot, f_total, adj_f, adj_f_odd, adj_q_slot, adj_qd_slot, dummy_q, dummy_qd;
  Array<S> grad_partials;  // scene-wide fields' per-element gradient partials (grad_slots.h)
  Array<S> state_pack[2];  // substep k's input state for the lane kernels in [k % 2] (pack()), forward and backward
  StateT<S> adj_a, adj_b;
  ImplicitSolverT<S> implicit;            // the particle stages of a model whose integrator is implicit
  std::vector<const StateT<S>*> inputs;   // each substep's input state, for the adjoint
  std::vector<const vec3<S>*> forces;     // each substep's total force, for the adjoint
  TeamChoice forward_team, adjoint_team;  // one thread or the team, by measured time
  int lane_bytes = 16;                    // SIMD pack bytes (SolverOptions::max_lane_bytes and the CPU)
  // hash grid
  int table_size = 0;
  Array<int> cell_start, sorted, grid_fill;
  Array<Idx3> cell;

  int sized_n = -1, sized_slots = -1, sized_substeps = -1;  // what resize() last sized for

  void resize(const ModelT<S>& m, int substeps) {
    int n = m.particle_count();
    if (n == sized_n && m.slot_count() == sized_slots && substeps == sized_substeps) return;
    sized_n = n, sized_slots = m.slot_count(), sized_substeps = substeps;
    f_slot.resize(m.slot_count() + k_slot_pad);  // kernels_simd.h's slot_force_host
    adj_q_slot.resize(m.slot_count() + k_slot_pad);
    adj_qd_slot.resize(m.slot_count() + k_slot_pad);
    f_total.resize(n);
    for (auto& p : state_pack) p.resize(8 * std::size_t(n) + k_pack_align / sizeof(S));
    adj_f.resize(n + k_slot_pad);  // kernels_simd.h's gather_adj_f
    adj_f_odd.resize(n + k_slot_pad);
    dummy_q.resize(n);
    dummy_qd.resize(n);
    sub.resize(substeps);
    f_total_sub.resize(substeps);
    for (auto& f : f_total_sub) f.resize(n);
    for (auto& s : sub) {
      s.particle_q.resize(n);
      s.particle_qd.resize(n);
    }
    for (StateT<S>* s : {&adj_a, &adj_b}) {
      s->particle_q.resize(n);
      s->particle_qd.resize(n);
    }
    table_size = grid_table_size(n);
    cell_start.resize(table_size + 1);
    grid_fill.resize(table_size);
    sorted.resize(n);
    cell.resize(n);
  }

  // state_pack[i]'s (8 x particle_count) scalars from its first 64-byte boundary, so that no
  // particle's 32 floats' bytes straddle two cache lines
  static constexpr std::size_t k_pack_align = 64;
  S* pack(int i) {
    auto p = reinterpret_cast<std::uintptr_t>(state_pack[i].data());
    return reinterpret_cast<S*>((p + k_pack_align - 1) / k_pack_align * k_pack_align);
  }

  GridView grid_view() const { return {table_size, cell_start.data(), sorted.data(), cell.data()}; }
  void build_grid(const ModelT<S>& m, const vec3<S>* q) {
    build_hash_grid(q, m.particle_count(), m.grid_cell, table_size, cell_start.data(), sorted.data(), cell.data(),
                    grid_fill.data());
  }

  // where substep k of a step writes its output state and its total force
  struct SubstepOut {
    StateT<S>* state;
    vec3<S>* f_total;
  };

  // the substeps from `in`, substep k into out(k), on one thread or inside the team's one
  // parallel region: a substep's element loops, then its particle loop, each ending in a barrier
  // (and the team's first pack), nothing serial between them but where a scene needs the grid or
  // contacts. stop(k), after substep k: whether to stop (one thread only)
  template <class Exec, class Out, class Stop>
  void forward_substeps(const Exec& exec, const ModelT<S>& m, KernelArgs<S> a, const StateT<S>& in, int substeps,
                        const Out& out, ContactsT<S>* contacts, const Stop& stop) {
    const int n = m.particle_count();
    a.f_slot = f_slot.data();
    a.grid = grid_view();
    // the packed states: the first from `in`, each next one written by the particle step
    if (lane_bytes > 0) {
      const PackStates<S> first{in.particle_q.data(), in.particle_qd.data(), n, pack(0)};
      exec.launch(first.blocks(), first);
    }
    const StateT<S>* cur = &in;
    for (int k = 0; k < substeps; ++k) {
      const SubstepOut o = out(k);
      a.q = cur->particle_q.data();
      a.qd = cur->particle_qd.data();
      a.q_out = o.state->particle_q.data();
      a.qd_out = o.state->particle_qd.data();
      a.f_total = o.f_total;
      if (lane_bytes > 0) {
        a.state_pack = pack(k % 2);
        a.state_pack_out = pack((k + 1) % 2);
      }
      if (m.particle_contact) exec.single([&] { build_grid(m, a.q); });
      if (contacts && k + 1 == substeps) exec.single([&] { compute_contacts(m, *cur, *contacts); });
      substep_forward(exec, a);
      if (stop(k)) return;
      cur = o.state;
    }
  }

  // forward_substeps on one thread or the team, as forward_team chooses
  template <class Out>
  void forward_all(const ModelT<S>& m, const KernelArgs<S>& a, int threads, const StateT<S>& in, int substeps,
                   const Out& out, ContactsT<S>* contacts) {
    run_chosen(threads, lane_bytes, substep_work(a.m), forward_team, [&](const auto& exec) {
      forward_substeps(exec, m, a, in, substeps, out, contacts, [](int) { return false; });
    });
  }

  // the substeps from `in` to `out` (into record, when given); check_each: on one thread, stop
  // at the first substep whose output is not finite, naming the element whose force is not
  Status forward(const ModelT<S>& m, const KernelArgs<S>& a, int threads, const StateT<S>& in, StateT<S>& out,
                 int substeps, ContactsT<S>* contacts, StepRecordT<S>* record, bool check_each) {
    auto dest = [&](int k) -> SubstepOut {
      StateT<S>& next = (k + 1 == substeps) ? out : (record ? record->sub[k] : sub[k]);
      return {&next, record ? record->f_total[k].data() : f_total.data()};
    };
    if (!check_each) {
      forward_all(m, a, threads, in, substeps, dest, contacts);
      return Status::ok();
    }
    Status st = Status::ok();
    run_serial(lane_bytes, [&](const SerialExec& exec) {
      forward_substeps(exec, m, a, in, substeps, dest, contacts, [&](int k) {
        st = check_state_finite(*dest(k).state, "state");
        if (!st) st = name_force(m, dest(k).f_total, st);
        return !st;
      });
    });
    return st;
  }

  // the first element or particle whose force of the substep just run is not finite
  Status name_force(const ModelT<S>& m, const vec3<S>* force, const Status& st) const {
    for (int s = 0; s < m.slot_count(); ++s)
      if (!finite3(f_slot[s])) return Status::error(st.message() + " (non-finite force from " + slot_owner(m, s) + ")");
    for (int p = 0; p < m.particle_count(); ++p)
      if (!finite3(force[p]))
        return Status::error(st.message() + " (non-finite contact/external force on particle " + std::to_string(p) +
                             ")");
    return st;
  }

  // the backward's arguments of substep k: its input state and total force, its upstream
  // adjoint and its target, its input packed in pack(k % 2), its adj_f (one array for even k,
  // one for odd: GatherThenIntegrate)
  KernelArgs<S> adjoint_args(KernelArgs<S> a, int k, const StateT<S>& upstream, StateT<S>& target) {
    a.q = inputs[k]->particle_q.data();
    a.qd = inputs[k]->particle_qd.data();
    a.adj_q_out = upstream.particle_q.data();
    a.adj_qd_out = upstream.particle_qd.data();
    a.adj_q_in = target.particle_q.data();
    a.adj_qd_in = target.particle_qd.data();
    a.f_total = const_cast<vec3<S>*>(forces[k]);  // read only: the adjoint kernels never write it
    a.state_pack = lane_bytes > 0 ? pack(k % 2) : nullptr;
    a.adj_f = (k % 2 ? adj_f_odd : adj_f).data();
    return a;
  }
  // where substep k's adjoint goes: adj_in for the first, else adj_a and adj_b in turn
  StateT<S>& adjoint_target(int k, StateT<S>& adj_in) { return k == 0 ? adj_in : ((k % 2) ? adj_a : adj_b); }

  // backwards through the substeps whose inputs and forces are `inputs` and `forces`, on one
  // thread or inside the team's one parallel region. The last substep's integration adjoint
  // (and its input's pack, which it does not read) first; then for each substep its element
  // adjoints and its gather, the gather fused with the next substep's integration adjoint and
  // pack (kernels_simd.h's GatherThenIntegrate): two loops a substep, each ending in a barrier.
  // stop(target), after a substep: whether to stop (one thread only)
  template <class Exec, class Stop>
  void backward_substeps(const Exec& exec, const ModelT<S>& m, KernelArgs<S> a, const StateT<S>& adj_out,
                         StateT<S>& adj_in, const Stop& stop) {
    const int n = m.particle_count(), last = int(inputs.size()) - 1;
    a.grid = grid_view();
    KernelArgs<S> cur = adjoint_args(a, last, adj_out, adjoint_target(last, adj_in));
    if (lane_bytes > 0) {
      const PackStates<S> input{cur.q, cur.qd, n, pack(last % 2)};
      exec.launch_nowait(input.blocks(), input);
    }
    exec.launch(n, ParticleIntegrateAdjoint<S>{cur});
    for (int k = last;; --k) {
      StateT<S>& target = adjoint_target(k, adj_in);
      if (m.particle_contact) exec.single([&] { build_grid(m, cur.q); });
      element_adjoints(exec, cur);
      if (k == 0) {
        exec.launch(n, ParticleGatherAdjoint<S>{cur});
        stop(target);
        return;
      }
      const KernelArgs<S> next = adjoint_args(a, k - 1, target, adjoint_target(k - 1, adj_in));
      exec.launch(n, GatherThenIntegrate<S>{{cur}, {next}, lane_bytes > 0 ? pack((k - 1) % 2) : nullptr});
      if (stop(target)) return;
      cur = next;
    }
  }

  // backward_substeps; check_each: on one thread, stop at the first substep whose adjoint is not
  // finite, naming its element
  Status backward(const ModelT<S>& m, KernelArgs<S> a, int threads, const StateT<S>& adj_out, StateT<S>& adj_in,
                  ControlT<S>& adj_control, ModelGradT<S>& adj_model, const GradSlots& slots, bool check_each) {
    const int n = m.particle_count();
    a.f_slot = f_slot.data();
    point_adjoint_outputs(a, *this, adj_control, grad_view(adj_model, slots, grad_partials.data()));
    adj_in.particle_q.resize(n);
    adj_in.particle_qd.resize(n);
    if (!check_each) {
      run_chosen(threads, lane_bytes, substep_work(a.m), adjoint_team, [&](const auto& exec) {
        backward_substeps(exec, m, a, adj_out, adj_in, [](const StateT<S>&) { return false; });
      });
      return Status::ok();
    }
    Status st = Status::ok();
    run_serial(lane_bytes, [&](const SerialExec& exec) {
      backward_substeps(exec, m, a, adj_out, adj_in, [&](const StateT<S>& target) {
        st = check_state_finite(target, "adjoint");
        if (st) return false;
        for (int s = 0; s < m.slot_count(); ++s)
          if (!finite3(adj_q_slot[s]) || !finite3(adj_qd_slot[s])) {
            st = Status::error(st.message() + " (non-finite adjoint from " + slot_owner(m, s) + ")");
            return true;
          }
        st = Status::error(st.message() + " (from contact, mass or integration terms)");
        return true;
      });
    });
    return st;
  }
};

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
static KernelArgs<S> base_args(const ModelT<S>& model, const ControlT<S>& control, S h) {
  KernelArgs<S> a{};
  a.m = make_view(model);
  a.dt = h;
  a.control_f = data_or_null(control.particle_f);
  a.spring_act = data_or_null(control.spring_act);
  a.tet_act = data_or_null(control.tet_act);
  return a;
}

template <class S>
static bool control_ok(const ModelT<S>& m, const ControlT<S>& c) {
  return (c.particle_f.empty() || int(c.particle_f.size()) == m.particle_count()) &&
         (c.spring_act.empty() || int(c.spring_act.size()) == m.spring_count()) &&
         (c.tet_act.empty() || int(c.tet_act.size()) == m.tet_count());
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
  for (const auto& f : f_total) b += f.size() * sizeof(vec3<S>);
  for (const auto& t : bodies) b += t.bytes();
  return b;
}

// whether the positions and velocities are all finite (one pass, no message): a scalar is not
// when its exponent bits are all set, tested on the bits so that the loop runs on SIMD packs
// (x - x == 0 a scalar at a time took 5 us a step of the 32x32 cloth, serial between two steps)
template <class S>
static bool particles_finite(const StateT<S>& s) {
  using U = std::conditional_t<sizeof(S) == 4, std::uint32_t, std::uint64_t>;
  constexpr U exponent = sizeof(S) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  static_assert(sizeof(vec3<S>) == 3 * sizeof(S), "vec3 is three packed scalars");
  const std::size_t n = 3 * s.particle_q.size();
  U bad = 0;
  for (const vec3<S>* a : {s.particle_q.data(), s.particle_qd.data()}) {
    const S* x = reinterpret_cast<const S*>(a);
    for (std::size_t i = 0; i < n; ++i) {
      U bits;
      std::memcpy(&bits, x + i, sizeof bits);
      bad |= U((bits & exponent) == exponent);
    }
  }
  return bad == 0;
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
    return sc.implicit.step(model, in, out, control, dt, substeps, contacts, options_.implicit);
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
                               options_.implicit);
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
