// SolverT's particle scratch (SolverT<S>::Scratch): the particle stages' arrays and their
// substep loops on one thread or the team (engine/solver/team.h). Internal to engine/solver:
// the particle-only step (semi_implicit.cpp) and the coupled step (coupled.cpp) run their
// particle substeps on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/solver/grad_slots.h"
#include "engine/solver/implicit.h"
#include "engine/solver/kernels.h"
#include "engine/solver/kernels_simd.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"
#include "engine/solver/team.h"

namespace adj {

namespace particle_detail {

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

template <class S>
KernelArgs<S> base_args(const ModelT<S>& model, const ControlT<S>& control, S h) {
  KernelArgs<S> a{};
  a.m = make_view(model);
  a.dt = h;
  a.control_f = data_or_null(control.particle_f);
  a.spring_act = data_or_null(control.spring_act);
  a.tet_act = data_or_null(control.tet_act);
  return a;
}

template <class S>
bool control_ok(const ModelT<S>& m, const ControlT<S>& c) {
  return (c.particle_f.empty() || int(c.particle_f.size()) == m.particle_count()) &&
         (c.spring_act.empty() || int(c.spring_act.size()) == m.spring_count()) &&
         (c.tet_act.empty() || int(c.tet_act.size()) == m.tet_count());
}

// whether the positions and velocities are all finite (one pass, no message): a scalar is not
// when its exponent bits are all set, tested on the bits so that the loop runs on SIMD packs
// (x - x == 0 a scalar at a time took 5 us a step of the 32x32 cloth, serial between two steps)
template <class S>
bool particles_finite(const StateT<S>& s) {
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

}  // namespace particle_detail

using particle_detail::base_args;
using particle_detail::control_ok;
using particle_detail::finite3;
using particle_detail::PackStates;
using particle_detail::particles_finite;
using particle_detail::slot_owner;
using particle_detail::substep_work;

template <class S>
struct SolverT<S>::Scratch {
  Array<StateT<S>> sub;               // substep k's output state (adjoint recompute), (substeps)
  Array<Array<vec3<S>>> f_total_sub;  // total force of each recomputed substep, (substeps)
  Array<vec3<S>> f_slot, f_total, adj_f, adj_f_odd, adj_q_slot, adj_qd_slot, dummy_q, dummy_qd;
  Array<S> grad_partials;  // scene-wide fields' per-element gradient partials (grad_slots.h)
  Array<S> state_pack[2];  // substep k's input state for the lane kernels in [k % 2] (pack()), forward and backward
  StateT<S> adj_a, adj_b;
  ImplicitSolverT<S> implicit;  // the particle stages of a model whose integrator is implicit
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

}  // namespace adj
