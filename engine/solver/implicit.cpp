// Backward Euler for the particle stages and its implicit adjoint (engine/solver/implicit.h):
// Newton's method with a line search, restarted GMRES on products with the Newton matrix J
// assembled in 3x3 blocks at each iterate (J d, and J^T l for the adjoint).
#include "engine/solver/implicit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"

namespace adj {

namespace {

template <class S>
using Vec = Array<vec3<S>>;

template <class S>
double dot(const Vec<S>& a, const Vec<S>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += double(a[i].x) * double(b[i].x) + double(a[i].y) * double(b[i].y) + double(a[i].z) * double(b[i].z);
  return s;
}

template <class S>
double norm(const Vec<S>& a) {
  return std::sqrt(dot(a, a));
}

// y += s x
template <class S>
void axpy(double s, const Vec<S>& x, Vec<S>& y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] += x[i] * S(s);
}

template <class S>
bool finite(const Vec<S>& a) {
  for (const vec3<S>& v : a)
    if (!is_finite(v.x) || !is_finite(v.y) || !is_finite(v.z)) return false;
  return true;
}

// the Newton matrix J = M (1 + c h) - h df/du in 3x3 blocks, a block row per particle (CSR): the
// elements' blocks summed where their vertex pairs meet (a particle of a cloth's row holds about
// 13 blocks where its triangles' and bending edges' own blocks number about 50), each row's
// diagonal its own inertia, colliders and body pairs too; particle-particle contact, whose pairs
// come and go with the iterate, as a list of blocks (p, q) in row order. Pinned particles' rows
// and columns are zero: GMRES works on the free particles' velocities
template <class S>
struct BlockMatrix {
  Array<int> start, col, diag;  // row i's blocks [start[i], start[i + 1]), their columns, its diagonal's index
  // block ILU(0)'s symbolic part (Preconditioner::factor): for block e left of its row i's diagonal
  // (column k), the pairs (from, to) [elim_start[e], elim_start[e + 1]) of row k's blocks right of its
  // diagonal (column j) and row i's block in column j, in column order
  Array<int> elim_start, elim_from, elim_to;
  Array<mat33<S>> val;  // (start[particle_count])
  std::vector<int> pair_row, pair_col;
  std::vector<mat33<S>> pair_val;
  // out = J u
  void multiply(const Vec<S>& u, Vec<S>& out) const {
    for (std::size_t i = 0; i + 1 < start.size(); ++i) {
      vec3<S> s;
      for (int e = start[i]; e < start[i + 1]; ++e) s += val[std::size_t(e)] * u[std::size_t(col[std::size_t(e)])];
      out[i] = s;
    }
    for (std::size_t k = 0; k < pair_val.size(); ++k)
      out[std::size_t(pair_row[k])] += pair_val[k] * u[std::size_t(pair_col[k])];
  }
  // out = J^T l
  void multiply_transposed(const Vec<S>& l, Vec<S>& out) const {
    out.assign(l.size(), vec3<S>());
    for (std::size_t i = 0; i + 1 < start.size(); ++i)
      for (int e = start[i]; e < start[i + 1]; ++e)
        out[std::size_t(col[std::size_t(e)])] += transposed_times(val[std::size_t(e)], l[i]);
    for (std::size_t k = 0; k < pair_val.size(); ++k)
      out[std::size_t(pair_col[k])] += transposed_times(pair_val[k], l[std::size_t(pair_row[k])]);
  }
  static mat33<S> scaled(const mat33<S>& a, S s) {
    mat33<S> r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] * s;
    return r;
  }
  static vec3<S> transposed_times(const mat33<S>& a, const vec3<S>& v) {
    return {a.m[0][0] * v.x + a.m[1][0] * v.y + a.m[2][0] * v.z, a.m[0][1] * v.x + a.m[1][1] * v.y + a.m[2][1] * v.z,
            a.m[0][2] * v.x + a.m[1][2] * v.y + a.m[2][2] * v.z};
  }
};

// GMRES's preconditioner P on the assembled J (ImplicitOptions::preconditioner): z = P^-1 v, or
// P^-T v for the adjoint's J^T (transposed). Block Jacobi: P = J's 3x3 diagonal blocks. Block
// ILU(0): P = L U, L unit lower and U upper triangular in J's own block pattern (a row's
// particle and the particles it shares an element with), J's blocks eliminated in particle
// order with every fill-in outside the pattern dropped: it sees the coupling along a cloth's
// triangles and bending edges that block Jacobi ignores. A diagonal block that is singular (a
// pinned particle's zero row) is replaced by M (1 + c h) (the identity for a pinned one). The
// particle pairs' off-diagonal blocks (A's pair list) are left out of P. Empty: none
template <class S>
struct Preconditioner {
  ImplicitPreconditioner kind = ImplicitPreconditioner::none;
  bool transposed = false;
  const BlockMatrix<S>* A = nullptr;  // the pattern (and for ILU the blocks) factored
  Array<mat33<S>> inv;                // each row's diagonal block inverted (ILU: U's), (particle_count)
  Array<mat33<S>> lu;                 // ILU: L below the diagonal, U on and above it, in A's pattern

  bool empty() const { return kind == ImplicitPreconditioner::none; }

  // the diagonal block's inverse, or 1 / m_i (m_i: M (1 + c h)'s, 0 for a pinned particle)
  static mat33<S> invert(const mat33<S>& B, S m_i) {
    double size = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) size = std::max(size, std::fabs(double(B.m[r][c])));
    if (std::fabs(double(determinant(B))) > 1e-9 * size * size * size && size > 0) return inverse(B);
    if (m_i <= S(0)) return mat33<S>::identity();
    mat33<S> r;
    for (int c = 0; c < 3; ++c) r.m[c][c] = S(1) / m_i;
    return r;
  }

  // from A's blocks (m: each particle's M (1 + c h), 0 if pinned). Block ILU(0) can break down
  // where J is indefinite (a buckled cloth's compressed membranes, stiffer than its inertia): a
  // nearly singular pivot makes the later factors grow without bound. Factors grown past
  // 1 / epsilon of J's largest block (or not finite) carry no digit of J, so P falls back to block
  // Jacobi; returns false then
  bool factor(ImplicitPreconditioner k, const BlockMatrix<S>& a, const Array<S>& m, bool trans) {
    kind = k;
    transposed = trans;
    A = &a;
    const std::size_t np = m.size();
    inv.resize(np);
    if (kind == ImplicitPreconditioner::block_jacobi) {
      for (std::size_t i = 0; i < np; ++i) inv[i] = invert(a.val[std::size_t(a.diag[i])], m[i]);
      return true;
    }
    if (kind != ImplicitPreconditioner::block_ilu) return true;
    factor_ilu(a, m);
    if (grown(lu) <= grown(a.val) / double(std::numeric_limits<S>::epsilon())) return true;
    factor(ImplicitPreconditioner::block_jacobi, a, m, trans);
    return false;
  }

  // the largest entry's magnitude (infinity where one is not finite)
  static double grown(const Array<mat33<S>>& blocks) {
    double most = 0;
    for (const mat33<S>& b : blocks)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          const double x = std::fabs(double(b.m[r][c]));
          most = std::isfinite(x) ? std::max(most, x) : std::numeric_limits<double>::infinity();
        }
    return most;
  }

  void factor_ilu(const BlockMatrix<S>& a, const Array<S>& m) {
    const std::size_t np = m.size();
    lu = a.val;
    for (std::size_t i = 0; i < np; ++i) {
      // L_ik = A_ik U_kk^-1 for k < i in column order, each row i's later blocks less L_ik U_kj
      // where (i, j) is in the pattern (A's elimination list)
      for (int e = a.start[i]; e < a.diag[i]; ++e) {
        const std::size_t k = std::size_t(a.col[std::size_t(e)]);
        const mat33<S> l = lu[std::size_t(e)] * inv[k];
        lu[std::size_t(e)] = l;
        for (int t = a.elim_start[std::size_t(e)]; t < a.elim_start[std::size_t(e) + 1]; ++t) {
          const mat33<S> p = l * lu[std::size_t(a.elim_from[std::size_t(t)])];
          mat33<S>& u = lu[std::size_t(a.elim_to[std::size_t(t)])];
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) u.m[r][c] -= p.m[r][c];
        }
      }
      inv[i] = invert(lu[std::size_t(a.diag[i])], m[i]);
    }
  }

  // A's elimination list (BlockMatrix::elim_*) from its pattern: both rows' columns sorted, a merge
  static void symbolic(BlockMatrix<S>& a) {
    const std::size_t np = a.diag.size();
    a.elim_start.assign(a.col.size() + 1, 0);
    a.elim_from.clear();
    a.elim_to.clear();
    for (std::size_t i = 0; i < np; ++i) {
      const int row_end = a.start[i + 1];
      for (int e = a.start[i]; e < row_end; ++e) {
        if (e < a.diag[i]) {
          const std::size_t k = std::size_t(a.col[std::size_t(e)]);
          int f = e + 1;
          for (int g = a.diag[k] + 1; g < a.start[k + 1]; ++g) {
            const int j = a.col[std::size_t(g)];
            while (f < row_end && a.col[std::size_t(f)] < j) ++f;
            if (f == row_end) break;
            if (a.col[std::size_t(f)] != j) continue;
            a.elim_from.push_back(g);
            a.elim_to.push_back(f);
          }
        }
        a.elim_start[std::size_t(e) + 1] = int(a.elim_from.size());
      }
    }
  }

  void apply(const Vec<S>& v, Vec<S>& z) const {
    const std::size_t n = v.size();
    if (kind == ImplicitPreconditioner::block_jacobi) {
      for (std::size_t i = 0; i < n; ++i) z[i] = (transposed ? transpose(inv[i]) : inv[i]) * v[i];
      return;
    }
    const BlockMatrix<S>& a = *A;
    auto col = [&](int e) { return std::size_t(a.col[std::size_t(e)]); };
    if (!transposed) {
      // L y = v (unit lower), then U z = y
      for (std::size_t i = 0; i < n; ++i) {
        vec3<S> s = v[i];
        for (int e = a.start[i]; e < a.diag[i]; ++e) s -= lu[std::size_t(e)] * z[col(e)];
        z[i] = s;
      }
      for (std::size_t i = n; i-- > 0;) {
        vec3<S> s = z[i];
        for (int e = a.diag[i] + 1; e < a.start[i + 1]; ++e) s -= lu[std::size_t(e)] * z[col(e)];
        z[i] = inv[i] * s;
      }
      return;
    }
    // (L U)^T = U^T L^T: U^T y = v (lower: each row's y scattered to the later rows), then
    // L^T z = y (unit upper: scattered to the earlier rows)
    z = v;
    for (std::size_t i = 0; i < n; ++i) {
      z[i] = BlockMatrix<S>::transposed_times(inv[i], z[i]);
      for (int e = a.diag[i] + 1; e < a.start[i + 1]; ++e)
        z[col(e)] -= BlockMatrix<S>::transposed_times(lu[std::size_t(e)], z[i]);
    }
    for (std::size_t i = n; i-- > 0;)
      for (int e = a.start[i]; e < a.diag[i]; ++e)
        z[col(e)] -= BlockMatrix<S>::transposed_times(lu[std::size_t(e)], z[i]);
  }
};

// restarted GMRES (modified Gram-Schmidt, Givens rotations) for A x = b from x = 0, right
// preconditioned by P (unless empty): it solves A P^-1 y = b, x = P^-1 y, whose residual is A x's,
// so it minimizes and stops on the true |b - A x|: at |b - A x| <= rtol |b| or after max_products
// products of A. Returns the products used; rel: the final |b - A x| / |b|
// GMRES's Krylov basis and Hessenberg matrix, kept from solve to solve (sized on first use)
template <class S>
struct GmresWork {
  std::vector<Vec<S>> V;
  std::vector<double> H, cs, sn, g, y;
  Vec<S> r, w, z;
};

template <class S, class Op>
int gmres(const Op& A, const Preconditioner<S>& P, const Vec<S>& b, Vec<S>& x, double rtol, int max_products,
          int restart, double& rel, GmresWork<S>& work) {
  const std::size_t n = b.size();
  x.assign(n, vec3<S>());
  const double b_norm = norm(b);
  rel = 0;
  if (b_norm == 0) return 0;
  const std::size_t m = static_cast<std::size_t>(restart);
  std::vector<Vec<S>>& V = work.V;
  V.resize(m + 1);
  for (Vec<S>& v : V) v.resize(n);
  work.H.resize((m + 1) * m);
  for (std::vector<double>* a : {&work.cs, &work.sn, &work.y}) a->resize(m);
  work.g.resize(m + 1);
  std::vector<double>&H = work.H, &cs = work.cs, &sn = work.sn, &g = work.g, &y = work.y;
  auto h = [&](int i, int j) -> double& { return H[std::size_t(i) * std::size_t(restart) + std::size_t(j)]; };
  Vec<S>&r = work.r, &w = work.w, &z = work.z;
  r = b;
  w.resize(n);
  z.resize(n);
  int products = 0;
  double r_norm = b_norm;
  while (products < max_products && r_norm > rtol * b_norm) {
    for (std::size_t i = 0; i < n; ++i) V[0][i] = r[i] * S(1 / r_norm);
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = r_norm;
    int k = 0;
    for (int j = 0; j < restart && products < max_products; ++j) {
      if (P.empty()) {
        A(V[std::size_t(j)], w);
      } else {
        P.apply(V[std::size_t(j)], z);
        A(z, w);
      }
      ++products;
      for (int i = 0; i <= j; ++i) {
        h(i, j) = dot(w, V[std::size_t(i)]);
        axpy(-h(i, j), V[std::size_t(i)], w);
      }
      const double h_next = norm(w);
      if (h_next > 0)
        for (std::size_t i = 0; i < n; ++i) V[std::size_t(j) + 1][i] = w[i] * S(1 / h_next);
      for (int i = 0; i < j; ++i) {
        const double t = cs[std::size_t(i)] * h(i, j) + sn[std::size_t(i)] * h(i + 1, j);
        h(i + 1, j) = -sn[std::size_t(i)] * h(i, j) + cs[std::size_t(i)] * h(i + 1, j);
        h(i, j) = t;
      }
      const double d = std::hypot(h(j, j), h_next);
      cs[std::size_t(j)] = d > 0 ? h(j, j) / d : 1;
      sn[std::size_t(j)] = d > 0 ? h_next / d : 0;
      h(j, j) = d;
      g[std::size_t(j) + 1] = -sn[std::size_t(j)] * g[std::size_t(j)];
      g[std::size_t(j)] *= cs[std::size_t(j)];
      k = j + 1;
      if (std::fabs(g[std::size_t(j) + 1]) <= rtol * b_norm || h_next == 0) break;
    }
    // x += P^-1 V y, H y = g (upper triangular)
    for (int i = k - 1; i >= 0; --i) {
      double s = g[std::size_t(i)];
      for (int j = i + 1; j < k; ++j) s -= h(i, j) * y[std::size_t(j)];
      y[std::size_t(i)] = h(i, i) != 0 ? s / h(i, i) : 0;
    }
    if (P.empty()) {
      for (int i = 0; i < k; ++i) axpy(y[std::size_t(i)], V[std::size_t(i)], x);
    } else {
      w.assign(n, vec3<S>());
      for (int i = 0; i < k; ++i) axpy(y[std::size_t(i)], V[std::size_t(i)], w);
      P.apply(w, z);
      axpy(1.0, z, x);
    }
    // the true residual
    A(x, w);
    ++products;
    for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - w[i];
    const double prev = r_norm;
    r_norm = norm(r);
    if (!(r_norm < prev)) break;  // stagnation (or rounding floor)
  }
  rel = r_norm / b_norm;
  return products;
}

}  // namespace

template <class S>
struct ImplicitSolverT<S>::Work {
  ImplicitStats stats;
  int n = 0;
  S h = 0, damp = 0;  // substep and (1 + c h)
  vec3<S> gravity;
  const ModelT<S>* model = nullptr;
  KernelArgs<S> args{};
  std::vector<unsigned char> free;  // mass > 0
  // the bodies beside the particles (null: none; else &bodies_in, the caller's copied with its
  // view of the bodies, which outlive the substep for newton_products): the control's force plus
  // the pair forces at the iterate (pf), a zero body-force adjoint
  const ImplicitBodies<S>* bodies = nullptr;
  ImplicitBodies<S> bodies_in;
  rigid::RigidViewT<S> rigid_view;
  rigid::CouplingParams<S> coupling;
  const vec3<S>* control_f = nullptr;
  Array<rigid::svec<S>> zero_fext;
  Vec<S> pf;
  // the substep: its input (x0, v0), the iterate v+ and x+ = x0 + h v+, and the forces there
  Vec<S> x0, v0, vp, xp, f, g, d, trial_v, trial_x, trial_f, trial_g, half_v, half_x, half_f, half_g, rhs, lambda,
      adj_x, adj_v, wx, wv, seed;
  Vec<S> f_slot, dummy_q, dummy_qd, adj_f, adj_q_slot, adj_qd_slot;
  Array<S> grad_sink, partials, diag_mass;  // diag_mass: M (1 + c h)'s, 0 where pinned
  // the Newton matrix at the iterate and its preconditioner; the blocks it is summed from (each
  // element slot's against its element's vertices, each particle's contacts'), and for each slot
  // its particle and the index of its block against each vertex of its element in A.val (-1: none)
  BlockMatrix<S> A;
  Preconditioner<S> P;
  GmresWork<S> gmres_work;
  Array<mat33<S>> slot_block, contact_block;
  Array<int> slot_row, slot_entry;
  std::vector<int> topology, key;  // the elements A's pattern was built for (topology_key), the step's
  // the hash grid of x+
  int table = 0;
  Array<int> cell_start, sorted, grid_fill;
  Array<Idx3> cell;
  // each substep's input and converged velocity (the adjoint's)
  std::vector<Vec<S>> sub_x, sub_v, sub_vp;

  void setup(const ModelT<S>& m, const ControlT<S>& c, S step) {
    model = &m;
    n = m.particle_count();
    h = step;
    damp = S(1) + m.particle_damping * step;
    gravity = m.gravity;
    args = KernelArgs<S>{};
    args.m = make_view(m);
    args.dt = step;
    args.control_f = data_or_null(c.particle_f);
    args.spring_act = data_or_null(c.spring_act);
    args.tet_act = data_or_null(c.tet_act);
    free.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) free[std::size_t(i)] = m.particle_mass[std::size_t(i)] > S(0);
    const std::size_t slots = std::size_t(m.slot_count()), np = std::size_t(n);
    bodies = nullptr;
    control_f = args.control_f;
    P = Preconditioner<S>{};
    diag_mass.resize(np);
    for (Vec<S>* a : {&x0,      &v0,      &vp,       &xp,     &f,      &g,      &d,   &trial_v, &trial_x,
                      &trial_f, &trial_g, &half_v,   &half_x, &half_f, &half_g, &rhs, &lambda,  &adj_x,
                      &adj_v,   &dummy_q, &dummy_qd, &adj_f,  &pf,     &wx,     &wv,  &seed})
      a->resize(np);
    for (Vec<S>* a : {&f_slot, &adj_q_slot, &adj_qd_slot}) a->resize(slots);
    topology_key(key);
    if (key != topology) {  // A's pattern kept from the last step while the elements stay
      pattern();
      topology.swap(key);
    }
    table = grid_table_size(n);
    cell_start.resize(std::size_t(table) + 1);
    grid_fill.resize(std::size_t(table));
    sorted.resize(np);
    cell.resize(np);
  }

  // what A's pattern is built from, as ints: the particle and slot counts, the elements' slots
  // and vertices
  void topology_key(std::vector<int>& k) const {
    const ModelView<S>& m = args.m;
    k.assign({n, model->slot_count(), m.spring_count, m.tri_count, m.edge_count, m.tet_count, m.tri_slot, m.edge_slot,
              m.tet_slot});
    for (int e = 0; e < m.spring_count; ++e) k.insert(k.end(), {m.spring_indices[e].i, m.spring_indices[e].j});
    for (int e = 0; e < m.tri_count; ++e) {
      const Idx3 t = m.tri_indices[e];
      k.insert(k.end(), {t.i, t.j, t.k});
    }
    auto quads = [&](const Idx4* t, int count) {
      for (int e = 0; e < count; ++e) k.insert(k.end(), {t[e].i, t[e].j, t[e].k, t[e].l});
    };
    quads(m.edge_indices, m.edge_count);
    quads(m.tet_indices, m.tet_count);
  }

  // A's blocks (each row's columns: the particles it shares an element with, and itself), each
  // slot's place in them and ILU(0)'s elimination list, from the model's elements
  void pattern() {
    const ModelView<S>& m = args.m;
    const std::size_t np = std::size_t(n), slots = std::size_t(model->slot_count());
    constexpr int W = max_element_vertices;
    // each slot's particle (slot first + j: vertex j's force) and its element's vertices
    Array<int> vertex(slots * W, -1);
    slot_row.assign(slots, 0);
    auto element = [&](int first, int count, const int* v) {
      for (int j = 0; j < count; ++j) {
        slot_row[std::size_t(first + j)] = v[j];
        for (int k = 0; k < count; ++k) vertex[std::size_t(W * (first + j) + k)] = v[k];
      }
    };
    for (int e = 0; e < m.spring_count; ++e) {
      const int v[2] = {m.spring_indices[e].i, m.spring_indices[e].j};
      element(2 * e, 2, v);
    }
    for (int e = 0; e < m.tri_count; ++e) {
      const Idx3 t = m.tri_indices[e];
      const int v[3] = {t.i, t.j, t.k};
      element(m.tri_slot + 3 * e, 3, v);
    }
    for (int e = 0; e < m.edge_count; ++e) {
      const Idx4 t = m.edge_indices[e];
      const int v[4] = {t.i, t.j, t.k, t.l};
      element(m.edge_slot + 4 * e, 4, v);
    }
    for (int e = 0; e < m.tet_count; ++e) {
      const Idx4 t = m.tet_indices[e];
      const int v[4] = {t.i, t.j, t.k, t.l};
      element(m.tet_slot + 4 * e, 4, v);
    }
    std::vector<std::vector<int>> cols(np);
    for (std::size_t i = 0; i < np; ++i) cols[i].push_back(int(i));
    for (std::size_t s = 0; s < slots; ++s)
      for (int k = 0; k < W; ++k)
        if (vertex[W * s + std::size_t(k)] >= 0)
          cols[std::size_t(slot_row[s])].push_back(vertex[W * s + std::size_t(k)]);
    A.start.assign(np + 1, 0);
    A.col.clear();
    A.diag.resize(np);
    for (std::size_t i = 0; i < np; ++i) {
      std::sort(cols[i].begin(), cols[i].end());
      cols[i].erase(std::unique(cols[i].begin(), cols[i].end()), cols[i].end());
      A.diag[i] = int(A.col.size()) + int(std::lower_bound(cols[i].begin(), cols[i].end(), int(i)) - cols[i].begin());
      A.col.insert(A.col.end(), cols[i].begin(), cols[i].end());
      A.start[i + 1] = int(A.col.size());
    }
    A.val.resize(A.col.size());
    slot_entry.assign(slots * W, -1);
    for (std::size_t s = 0; s < slots; ++s) {
      const std::size_t r = std::size_t(slot_row[s]);
      const int* first = A.col.data() + A.start[r];
      const int* last = A.col.data() + A.start[r + 1];
      for (int k = 0; k < W; ++k)
        if (const int c = vertex[W * s + std::size_t(k)]; c >= 0)
          slot_entry[W * s + std::size_t(k)] = A.start[r] + int(std::lower_bound(first, last, c) - first);
    }
    slot_block.resize(slots * W);
    contact_block.resize(np);
    Preconditioner<S>::symbolic(A);
  }

  GridView grid() const { return {table, cell_start.data(), sorted.data(), cell.data()}; }
  void build_grid(const Vec<S>& q) {
    if (model->particle_contact)
      build_hash_grid(q.data(), n, model->grid_cell, table, cell_start.data(), sorted.data(), cell.data(),
                      grid_fill.data());
  }

  // a coupled substep's start: the model's constants, the bodies' poses, the particles' state
  void begin_coupled(const ModelT<S>& m, const ControlT<S>& c, S step, const ImplicitBodies<S>& b, const vec3<S>* x,
                     const vec3<S>* v) {
    setup(m, c, step);
    set_bodies(b);
    x0.assign(x, x + n);
    v0.assign(v, v + n);
  }

  // the bodies of a coupled substep (after setup)
  void set_bodies(const ImplicitBodies<S>& b) {
    rigid_view = *b.m;
    bodies_in = b;
    bodies_in.m = &rigid_view;
    bodies = &bodies_in;
    coupling = rigid::coupling_params(*model);
    zero_fext.assign(std::size_t(b.m->body_count()), rigid::svec<S>{});
  }

  rigid::CouplingInputs<S> pair_inputs(const Vec<S>& x, const Vec<S>& v) const {
    return {coupling, bodies->R, bodies->p, bodies->v, x.data(), v.data(), model->particle_radius.data(), n};
  }

  // pf = the control's force + the pair forces at (x, v), the pairs into their slots
  void pair_forces(const Vec<S>& x, const Vec<S>& v) {
    const rigid::CouplingInputs<S> in = pair_inputs(x, v);
    for (int i = 0; i < n; ++i)
      pf[std::size_t(i)] =
          (control_f ? control_f[i] : vec3<S>()) + rigid::coupling_particle(*bodies->m, in, i, bodies->pairs);
  }

  // sum + the pair forces on particle i at (x, xv) on numbers T, the bodies' poses and velocities
  // lifted to constants; the pairs those of the plain iterate xp (the broad phase's)
  template <class T>
  vec3<T> pair_force(int i, const vec3<T>& x, const vec3<T>& xv, vec3<T> sum) const {
    const rigid::RigidViewT<S>& m = *bodies->m;
    const rigid::CouplingParams<S>& c = coupling;
    const S r = model->particle_radius[std::size_t(i)];
    for (int s = 0; s < m.shape_count(); ++s) {
      const int b = m.shape_body[s];
      if (!rigid::particle_body_near(m, s, bodies->R[b], bodies->p[b], xp[std::size_t(i)], r)) continue;
      const rigid::svec<T> v{lift<T>(bodies->v[b].w), lift<T>(bodies->v[b].v)};
      vec3<T> xc, nrm, fp;
      if (rigid::particle_body_contact(m, s, lift<T>(bodies->R[b]), lift<T>(bodies->p[b]), v, x, xv, r, T(c.ke),
                                       T(c.kd), T(c.mu), c.kf, c.eps, xc, nrm, fp))
        sum += fp;
    }
    return sum;
  }

  // particle i's pair forces as a packed function (in = x, v; out = f) for kernels.h's input_block
  struct PairEval {
    static constexpr int in_count = 6, out_count = 3;
    const Work* w;
    int i;
    template <class T>
    void eval(const T* in, T* out) const {
      store3(out, w->pair_force(i, load3(in), load3(in + 3), vec3<T>()));
    }
  };

  // hands kernels.h's ContactBlocks each particle pair's block d f_p / d u_q: -h times it into
  // A's pair list where both particles are free
  struct PairSink {
    Work* w;
    void operator()(int p, int q, const mat33<S>& b) const {
      if (!w->free[std::size_t(p)] || !w->free[std::size_t(q)]) return;
      w->A.pair_row.push_back(p);
      w->A.pair_col.push_back(q);
      w->A.pair_val.push_back(BlockMatrix<S>::scaled(b, -w->h));
    }
  };

  // A at the iterate (xp, vp; the grid built there): J's blocks M (1 + c h) I - h d f_i / d u_j
  // (x_j = xp_j + h u_j, v_j = vp_j + u_j), the forces' from their kernels on 3 tangents (kernels.h's
  // jacobian_blocks) and beside bodies the pair forces'; then P of the kind asked for (transposed:
  // for J^T)
  void assemble(ImplicitPreconditioner preconditioner, bool transposed) {
    const std::size_t np = std::size_t(n), slots = slot_row.size();
    constexpr std::size_t W = max_element_vertices;
    KernelArgs<S> a = args;
    a.q = xp.data();
    a.qd = vp.data();
    a.grid = grid();
    A.pair_row.clear();
    A.pair_col.clear();
    A.pair_val.clear();
    jacobian_blocks(ElementExec{}, BlockArgs<S>{a, h, slot_block.data(), contact_block.data()}, PairSink{this});
    // df/du summed into the rows of the free particles, columns of the free ones
    std::fill(A.val.begin(), A.val.end(), mat33<S>());
    for (std::size_t s = 0; s < slots; ++s) {
      if (!free[std::size_t(slot_row[s])]) continue;
      for (std::size_t k = 0; k < W; ++k)
        if (const int e = slot_entry[W * s + k]; e >= 0 && free[std::size_t(A.col[std::size_t(e)])])
          add_block(A.val[std::size_t(e)], slot_block[W * s + k]);
    }
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < np; ++i) {
      if (!free[i]) continue;
      mat33<S>& B = A.val[std::size_t(A.diag[i])];
      add_block(B, contact_block[i]);
      if (bodies) {
        S in[6];
        store3(in, xp[i]);
        store3(in + 3, vp[i]);
        add_block(B, input_block(PairEval{this, int(i)}, in, 0, 3, 0, h));
      }
    }
    for (std::size_t i = 0; i < np; ++i)
      for (int e = A.start[i]; e < A.start[i + 1]; ++e) {
        mat33<S>& B = A.val[std::size_t(e)];
        B = BlockMatrix<S>::scaled(B, -h);
        if (e == A.diag[i] && free[i])
          for (int r = 0; r < 3; ++r) B.m[r][r] += mass[i] * damp;
      }
    for (std::size_t i = 0; i < np; ++i) diag_mass[i] = free[i] ? mass[i] * damp : S(0);
    if (!P.factor(preconditioner, A, diag_mass, transposed)) ++stats.ilu_fallbacks;
  }

  // an estimate of the residual's rounding floor at the iterate (after assemble): |g|'s part
  // that the scalar's rounding of x+ = x0 + h v+ (eps |x+|, through the forces' stiffness, J's
  // blocks over h less the inertia) and of the momenta (eps m |v|) leaves, the 2-norm over the
  // free particles. Where J's stiffness is large against the momentum (a stretched cloth in float)
  // this floor lies above the tolerance and no Newton step can go below it
  double rounding_floor() const {
    const double eps = std::numeric_limits<S>::epsilon();
    const S* mass = model->particle_mass.data();
    double sum = 0;
    for (std::size_t i = 0; i < std::size_t(n); ++i) {
      if (!free[i]) continue;
      const double momentum =
          double(mass[i]) * (double(damp) * length(vp[i]) + length(v0[i]) + double(h) * length(gravity));
      double row[3] = {momentum, momentum, momentum};
      for (int e = A.start[i]; e < A.start[i + 1]; ++e) {
        const mat33<S>& B = A.val[std::size_t(e)];
        const vec3<S>& x = xp[std::size_t(A.col[std::size_t(e)])];
        const S m_i = e == A.diag[i] ? diag_mass[i] : S(0);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            row[r] += std::fabs(double(B.m[r][c] - (r == c ? m_i : S(0)))) * std::fabs(double(x[c])) / double(h);
      }
      for (double b : row) sum += b * b;
    }
    return eps * std::sqrt(sum);
  }

  // adds the pairs' (df/dx)^T w and (df/dv)^T w at the iterate (xp, vp) to aq, av, with dL/d the
  // forces on the bodies adj_fext (null: zero); each touching pair's body and parameter adjoints
  // into bodies->grads
  void pair_vjp(const vec3<S>* w, const rigid::svec<S>* adj_fext, vec3<S>* aq, vec3<S>* av) {
    const rigid::CouplingInputs<S> in = pair_inputs(xp, vp);
    const rigid::svec<S>* fext = adj_fext ? adj_fext : zero_fext.data();
    for (int i = 0; i < n; ++i)
      rigid::coupling_particle_adjoint(*bodies->m, in, i, w ? w[i] : vec3<S>(), fext, bodies->grads, aq[i], av[i]);
  }

  // every force of the explicit step at (x, v) into out: elements, contacts, control (and the
  // bodies' pair forces)
  void forces(const Vec<S>& x, const Vec<S>& v, Vec<S>& out) {
    KernelArgs<S> a = args;
    if (bodies) {
      pair_forces(x, v);
      a.control_f = pf.data();
    }
    a.q = x.data();
    a.qd = v.data();
    a.f_slot = f_slot.data();
    a.f_total = out.data();
    a.q_out = dummy_q.data();
    a.qd_out = dummy_qd.data();
    a.grid = grid();
    substep_forward(ElementExec{}, a);
  }

  // g(v) at x = x0 + h v (the grid rebuilt there), with the forces into fo
  double residual(const Vec<S>& v, Vec<S>& x, Vec<S>& fo, Vec<S>& go) {
    for (int i = 0; i < n; ++i) x[std::size_t(i)] = x0[std::size_t(i)] + v[std::size_t(i)] * h;
    build_grid(x);
    forces(x, v, fo);
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      go[i] = free[i] ? (v[i] * damp - v0[i] - gravity * h) * mass[i] - fo[i] * h : vec3<S>();
    return norm(go);
  }

  // the residual at vp + alpha d (the line search's trial points)
  void line(double alpha, Vec<S>& v, Vec<S>& x, Vec<S>& fo, Vec<S>& go) {
    for (std::size_t i = 0; i < std::size_t(n); ++i) v[i] = vp[i] + d[i] * S(alpha);
    residual(v, x, fo, go);
  }

  // (df/dx)^T w and (df/dv)^T w at the iterate (the grid built there) into aq, av; the model
  // gradient's and the activations' adjoints go to g, adj_sa, adj_ta; beside bodies, the pairs'
  // too, with dL/d their forces on the bodies adj_fext (null: zero)
  void vjp(const Vec<S>& w, const ModelGradView<S>& gv, S* adj_sa, S* adj_ta, Vec<S>& aq, Vec<S>& av,
           const rigid::svec<S>* adj_fext = nullptr) {
    adj_f = w;
    aq.assign(std::size_t(n), vec3<S>());
    av.assign(std::size_t(n), vec3<S>());
    KernelArgs<S> a = args;
    a.q = xp.data();
    a.qd = vp.data();
    a.f_slot = f_slot.data();
    a.f_total = f.data();
    a.q_out = dummy_q.data();
    a.qd_out = dummy_qd.data();
    a.adj_f = adj_f.data();
    a.adj_q_slot = adj_q_slot.data();
    a.adj_qd_slot = adj_qd_slot.data();
    a.adj_q_in = aq.data();
    a.adj_qd_in = av.data();
    a.adj_spring_act = adj_sa;
    a.adj_tet_act = adj_ta;
    a.g = gv;
    a.grid = grid();
    element_adjoints(ElementExec{}, a);
    ElementExec{}.launch(n, ParticleGatherAdjoint<S>{a});
    if (bodies) pair_vjp(w.data(), adj_fext, aq.data(), av.data());
  }

  // J^T l = M (1 + c h) l - h (h (df/dx)^T l + (df/dv)^T l) from the forces' adjoint kernels, model
  // gradients to the sink: the definition A is held against (ImplicitSolverT::newton_products)
  void jtvp(const Vec<S>& l, Vec<S>& out, const ModelGradView<S>& sink) {
    vjp(l, sink, nullptr, nullptr, adj_x, adj_v);
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      out[i] = free[i] ? l[i] * (mass[i] * damp) - (adj_x[i] * h + adj_v[i]) * h : vec3<S>();
  }

  static double default_tol() { return std::is_same_v<S, float> ? 1e-5 : 1e-11; }

  // one substep backwards from (x0, v0, vp): aq, av hold dL/d (x+, v+) and leave with dL/d (x0, v0);
  // J^T l = dL/dv+ + h dL/dx+ (beside bodies, dL/d their pair forces' dependence on x+ and v+
  // added), then the inputs' adjoints from h l; grads: the substep's
  Status substep_adjoint(Vec<S>& aq, Vec<S>& av, const ModelGradView<S>& grads, ControlT<S>& adj_control,
                         ModelGradT<S>& adj_model, const ImplicitOptions& o, int k) {
    const std::size_t np = std::size_t(n);
    for (std::size_t i = 0; i < np; ++i) xp[i] = x0[i] + vp[i] * h;
    build_grid(xp);
    const rigid::svec<S>* adj_fext = bodies ? bodies->adj_fext : nullptr;
    if (adj_fext) {
      // the bodies' pair forces read x+ and v+: their adjoint joins the right-hand side
      wx.assign(np, vec3<S>());
      wv.assign(np, vec3<S>());
      pair_vjp(nullptr, adj_fext, wx.data(), wv.data());
    } else {
      wx.assign(np, vec3<S>());
      wv.assign(np, vec3<S>());
    }
    for (std::size_t i = 0; i < np; ++i) rhs[i] = free[i] ? av[i] + wv[i] + (aq[i] + wx[i]) * h : vec3<S>();
    double rel = 0;
    const double tol = o.tol > 0 ? o.tol : default_tol();
    assemble(o.preconditioner, true);
    stats.krylov += gmres<S>([&](const Vec<S>& u, Vec<S>& out) { A.multiply_transposed(u, out); }, P, rhs, lambda, tol,
                             o.max_krylov, o.restart, rel, gmres_work);
    if (!finite(lambda))
      return Status::error("implicit step adjoint, substep " + std::to_string(k) +
                           ": the transposed Newton system gave a non-finite adjoint");
    for (std::size_t i = 0; i < np; ++i) seed[i] = lambda[i] * h;
    // the forces' adjoint seeded with h l (and the pair forces on the bodies with dL/d them: the
    // pairs' x+, v+ part of that is dL/d x+, v+ as above)
    vjp(seed, grads, data_or_null(adj_control.spring_act), data_or_null(adj_control.tet_act), wx, wv, adj_fext);
    const bool control = adj_control.particle_f.size() == np;
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < np; ++i) {
      const vec3<S> l = lambda[i];
      if (free[i]) {
        av[i] = l * mass[i];
        if (control) adj_control.particle_f[i] += seed[i];
        const vec3<S> dg_dm = vp[i] * damp - v0[i] - gravity * h;
        adj_model.particle_mass[i] += -dot(l, dg_dm);
        for (int c = 0; c < 3; ++c) grads.gravity[3 * i + std::size_t(c)] += h * mass[i] * l[c];
      } else {
        av[i] = av[i] + aq[i] * h + wx[i] * h + wv[i];
      }
      aq[i] = aq[i] + wx[i];
    }
    return Status::ok();
  }

  // one substep from (x0, v0): vp converged, xp = x0 + h vp, f the forces there (grid built there).
  // g is the gradient of the step's incremental potential E(v) = 1/2 (1 + c h) v'Mv - v'M(v0 + h
  // gravity) + U(x0 + h v) + h D(v) wherever the forces come from energies U and dissipation
  // potentials D (elements, contact springs, Rayleigh and contact damping, friction at a fixed normal
  // force); its change along a direction d is the integral of g . d, which Simpson's rule takes from
  // the line search's own residual evaluations (at alpha and alpha / 2), so the search needs no
  // energy of any force and loses no digits to cancelling large energies. Each iteration descends
  // in E (Armijo), which a residual-norm search cannot promise across friction's narrow stick-slip
  // transition, where Newton's step overshoots and |g| grows before E falls
  Status solve(const ImplicitOptions& o, int k) {
    const double tol = o.tol > 0 ? o.tol : default_tol();
    const std::size_t np = std::size_t(n);
    vp = v0;
    double r = residual(vp, xp, f, g);
    // the momentum scale the residual is measured against: |M (v + h gravity)| + |h f|
    double scale = 0;
    {
      Vec<S> mv(np), hf(np);
      for (std::size_t i = 0; i < np; ++i)
        if (free[i]) {
          mv[i] = (v0[i] + gravity * h) * model->particle_mass[i];
          hf[i] = f[i] * h;
        }
      scale = norm(mv) + norm(hf) + 1e-30;
    }
    const double r0 = r;
    int it = 0, slow = 0, no_gain = 0;
    bool stalled = false;
    // at a contact's on/off kink in float the residual can sit above the tolerance while the
    // potential still creeps down: it stops after 4 iterations without a 10% gain once below
    // sqrt(tol) (counted as unconverged). At the rounding floor (within floor_factor of
    // rounding_floor's estimate) it stops after 2 iterations that did not halve the best residual
    // (counted as unconverged, at the floor)
    const double settled = std::sqrt(tol) * scale;
    constexpr double floor_factor = 4;
    double floor = 0, best = r;
    auto at_floor = [&] { return no_gain >= 2 && r <= floor_factor * floor; };
    for (; it < o.max_newton && r > tol * scale && !stalled && !(slow >= 4 && r <= settled) && !at_floor(); ++it) {
      const double r_prev = r;
      // inexact Newton: the linear solve to a relative eta, at most 1e-3 under block ILU (a
      // GMRES product there costs far less than the assembly a Newton iteration takes: on a
      // hanging cloth at tolerance 1e-6, 2.0 Newton iterations a substep where eta 0.1 took 3.9),
      // 0.1 under block Jacobi or none (whose solves to 1e-3 can run out of products: a 0.1 g
      // cloth's pinch), no tighter than the goal needs
      const double eta_max = o.preconditioner == ImplicitPreconditioner::block_ilu ? 1e-3 : 0.1;
      double eta = std::min(eta_max, r / r0);
      eta = std::min(0.5, std::max(eta, 0.1 * tol * scale / r));
      for (std::size_t i = 0; i < np; ++i) rhs[i] = -g[i];
      double rel = 0;
      assemble(o.preconditioner, false);
      floor = rounding_floor();
      stats.krylov += gmres<S>([&](const Vec<S>& u, Vec<S>& out) { A.multiply(u, out); }, P, rhs, d, eta, o.max_krylov,
                               o.restart, rel, gmres_work);
      // dE/dalpha at the iterate; where the Newton direction does not descend (a Jacobian whose
      // symmetric part is indefinite: friction's normal force moving with the iterate), the
      // mass-scaled steepest descent does
      double slope0 = dot(g, d);
      if (!(slope0 < 0)) {
        for (std::size_t i = 0; i < np; ++i)
          d[i] = free[i] ? g[i] * S(-1 / (model->particle_mass[i] * damp)) : vec3<S>();
        slope0 = dot(g, d);
        stats.steepest += 1;
      }
      // backtracking on E: trial_* at alpha, half_* at alpha / 2
      double alpha = 1;
      line(alpha, trial_v, trial_x, trial_f, trial_g);
      double slope_end = dot(trial_g, d);
      stalled = true;
      for (int ls = 0; ls < 20 && slope0 < 0; ++ls, alpha *= 0.5) {
        line(alpha * 0.5, half_v, half_x, half_f, half_g);
        const double slope_mid = dot(half_g, d);
        const double dE = alpha / 6 * (slope0 + 4 * slope_mid + slope_end);
        if (dE <= 1e-4 * alpha * slope0 && std::isfinite(dE)) {
          std::swap(vp, trial_v);
          std::swap(xp, trial_x);
          std::swap(f, trial_f);
          std::swap(g, trial_g);
          r = norm(g);
          stalled = false;
          break;
        }
        std::swap(trial_v, half_v);
        std::swap(trial_x, half_x);
        std::swap(trial_f, half_f);
        std::swap(trial_g, half_g);
        slope_end = slope_mid;
      }
      build_grid(xp);  // the grid back at the iterate
      slow = r > 0.9 * r_prev ? slow + 1 : 0;
      no_gain = r < 0.5 * best ? 0 : no_gain + 1;
      best = std::min(best, r);
      if (!std::isfinite(r)) break;
    }
    stats.newton += it;
    stats.substeps += 1;
    stats.last_residual = r / scale;
    stats.worst_residual = std::max(stats.worst_residual, r / scale);
    if (r > tol * scale) {
      stats.unconverged += 1;
      if (stalled) stats.stalled += 1;
      if (at_floor()) stats.at_floor += 1;
    }
    if (!std::isfinite(r) || !finite(vp))
      return Status::error("implicit step, substep " + std::to_string(k) +
                           ": Newton's method diverged (the residual is not finite)");
    return Status::ok();
  }
};

template <class S>
ImplicitSolverT<S>::ImplicitSolverT() : w_(new Work) {}
template <class S>
ImplicitSolverT<S>::~ImplicitSolverT() = default;
template <class S>
ImplicitSolverT<S>::ImplicitSolverT(ImplicitSolverT&&) noexcept = default;
template <class S>
ImplicitSolverT<S>& ImplicitSolverT<S>::operator=(ImplicitSolverT&&) noexcept = default;

template <class S>
const ImplicitStats& ImplicitSolverT<S>::stats() const {
  return w_->stats;
}

template <class S>
std::size_t ImplicitSolverT<S>::scratch_bytes() const {
  std::size_t b = 0;
  for (const auto* s : {&w_->sub_x, &w_->sub_v, &w_->sub_vp})
    for (const Vec<S>& v : *s) b += v.size() * sizeof(vec3<S>);
  b += (w_->A.val.size() + w_->P.lu.size() + w_->P.inv.size() + w_->A.pair_val.size() + w_->slot_block.size() +
        w_->contact_block.size()) *
       sizeof(mat33<S>);
  return b + std::size_t(20) * std::size_t(w_->n) * sizeof(vec3<S>);
}

template <class S>
void ImplicitSolverT<S>::newton_products(const vec3<S>* u, const vec3<S>* l, vec3<S>* ju, vec3<S>* jtl,
                                         vec3<S>* jtl_kernels) {
  Work& w = *w_;
  const std::size_t n = std::size_t(w.n);
  w.build_grid(w.xp);
  w.assemble(ImplicitPreconditioner::none, false);
  Vec<S> uu(u, u + n), ll(l, l + n), out(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!w.free[i]) ll[i] = vec3<S>();
  w.A.multiply(uu, out);
  std::copy(out.begin(), out.end(), ju);
  w.A.multiply_transposed(ll, out);
  std::copy(out.begin(), out.end(), jtl);
  // the pairs' adjoint writes its body adjoints (a forward-only substep has no slots for them)
  std::vector<rigid::CouplingPairGrad<S>> pair_grads;
  if (w.bodies && !w.bodies_in.grads) {
    pair_grads.resize(std::size_t(w.bodies_in.m->shape_count()) * n);
    w.bodies_in.grads = pair_grads.data();
  }
  const GradSlots slots = grad_slots(*w.model);
  w.grad_sink.assign(std::size_t(slots.size), S(0));
  w.jtvp(ll, out, grad_view(slots, w.grad_sink.data()));
  if (!pair_grads.empty()) w.bodies_in.grads = nullptr;
  std::copy(out.begin(), out.end(), jtl_kernels);
}

template <class S>
Status ImplicitSolverT<S>::step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                                S dt, int substeps, ContactsT<S>* contacts, const ImplicitOptions& options,
                                StepRecordT<S>* record) {
  Work& w = *w_;
  w.setup(model, control, dt / S(substeps));
  if (record) {
    record->substeps = substeps;
    record->f_total.clear();
    record->sub.resize(std::size_t(substeps - 1));
    record->v_plus.resize(std::size_t(substeps));
  }
  w.x0 = in.particle_q;
  w.v0 = in.particle_qd;
  for (int k = 0; k < substeps; ++k) {
    if (k > 0) {  // the last substep's iterate stays (newton_products)
      std::swap(w.x0, w.xp);
      std::swap(w.v0, w.vp);
    }
    if (contacts && k + 1 == substeps) {
      StateT<S> s;
      s.particle_q = w.x0;
      s.particle_qd = w.v0;
      compute_contacts(model, s, *contacts);
    }
    if (record && k > 0) {
      record->sub[std::size_t(k) - 1].particle_q = w.x0;
      record->sub[std::size_t(k) - 1].particle_qd = w.v0;
    }
    if (Status st = w.solve(options, k); !st) return st;
    if (record) record->v_plus[std::size_t(k)] = w.vp;
  }
  out.particle_q = w.xp;
  out.particle_qd = w.vp;
  return Status::ok();
}

template <class S>
Status ImplicitSolverT<S>::adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                                   int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                   ModelGradT<S>& adj_model, const ImplicitOptions& options,
                                   const StepRecordT<S>* record) {
  Work& w = *w_;
  w.setup(model, control, dt / S(substeps));
  // the forward, keeping each substep's input and converged velocity (the step's record's where
  // it kept them)
  w.sub_x.resize(std::size_t(substeps));
  w.sub_v.resize(std::size_t(substeps));
  w.sub_vp.resize(std::size_t(substeps));
  w.x0 = in.particle_q;
  w.v0 = in.particle_qd;
  const std::size_t n = std::size_t(model.particle_count());
  bool recorded = record && record->substeps == substeps && record->v_plus.size() == std::size_t(substeps) &&
                  record->sub.size() == std::size_t(substeps - 1);
  for (int k = 0; recorded && k < substeps; ++k)
    recorded = record->v_plus[std::size_t(k)].size() == n &&
               (k == 0 || record->sub[std::size_t(k) - 1].particle_q.size() == n);
  for (int k = 0; k < substeps; ++k) {
    if (recorded) {
      if (k > 0) {
        w.x0 = record->sub[std::size_t(k) - 1].particle_q;
        w.v0 = record->sub[std::size_t(k) - 1].particle_qd;
      }
      w.sub_x[std::size_t(k)] = w.x0;
      w.sub_v[std::size_t(k)] = w.v0;
      w.sub_vp[std::size_t(k)] = record->v_plus[std::size_t(k)];
      continue;
    }
    if (Status st = w.solve(options, k); !st) return Status::error(st.message() + " (adjoint recompute)");
    w.sub_x[std::size_t(k)] = w.x0;
    w.sub_v[std::size_t(k)] = w.v0;
    w.sub_vp[std::size_t(k)] = w.vp;
    std::swap(w.x0, w.xp);
    std::swap(w.v0, w.vp);
  }
  // backwards, one transposed solve a substep
  const GradSlots slots = grad_slots(model);
  w.partials.assign(std::size_t(slots.size), S(0));
  const ModelGradView<S> grads = grad_view(adj_model, slots, w.partials.data());
  Vec<S> aq = adj_out.particle_q, av = adj_out.particle_qd;
  for (int k = substeps - 1; k >= 0; --k) {
    w.x0 = w.sub_x[std::size_t(k)];
    w.v0 = w.sub_v[std::size_t(k)];
    w.vp = w.sub_vp[std::size_t(k)];
    if (Status st = w.substep_adjoint(aq, av, grads, adj_control, adj_model, options, k); !st) return st;
  }
  adj_in.particle_q = aq;
  adj_in.particle_qd = av;
  add_slots(slots, w.partials.data(), adj_model, /*per_element=*/false);
  if (!finite(aq) || !finite(av)) return check_state_finite(adj_in, "implicit step adjoint");
  return Status::ok();
}

template <class S>
Status ImplicitSolverT<S>::coupled_substep(const ModelT<S>& model, const vec3<S>* x, const vec3<S>* v, vec3<S>* x_out,
                                           vec3<S>* v_out, const ControlT<S>& control, S h,
                                           const ImplicitBodies<S>& bodies, const ImplicitOptions& options, int k) {
  Work& w = *w_;
  w.begin_coupled(model, control, h, bodies, x, v);
  if (Status st = w.solve(options, k); !st) return st;
  // the pairs of the converged state: what the bodies feel
  w.pair_forces(w.xp, w.vp);
  std::copy(w.xp.begin(), w.xp.end(), x_out);
  std::copy(w.vp.begin(), w.vp.end(), v_out);
  return Status::ok();
}

template <class S>
Status ImplicitSolverT<S>::coupled_substep_adjoint(const ModelT<S>& model, const vec3<S>* x, const vec3<S>* v,
                                                   const vec3<S>* v_out, const ControlT<S>& control, S h,
                                                   const ImplicitBodies<S>& bodies, const vec3<S>* adj_x_out,
                                                   const vec3<S>* adj_v_out, vec3<S>* adj_x, vec3<S>* adj_v,
                                                   ControlT<S>& adj_control, ModelGradT<S>& adj_model,
                                                   const ModelGradView<S>& grads, const ImplicitOptions& options,
                                                   int k) {
  Work& w = *w_;
  const std::size_t n = std::size_t(model.particle_count());
  w.begin_coupled(model, control, h, bodies, x, v);
  w.vp.assign(v_out, v_out + n);
  Vec<S> aq(adj_x_out, adj_x_out + n), av(adj_v_out, adj_v_out + n);
  if (Status st = w.substep_adjoint(aq, av, grads, adj_control, adj_model, options, k); !st) return st;
  std::copy(aq.begin(), aq.end(), adj_x);
  std::copy(av.begin(), av.end(), adj_v);
  return Status::ok();
}

template class ImplicitSolverT<float>;
template class ImplicitSolverT<double>;

}  // namespace adj
