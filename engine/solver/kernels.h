// the per-element and per-particle loop bodies of one substep, forward and adjoint.
// each is an ADJ_HD functor over raw pointers: the CPU solver runs them with parallel_for,
// the CUDA backend launches the very same functors as kernels.
#pragma once

#include "engine/collision/particle_particle.h"
#include "engine/collision/particle_shape.h"
#include "engine/forces/aero.h"
#include "engine/forces/bending.h"
#include "engine/forces/spring.h"
#include "engine/forces/tet_fem.h"
#include "engine/forces/triangle.h"
#include "engine/model/field_table.h"
#include "engine/solver/hash_grid.h"

namespace adj {

// model arrays (read only)
template <class S>
struct ModelView {
  int particle_count, spring_count, tri_count, edge_count, tet_count, shape_count;
  int tri_slot, edge_slot, tet_slot;
  const vec3<S>* particle_q;
  const S* particle_mass;
  const S* particle_radius;
  vec3<S> gravity;
  S particle_damping;
  const Idx2* spring_indices;
  const S *spring_ke, *spring_kd, *spring_rest;
  const Idx3* tri_indices;
  const mat22<S>* tri_pose;
  const S *tri_area, *tri_ke, *tri_ka, *tri_kd;
  S tri_lift, tri_drag;
  const Idx4* edge_indices;
  const S *edge_rest_angle, *edge_ke, *edge_kd;
  const Idx4* tet_indices;
  const mat33<S>* tet_pose;
  const S *tet_volume, *tet_mu, *tet_lambda, *tet_kd;
  const int* shape_type;
  const vec3<S>* shape_pos;
  const mat33<S>* shape_rot;
  const vec3<S>* shape_size;
  const int *shape_mesh_start, *shape_mesh_count;
  const vec3<plain_scalar_t<S>>* mesh_vertices;  // constants, plain under a dual S
  const Idx3* mesh_tris;
  S contact_ke, contact_kd, contact_kf, contact_mu, contact_eps;
  int particle_contact;
  const int *incidence_start, *incidence_slot;
  const int *exclude_start, *exclude_list;

  ADJ_HD ShapeRef<S, plain_scalar_t<S>> shape(int s) const {
    return {shape_type[s], shape_pos[s], shape_rot[s],        shape_size[s],
            mesh_vertices, mesh_tris,    shape_mesh_start[s], shape_mesh_count[s]};
  }
  ADJ_HD bool excluded(int p, int q) const {
    int lo = exclude_start[p], hi = exclude_start[p + 1];
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (exclude_list[mid] < q)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < exclude_start[p + 1] && exclude_list[lo] == q;
  }
};

// the gradient slots the adjoint kernels add to: one pointer per particle-side row of
// engine/model/field_table.h, named as the row's field. A per-element field's slots are its
// gradient, (domain count); a scene-wide field's are per-element partials of its `slots`
// domain ((count x width), summed in index order afterwards: engine/solver/grad_slots.h)
template <class S>
struct ModelGradView {
#define ADJ_X(decl, kind, field, side, ...) ADJ_FIELD_PARTICLES_##side(S* field;)
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
};

// everything one substep reads and writes
template <class S>
struct KernelArgs {
  ModelView<S> m;
  GridView grid;
  S dt;
  // input state and control
  const vec3<S>* q;
  const vec3<S>* qd;
  const vec3<S>* control_f;
  const S* spring_act;
  const S* tet_act;
  // q and qd again for the host's lane kernels (engine/solver/kernels_simd.h): a particle's
  // (x, y, z, -, vx, vy, vz, -), (8 x particle_count); null: they read q and qd
  const S* state_pack;
  // forward outputs
  vec3<S>* f_slot;   // per-element force slots, (slot_count)
  vec3<S>* f_total;  // total force on each particle, (particle_count)
  vec3<S>* q_out;
  vec3<S>* qd_out;
  S* state_pack_out;  // q_out and qd_out as state_pack, written by the host's particle lanes (or null)
  // adjoint inputs and outputs
  const vec3<S>* adj_q_out;
  const vec3<S>* adj_qd_out;
  vec3<S>* adj_f;       // dL/d total force, (particle_count; the CPU solver pads it by one: kernels_simd.h)
  vec3<S>* adj_q_slot;  // per-slot dL/dx, (slot_count)
  vec3<S>* adj_qd_slot;
  vec3<S>* adj_q_in;
  vec3<S>* adj_qd_in;
  vec3<S>* adj_control_f;  // accumulated
  S* adj_spring_act;
  S* adj_tet_act;
  ModelGradView<S> g;  // dL/d model fields, accumulated
};

// ---- forward ----

// an element's packed state: its V vertices' positions, then their velocities
template <int V, class S>
ADJ_HD inline void pack_vertices(const KernelArgs<S>& a, const int* v, S* in) {
  for (int k = 0; k < V; ++k) {
    store3(in + 3 * k, a.q[v[k]]);
    store3(in + 3 * V + 3 * k, a.qd[v[k]]);
  }
}

template <class S>
ADJ_HD inline void pack_spring(const KernelArgs<S>& a, int e, S* in) {
  Idx2 id = a.m.spring_indices[e];
  int v[2] = {id.i, id.j};
  pack_vertices<2>(a, v, in);
  in[12] = a.m.spring_ke[e];
  in[13] = a.m.spring_kd[e];
  in[14] = a.m.spring_rest[e];
  in[15] = a.spring_act ? a.spring_act[e] : S(0);
}

template <class S>
struct SpringForward {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    S in[16], out[6];
    pack_spring(a, e, in);
    SpringEval{}.eval(in, out);
    a.f_slot[2 * e] = load3(out);
    a.f_slot[2 * e + 1] = load3(out + 3);
  }
};

template <class S>
ADJ_HD inline void pack_tri(const KernelArgs<S>& a, int e, S* in) {
  Idx3 id = a.m.tri_indices[e];
  int v[3] = {id.i, id.j, id.k};
  pack_vertices<3>(a, v, in);
}

template <class S>
ADJ_HD inline TriangleEval<S> tri_eval(const ModelView<S>& m, int e) {
  return {m.tri_pose[e], m.tri_area[e], m.tri_ke[e], m.tri_ka[e], m.tri_kd[e]};
}

template <class S>
struct TriangleForward {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    S in[18], out[9], aero[9];
    pack_tri(a, e, in);
    tri_eval(a.m, e).eval(in, out);
    AeroEval<S>{a.m.tri_lift, a.m.tri_drag}.eval(in, aero);
    for (int k = 0; k < 3; ++k) a.f_slot[a.m.tri_slot + 3 * e + k] = load3(out + 3 * k) + load3(aero + 3 * k);
  }
};

template <class S>
ADJ_HD inline void pack_quad(const KernelArgs<S>& a, Idx4 id, S* in) {
  int v[4] = {id.i, id.j, id.k, id.l};
  pack_vertices<4>(a, v, in);
}

template <class S>
struct BendingForward {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    S in[24], out[12];
    pack_quad(a, a.m.edge_indices[e], in);
    BendingEval<S>{a.m.edge_ke[e], a.m.edge_kd[e], a.m.edge_rest_angle[e]}.eval(in, out);
    for (int k = 0; k < 4; ++k) a.f_slot[a.m.edge_slot + 4 * e + k] = load3(out + 3 * k);
  }
};

template <class S>
ADJ_HD inline void pack_tet(const KernelArgs<S>& a, int e, S* in) {
  pack_quad(a, a.m.tet_indices[e], in);
  in[24] = a.m.tet_mu[e];
  in[25] = a.m.tet_lambda[e];
  in[26] = a.tet_act ? a.tet_act[e] : S(0);
}

template <class S>
struct TetForward {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    S in[27], out[12];
    pack_tet(a, e, in);
    TetEval<S>{a.m.tet_pose[e], a.m.tet_volume[e], a.m.tet_kd[e]}.eval(in, out);
    for (int k = 0; k < 4; ++k) a.f_slot[a.m.tet_slot + 4 * e + k] = load3(out + 3 * k);
  }
};

// the particle kernels' sums over their element slots (CSR) unrolled on the host: the same adds
// in the same order with less loop overhead per slot (32x32 cloth: -1.6% instructions). nvcc,
// which has no GCC pragma, unrolls as it chooses
#if defined(__GNUC__) && !defined(__CUDACC__)
#define ADJ_CSR_UNROLL _Pragma("GCC unroll 4")
#else
#define ADJ_CSR_UNROLL
#endif

template <class S>
ADJ_HD inline void pack_particle_contact(const KernelArgs<S>& a, int p, S* in) {
  store3(in, a.q[p]);
  store3(in + 3, a.qd[p]);
  in[6] = a.m.contact_ke;
  in[7] = a.m.contact_kd;
  in[8] = a.m.contact_mu;
}

template <class S>
ADJ_HD inline void pack_pair(const KernelArgs<S>& a, int p, int q, S* in) {
  store3(in, a.q[p]);
  store3(in + 3, a.q[q]);
  store3(in + 6, a.qd[p]);
  store3(in + 9, a.qd[q]);
  in[12] = a.m.contact_ke;
  in[13] = a.m.contact_kd;
  in[14] = a.m.contact_mu;
}

// visit the hash-grid neighbours q of p within contact range, in a fixed order
template <class S, class F>
ADJ_HD inline void for_each_neighbour(const KernelArgs<S>& a, int p, F& f) {
  Idx3 c = a.grid.cell[p];
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int cx = c.i + dx, cy = c.j + dy, cz = c.k + dz;
        int b = grid_hash(cx, cy, cz, a.grid.table_size);
        for (int k = a.grid.cell_start[b]; k < a.grid.cell_start[b + 1]; ++k) {
          int q = a.grid.sorted[k];
          Idx3 cq = a.grid.cell[q];
          if (q == p || cq.i != cx || cq.j != cy || cq.k != cz || a.m.excluded(p, q)) continue;
          f(q);
        }
      }
}

// sum of the contact forces on p (colliders and other particles)
template <class S>
struct ContactSum {
  const KernelArgs<S>& a;
  int p;
  vec3<S> f;
  ADJ_HD void operator()(int q) {
    S in[15], out[3];
    pack_pair(a, p, q, in);
    PairContactEval<S>{a.m.particle_radius[p] + a.m.particle_radius[q], a.m.contact_kf, a.m.contact_eps}.eval(in, out);
    f += load3(out);
  }
};

// the control force and the element slots' sum on p, in slot order
template <class S>
ADJ_HD inline vec3<S> slot_force(const KernelArgs<S>& a, int p) {
  vec3<S> f = a.control_f ? a.control_f[p] : vec3<S>();
  ADJ_CSR_UNROLL
  for (int k = a.m.incidence_start[p]; k < a.m.incidence_start[p + 1]; ++k) f += a.f_slot[a.m.incidence_slot[k]];
  return f;
}

// p's force from collider s (in: pack_particle_contact's)
template <class S>
ADJ_HD inline vec3<S> shape_force(const KernelArgs<S>& a, int p, int s, const S* in) {
  S out[3];
  ShapeContactEval<S>{a.m.shape(s), a.m.particle_radius[p], a.m.contact_kf, a.m.contact_eps}.eval(in, out);
  return load3(out);
}

// semi-implicit Euler's new velocity under force f; mass 0 = kinematic. T: a scalar, or a host
// SIMD pack (a particle a lane: engine/solver/kernels_simd.h)
template <class T, class S>
ADJ_HD inline vec3<T> integrate_velocity(const ModelView<S>& m, S dt, const T& mass, const vec3<T>& v,
                                         const vec3<T>& f) {
  const auto moving = mass > T(0);
  if (!any(moving)) return v;
  const S damp = S(1) - m.particle_damping * dt;
  return select(moving, (v + (lift<T>(m.gravity) + f / mass) * T(dt)) * T(damp), v);
}

// p's total force (elements, contacts, control) and its integration
template <class S>
struct ParticleForward {
  KernelArgs<S> a;
  ADJ_HD void operator()(int p) const {
    vec3<S> f = slot_force(a, p);
    S in[9];
    pack_particle_contact(a, p, in);
    for (int s = 0; s < a.m.shape_count; ++s) f += shape_force(a, p, s, in);
    if (a.m.particle_contact) {
      ContactSum<S> sum{a, p, vec3<S>()};
      for_each_neighbour(a, p, sum);
      f += sum.f;
    }
    a.f_total[p] = f;
    const vec3<S> v = integrate_velocity(a.m, a.dt, a.m.particle_mass[p], a.qd[p], f);
    a.qd_out[p] = v;
    a.q_out[p] = a.q[p] + v * a.dt;
  }
};

// ---- adjoint (after the forward kernels have refilled f_slot and f_total) ----

template <class S>
struct ParticleIntegrateAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int p) const {
    vec3<S> aq = a.adj_q_out[p], av = a.adj_qd_out[p];
    S m = a.m.particle_mass[p];
    vec3<S> av_total = av + aq * a.dt;
    a.adj_q_in[p] = aq;
    if (m > S(0)) {
      S damp = S(1) - a.m.particle_damping * a.dt;
      vec3<S> au = av_total * damp;
      a.adj_qd_in[p] = au;
      vec3<S> af = au * (a.dt / m);
      a.adj_f[p] = af;
      a.g.particle_mass[p] += -dot(af, a.f_total[p]) / m;
      // v' = (v + (g + f/m) h) damp
      for (int c = 0; c < 3; ++c) a.g.gravity[3 * p + c] += au[c] * a.dt;
      if (a.adj_control_f) a.adj_control_f[p] += af;
    } else {
      a.adj_qd_in[p] = av_total;
      a.adj_f[p] = vec3<S>();
    }
  }
};

template <class S>
struct SpringAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    Idx2 id = a.m.spring_indices[e];
    S in[16], ao[6], ai[16];
    pack_spring(a, e, in);
    store3(ao, a.adj_f[id.i]);
    store3(ao + 3, a.adj_f[id.j]);
    spring_adjoint(in, ao, ai);
    a.adj_q_slot[2 * e] = load3(ai);
    a.adj_q_slot[2 * e + 1] = load3(ai + 3);
    a.adj_qd_slot[2 * e] = load3(ai + 6);
    a.adj_qd_slot[2 * e + 1] = load3(ai + 9);
    a.g.spring_ke[e] += ai[12];
    a.g.spring_kd[e] += ai[13];
    a.g.spring_rest[e] += ai[14];
    if (a.adj_spring_act) a.adj_spring_act[e] += ai[15];
  }
};

template <class S>
struct TriangleAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    Idx3 id = a.m.tri_indices[e];
    int v[3] = {id.i, id.j, id.k};
    S in[18], ao[9], ai[18], ai2[18], mat[3], coef[2];
    pack_tri(a, e, in);
    for (int k = 0; k < 3; ++k) store3(ao + 3 * k, a.adj_f[v[k]]);
    triangle_adjoint(tri_eval(a.m, e), in, ao, ai, mat);
    if (a.m.tri_lift != S(0) || a.m.tri_drag != S(0)) {
      aero_adjoint(AeroEval<S>{a.m.tri_lift, a.m.tri_drag}, in, ao, ai2, coef);
      for (int k = 0; k < 18; ++k) ai[k] += ai2[k];
    } else {  // no aerodynamic force, but its coefficients' gradient
      aero_coef_adjoint(in, ao, coef);
    }
    a.g.tri_ke[e] += mat[0];
    a.g.tri_ka[e] += mat[1];
    a.g.tri_kd[e] += mat[2];
    a.g.lift[e] += coef[0];
    a.g.drag[e] += coef[1];
    for (int k = 0; k < 3; ++k) {
      a.adj_q_slot[a.m.tri_slot + 3 * e + k] = load3(ai + 3 * k);
      a.adj_qd_slot[a.m.tri_slot + 3 * e + k] = load3(ai + 9 + 3 * k);
    }
  }
};

template <class S>
struct BendingAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    Idx4 id = a.m.edge_indices[e];
    int v[4] = {id.i, id.j, id.k, id.l};
    S in[24], ao[12], ai[24], coef[2];
    pack_quad(a, id, in);
    for (int k = 0; k < 4; ++k) store3(ao + 3 * k, a.adj_f[v[k]]);
    bending_adjoint(BendingEval<S>{a.m.edge_ke[e], a.m.edge_kd[e], a.m.edge_rest_angle[e]}, in, ao, ai, coef);
    a.g.edge_ke[e] += coef[0];
    for (int k = 0; k < 4; ++k) {
      a.adj_q_slot[a.m.edge_slot + 4 * e + k] = load3(ai + 3 * k);
      a.adj_qd_slot[a.m.edge_slot + 4 * e + k] = load3(ai + 12 + 3 * k);
    }
  }
};

template <class S>
struct TetAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int e) const {
    Idx4 id = a.m.tet_indices[e];
    int v[4] = {id.i, id.j, id.k, id.l};
    S in[27], ao[12], ai[27];
    pack_tet(a, e, in);
    for (int k = 0; k < 4; ++k) store3(ao + 3 * k, a.adj_f[v[k]]);
    tet_adjoint(TetEval<S>{a.m.tet_pose[e], a.m.tet_volume[e], a.m.tet_kd[e]}, in, ao, ai);
    for (int k = 0; k < 4; ++k) {
      a.adj_q_slot[a.m.tet_slot + 4 * e + k] = load3(ai + 3 * k);
      a.adj_qd_slot[a.m.tet_slot + 4 * e + k] = load3(ai + 12 + 3 * k);
    }
    a.g.tet_mu[e] += ai[24];
    a.g.tet_lambda[e] += ai[25];
    if (a.adj_tet_act) a.adj_tet_act[e] += ai[26];
  }
};

// adjoint of the pair forces that involve p: its own pairs (seeded by adj_f[p]) and the
// mirrored ones of its neighbours (seeded by adj_f[q]), so nothing is scattered
template <class S>
struct ContactAdjointSum {
  const KernelArgs<S>& a;
  int p;
  vec3<S> aq, av;
  S ake, akd, amu;
  ADJ_HD void operator()(int q) {
    S in[15], ao[3], ai[15];
    PairContactEval<S> e{a.m.particle_radius[p] + a.m.particle_radius[q], a.m.contact_kf, a.m.contact_eps};
    if (!(length_sq(a.q[p] - a.q[q]) < e.radius_sum * e.radius_sum)) return;  // no force, no gradient
    pack_pair(a, p, q, in);
    store3(ao, a.adj_f[p]);
    pair_contact_adjoint(e, in, ao, ai);
    aq += load3(ai);
    av += load3(ai + 6);
    ake += ai[12];
    akd += ai[13];
    amu += ai[14];
    pack_pair(a, q, p, in);
    store3(ao, a.adj_f[q]);
    pair_contact_adjoint(e, in, ao, ai);
    aq += load3(ai + 3);
    av += load3(ai + 9);
  }
};

// whether p touches collider s (ShapeContactEval::touches; a plane without building the shape)
template <class S>
ADJ_HD inline bool particle_touches(const KernelArgs<S>& a, int p, int s) {
  if (a.m.shape_type[s] == GEOM_PLANE)
    return plane_touches(a.q[p], a.m.shape_pos[s], a.m.shape_size[s], a.m.particle_radius[p]);
  return ShapeContactEval<S>{a.m.shape(s), a.m.particle_radius[p], a.m.contact_kf, a.m.contact_eps}.touches(a.q[p]);
}

// p's adjoint from the integration and its element slots, in slot order
template <class S>
ADJ_HD inline void slot_adjoint(const KernelArgs<S>& a, int p, vec3<S>& aq, vec3<S>& av) {
  aq = a.adj_q_in[p], av = a.adj_qd_in[p];
  ADJ_CSR_UNROLL
  for (int k = a.m.incidence_start[p]; k < a.m.incidence_start[p + 1]; ++k) {
    int s = a.m.incidence_slot[k];
    aq += a.adj_q_slot[s];
    av += a.adj_qd_slot[s];
  }
}

// p's adjoint from its contacts added to aq, av (slot_adjoint's), stored, and the contact
// parameters' gradient
template <class S>
ADJ_HD inline void particle_gather_adjoint(const KernelArgs<S>& a, int p, vec3<S> aq, vec3<S> av) {
  S ake = 0, akd = 0, amu = 0;
  for (int s = 0; s < a.m.shape_count; ++s) {
    // out of contact the force and its derivatives are zero: skip the dual-number pass
    if (!particle_touches(a, p, s)) continue;
    S in[9], ao[3], ai[9];
    pack_particle_contact(a, p, in);
    store3(ao, a.adj_f[p]);
    const ShapeContactEval<S> e{a.m.shape(s), a.m.particle_radius[p], a.m.contact_kf, a.m.contact_eps};
    shape_contact_adjoint(e, in, ao, ai);
    aq += load3(ai);
    av += load3(ai + 3);
    ake += ai[6];
    akd += ai[7];
    amu += ai[8];
  }
  if (a.m.particle_contact) {
    ContactAdjointSum<S> sum{a, p, vec3<S>(), vec3<S>(), S(0), S(0), S(0)};
    for_each_neighbour(a, p, sum);
    aq += sum.aq;
    av += sum.av;
    ake += sum.ake;
    akd += sum.akd;
    amu += sum.amu;
  }
  a.adj_q_in[p] = aq;
  a.adj_qd_in[p] = av;
  a.g.contact_ke[p] += ake;
  a.g.contact_kd[p] += akd;
  a.g.contact_mu[p] += amu;
}

template <class S>
struct ParticleGatherAdjoint {
  KernelArgs<S> a;
  ADJ_HD void operator()(int p) const {
    vec3<S> aq, av;
    slot_adjoint(a, p, aq, av);
    particle_gather_adjoint(a, p, aq, av);
  }
};

// ---- the forces' Jacobian in 3x3 blocks (the implicit solve's Newton matrix,
// engine/solver/implicit.cpp) ----
// d f_j / d u_k along x_k = q_k + h u_k, v_k = qd_k + u_k (h df_j/dx_k + df_j/dv_k): each element's
// and contact's eval, the very function the forward runs, on dual numbers: an element's one eval on
// 3V tangents gives all its V x V blocks (vertex_blocks; a triangle's membrane, a bending edge and
// a tet in closed form: triangle_blocks, engine/forces/bending.h's bending_blocks and
// engine/forces/tet_fem.h's tet_blocks), a contact's on 3 tangents with one particle's inputs seeded its block against
// that particle (input_block)

// the blocks an element slot holds: its force against each vertex of its element, (slot_count x
// max_element_vertices); a spring's slots use 2, a triangle's 3
constexpr int max_element_vertices = 4;

template <class S>
ADJ_HD inline void add_block(mat33<S>& a, const mat33<S>& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a.m[i][j] += b.m[i][j];
}

// d out[o..o+2] / d u where in[x..x+2] = x + h u and in[v..v+2] = v + u, from f.eval on 3 tangents
template <class F, class S>
ADJ_HD inline mat33<S> input_block(const F& f, const S* in, int x, int v, int o, S h) {
  using D = Dual<S, 3>;
  D din[F::in_count], dout[F::out_count];
  for (int k = 0; k < F::in_count; ++k) din[k] = D(in[k]);
  for (int c = 0; c < 3; ++c) {
    din[x + c].d[c] = h;
    din[v + c].d[c] = S(1);
  }
  f.eval(din, dout);
  mat33<S> r;
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) r.m[i][c] = dout[o + i].d[c];
  return r;
}

// an element's V x V blocks (in: its packed vertices, pack_vertices'; out: a force per vertex):
// vertex j's force against vertex k's inputs added to block[max_element_vertices * j + k], all of
// them from one eval on 3V tangents (tangent 3k + c: vertex k's x_c seeded h, its v_c seeded 1),
// each tangent's arithmetic that of input_block's on vertex k
template <int V, class F, class S>
ADJ_HD inline void vertex_blocks(const F& f, const S* in, S h, mat33<S>* block) {
  using D = Dual<S, 3 * V>;
  D din[F::in_count], dout[F::out_count];
  for (int i = 0; i < F::in_count; ++i) din[i] = D(in[i]);
  for (int t = 0; t < 3 * V; ++t) {
    din[t].d[t] = h;
    din[3 * V + t].d[t] = S(1);
  }
  f.eval(din, dout);
  for (int j = 0; j < V; ++j)
    for (int k = 0; k < V; ++k)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) block[max_element_vertices * j + k].m[r][c] += dout[3 * j + r].d[3 * k + c];
}

template <class S>
struct BlockArgs {
  KernelArgs<S> a;     // the state the blocks are taken at (q, qd), its grid, the control's activations
  S h;                 // the substep
  mat33<S>* slot;      // each element slot's blocks, (slot_count x max_element_vertices)
  mat33<S>* particle;  // each particle's contacts' block against its own inputs, (particle_count)
};

// an element's V slots from `first` on, their blocks zeroed (each element's functor adds into them)
template <int V, class S>
ADJ_HD inline mat33<S>* zeroed_slot_blocks(const BlockArgs<S>& b, int first) {
  mat33<S>* out = b.slot + max_element_vertices * first;
  for (int k = 0; k < max_element_vertices * V; ++k) out[k] = mat33<S>();
  return out;
}

// element e's V slots from `first` on, zeroed, then its eval's blocks added
template <int V, class F, class S>
ADJ_HD inline void element_blocks(const BlockArgs<S>& b, int first, const F& f, const S* in) {
  vertex_blocks<V>(f, in, b.h, zeroed_slot_blocks<V>(b, first));
}

template <class S>
struct SpringBlocks {
  BlockArgs<S> b;
  ADJ_HD void operator()(int e) const {
    S in[16];
    pack_spring(b.a, e, in);
    element_blocks<2>(b, 2 * e, SpringEval{}, in);
  }
};

// a triangle's 3 x 3 blocks (triangle_force's membrane and strain-rate damping) in closed form,
// added to block[max_element_vertices * j + k]: with F = [fa fb] = [x10 x20] pose (pose [[a, b],
// [c, d]]) and P = [pa pb] = F S + kd dF/dt, f_j = -area (alpha_j pa + beta_j pb) for (alpha,
// beta) = (-a - c, -b - d), (a, b), (c, d) at vertices 0, 1, 2, and d p_p / d f_q = K_pq:
//   K_aa = s11 I + (2 ke + ka) fa fa^T + ke fb fb^T,   K_ab = s12 I + ka fa fb^T + ke fb fa^T,
//   K_ba = s12 I + ke fa fb^T + ka fb fa^T,            K_bb = s22 I + (2 ke + ka) fb fb^T + ke fa fa^T
// so block (j, k) = -area (h sum_pq coef_jp coef_kq K_pq + kd (alpha_j alpha_k + beta_j beta_k) I)
template <class S>
ADJ_HD inline void triangle_blocks(const TriangleEval<S>& t, const S* in, S h, mat33<S>* block) {
  const vec3<S> x0 = load3(in), x10 = load3(in + 3) - x0, x20 = load3(in + 6) - x0;
  const mat22<S>& p = t.pose;
  const vec3<S> fa = x10 * p.a + x20 * p.c, fb = x10 * p.b + x20 * p.d;
  const S e11 = S(0.5) * (dot(fa, fa) - S(1)), e22 = S(0.5) * (dot(fb, fb) - S(1)), e12 = S(0.5) * dot(fa, fb);
  const S tr = e11 + e22, ke2 = S(2) * t.ke;
  const S s11 = ke2 * e11 + t.ka * tr, s22 = ke2 * e22 + t.ka * tr, s12 = ke2 * e12;
  mat33<S> K[2][2];  // K[p][q] = d p_p / d f_q
  const S diag[2][2] = {{s11, s12}, {s12, s22}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const S aa = fa[r] * fa[c], bb = fb[r] * fb[c], ab = fa[r] * fb[c], ba = fb[r] * fa[c];
      K[0][0].m[r][c] = (ke2 + t.ka) * aa + t.ke * bb;
      K[0][1].m[r][c] = t.ka * ab + t.ke * ba;
      K[1][0].m[r][c] = t.ke * ab + t.ka * ba;
      K[1][1].m[r][c] = (ke2 + t.ka) * bb + t.ke * aa;
    }
  for (int i = 0; i < 2; ++i)
    for (int q = 0; q < 2; ++q)
      for (int r = 0; r < 3; ++r) K[i][q].m[r][r] += diag[i][q];
  const S coef[3][2] = {{-p.a - p.c, -p.b - p.d}, {p.a, p.b}, {p.c, p.d}};
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) {
      mat33<S>& out = block[max_element_vertices * j + k];
      S w[2][2];
      for (int i = 0; i < 2; ++i)
        for (int q = 0; q < 2; ++q) w[i][q] = -t.area * h * coef[j][i] * coef[k][q];
      const S damping = -t.area * t.kd * (coef[j][0] * coef[k][0] + coef[j][1] * coef[k][1]);
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c)
          out.m[r][c] += w[0][0] * K[0][0].m[r][c] + w[0][1] * K[0][1].m[r][c] + w[1][0] * K[1][0].m[r][c] +
                         w[1][1] * K[1][1].m[r][c];
        out.m[r][r] += damping;
      }
    }
}

template <class S>
struct TriangleBlocks {
  BlockArgs<S> b;
  ADJ_HD void operator()(int e) const {
    const ModelView<S>& m = b.a.m;
    S in[18];
    pack_tri(b.a, e, in);
    mat33<S>* out = zeroed_slot_blocks<3>(b, m.tri_slot + 3 * e);
    triangle_blocks(tri_eval(m, e), in, b.h, out);
    if (m.tri_lift != S(0) || m.tri_drag != S(0)) vertex_blocks<3>(AeroEval<S>{m.tri_lift, m.tri_drag}, in, b.h, out);
  }
};

template <class S>
struct BendingBlocks {
  BlockArgs<S> b;
  ADJ_HD void operator()(int e) const {
    const ModelView<S>& m = b.a.m;
    S in[24];
    pack_quad(b.a, m.edge_indices[e], in);
    mat33<S>* out = zeroed_slot_blocks<4>(b, m.edge_slot + 4 * e);
    static_assert(max_element_vertices == 4, "bending_blocks writes block[4 j + k]");
    bending_blocks(BendingEval<S>{m.edge_ke[e], m.edge_kd[e], m.edge_rest_angle[e]}, in, b.h, out);
  }
};

template <class S>
struct TetBlocks {
  BlockArgs<S> b;
  ADJ_HD void operator()(int e) const {
    const ModelView<S>& m = b.a.m;
    S in[27];
    pack_tet(b.a, e, in);
    tet_blocks(TetEval<S>{m.tet_pose[e], m.tet_volume[e], m.tet_kd[e]}, in, b.h,
               zeroed_slot_blocks<4>(b, m.tet_slot + 4 * e));
  }
};

// p's pair contacts: their blocks against p's own inputs summed, and each touching q's block
// d f_p / d u_q handed to emit(p, q, block) in the neighbour order
template <class S, class Emit>
struct ContactBlockSum {
  const KernelArgs<S>& a;
  int p;
  S h;
  const Emit& emit;
  mat33<S> block;
  ADJ_HD void operator()(int q) {
    S in[15];
    PairContactEval<S> e{a.m.particle_radius[p] + a.m.particle_radius[q], a.m.contact_kf, a.m.contact_eps};
    if (!(length_sq(a.q[p] - a.q[q]) < e.radius_sum * e.radius_sum)) return;  // no force
    pack_pair(a, p, q, in);
    add_block(block, input_block(e, in, 0, 6, 0, h));
    emit(p, q, input_block(e, in, 3, 9, 0, h));
  }
};

// p's contact blocks: its colliders' and its pairs' against its own inputs into b.particle[p],
// its pairs' against the other particle's to emit
template <class S, class Emit>
struct ContactBlocks {
  BlockArgs<S> b;
  Emit emit;
  ADJ_HD void operator()(int p) const {
    const KernelArgs<S>& a = b.a;
    mat33<S> block;
    S in[9];
    pack_particle_contact(a, p, in);
    for (int s = 0; s < a.m.shape_count; ++s) {
      if (!particle_touches(a, p, s)) continue;  // no force
      const ShapeContactEval<S> e{a.m.shape(s), a.m.particle_radius[p], a.m.contact_kf, a.m.contact_eps};
      add_block(block, input_block(e, in, 0, 3, 0, b.h));
    }
    if (a.m.particle_contact) {
      ContactBlockSum<S, Emit> sum{a, p, b.h, emit, mat33<S>()};
      for_each_neighbour(a, p, sum);
      add_block(block, sum.block);
    }
    b.particle[p] = block;
  }
};

// ---- one substep, on any executor with launch(n, functor) and launch_nowait(n, functor) ----
// launch: the next loop sees everything this one wrote. launch_nowait: the next loop may start
// before this one ends (a team of threads skips its barrier), so it is used only between the
// element loops, which read the state and write their own slots

// the executor of one thread and one element at a time (no lanes): the tangent step's
// (particle_tangent.cpp)
struct ElementExec {
  template <class F>
  void launch(int n, const F& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }
  template <class F>
  void launch_nowait(int n, const F& f) const {
    launch(n, f);
  }
};

template <class S, class Exec>
inline void substep_forward(const Exec& exec, const KernelArgs<S>& a) {
  exec.launch_nowait(a.m.spring_count, SpringForward<S>{a});
  exec.launch_nowait(a.m.tri_count, TriangleForward<S>{a});
  exec.launch_nowait(a.m.edge_count, BendingForward<S>{a});
  exec.launch(a.m.tet_count, TetForward<S>{a});
  exec.launch(a.m.particle_count, ParticleForward<S>{a});
}

// a substep's element adjoints, each element's slots from adj_f (which the integration's
// adjoint has filled), ending in a barrier. The host's backward (semi_implicit.cpp) runs them
// between a substep's integration adjoint and its gather as substep_adjoint does, with the
// gather fused to the next substep's integration adjoint (kernels_simd.h's GatherThenIntegrate)
template <class S, class Exec>
inline void element_adjoints(const Exec& exec, const KernelArgs<S>& a) {
  exec.launch_nowait(a.m.spring_count, SpringAdjoint<S>{a});
  exec.launch_nowait(a.m.tri_count, TriangleAdjoint<S>{a});
  exec.launch_nowait(a.m.edge_count, BendingAdjoint<S>{a});
  exec.launch(a.m.tet_count, TetAdjoint<S>{a});
}

// every element slot's and particle's blocks (BlockArgs), the pairs' to emit (on ElementExec: in
// particle order)
template <class S, class Exec, class Emit>
inline void jacobian_blocks(const Exec& exec, const BlockArgs<S>& b, const Emit& emit) {
  exec.launch_nowait(b.a.m.spring_count, SpringBlocks<S>{b});
  exec.launch_nowait(b.a.m.tri_count, TriangleBlocks<S>{b});
  exec.launch_nowait(b.a.m.edge_count, BendingBlocks<S>{b});
  exec.launch(b.a.m.tet_count, TetBlocks<S>{b});
  exec.launch(b.a.m.particle_count, ContactBlocks<S, Emit>{b, emit});
}

// recompute = false: the caller has already run substep_forward on this substep's input
// state and kept its f_total (the only forward result the adjoint kernels read)
template <class S, class Exec>
inline void substep_adjoint(const Exec& exec, const KernelArgs<S>& a, bool recompute = true) {
  if (recompute) substep_forward(exec, a);
  exec.launch(a.m.particle_count, ParticleIntegrateAdjoint<S>{a});
  element_adjoints(exec, a);
  exec.launch(a.m.particle_count, ParticleGatherAdjoint<S>{a});
}

}  // namespace adj
