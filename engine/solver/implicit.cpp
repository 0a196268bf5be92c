// Backward Euler for the particle stages and its implicit adjoint (engine/solver/implicit.h):
// Newton's method with a line search, restarted GMRES on products from the force kernels on
// dual numbers (J d) and from their adjoint kernels (J^T l).
#include "engine/solver/implicit.h"

#include <cmath>
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

// the block-Jacobi preconditioner P = J's 3x3 diagonal blocks, one a particle: z = P^-1 v, or
// P^-T v for the adjoint's J^T (transposed). Empty: none
template <class S>
struct BlockJacobi {
  Array<mat33<S>> inv;  // P's blocks inverted, (particle_count)
  bool transposed = false;
  bool empty() const { return inv.empty(); }
  void apply(const Vec<S>& v, Vec<S>& z) const {
    for (std::size_t i = 0; i < v.size(); ++i) z[i] = (transposed ? transpose(inv[i]) : inv[i]) * v[i];
  }
};

// restarted GMRES (modified Gram-Schmidt, Givens rotations) for A x = b from x = 0, right
// preconditioned by P (unless empty): it solves A P^-1 y = b, x = P^-1 y, whose residual is A x's,
// so it minimizes and stops on the true |b - A x|: at |b - A x| <= rtol |b| or after max_products
// products of A. Returns the products used; rel: the final |b - A x| / |b|
template <class S, class Op>
int gmres(const Op& A, const BlockJacobi<S>& P, const Vec<S>& b, Vec<S>& x, double rtol, int max_products, int restart,
          double& rel) {
  const std::size_t n = b.size();
  x.assign(n, vec3<S>());
  const double b_norm = norm(b);
  rel = 0;
  if (b_norm == 0) return 0;
  std::vector<Vec<S>> V(std::size_t(restart) + 1, Vec<S>(n));
  const std::size_t m = static_cast<std::size_t>(restart);
  std::vector<double> H((m + 1) * m), cs(m), sn(m), g(m + 1), y(m);
  auto h = [&](int i, int j) -> double& { return H[std::size_t(i) * std::size_t(restart) + std::size_t(j)]; };
  Vec<S> r = b, w(n), z(n);
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
  using D = Dual<S, 1>;
  ImplicitStats stats;
  int n = 0;
  S h = 0, damp = 0;  // substep and (1 + c h)
  vec3<S> gravity;
  const ModelT<S>* model = nullptr;
  KernelArgs<S> args{};
  KernelArgs<D> args_d{};
  LiftedArrays<D> lifted;  // the model's parameters as dual constants
  Vec<D> control_f_d;
  Array<D> spring_act_d, tet_act_d;
  std::vector<unsigned char> free;  // mass > 0
  // the bodies beside the particles (null: none): their poses as dual constants, the control's
  // force plus the pair forces at the iterate (pf, pf_d), a zero body-force adjoint
  const ImplicitBodies<S>* bodies = nullptr;
  rigid::CouplingParams<S> coupling;
  const vec3<S>* control_f = nullptr;
  Array<rigid::svec<S>> zero_fext;
  Vec<S> pf;
  Vec<D> pf_d;
  // the substep: its input (x0, v0), the iterate v+ and x+ = x0 + h v+, and the forces there
  Vec<S> x0, v0, vp, xp, f, g, d, trial_v, trial_x, trial_f, trial_g, half_v, half_x, half_f, half_g, jv, rhs, lambda,
      adj_x, adj_v, wx, wv, seed;
  Vec<S> f_slot, dummy_q, dummy_qd, adj_f, adj_q_slot, adj_qd_slot;
  Vec<D> xd, vd, f_slot_d, f_d, dummy_qd_d, dummy_q_d;
  Array<S> grad_sink, partials;
  // the preconditioner and the Jacobian's blocks it inverts (per slot, per particle)
  BlockJacobi<S> P;
  Array<mat33<S>> block_slot, block;
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
    lifted = {};
    args_d = KernelArgs<D>{};
    args_d.m = make_view<D>(m, &lifted);
    args_d.dt = D(step);
    control_f_d.clear();
    for (const vec3<S>& v : c.particle_f) control_f_d.push_back(lift<D>(v));
    spring_act_d.assign(c.spring_act.begin(), c.spring_act.end());
    tet_act_d.assign(c.tet_act.begin(), c.tet_act.end());
    args_d.control_f = data_or_null(control_f_d);
    args_d.spring_act = data_or_null(spring_act_d);
    args_d.tet_act = data_or_null(tet_act_d);
    free.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) free[std::size_t(i)] = m.particle_mass[std::size_t(i)] > S(0);
    const std::size_t slots = std::size_t(m.slot_count()), np = std::size_t(n);
    bodies = nullptr;
    control_f = args.control_f;
    P.inv.clear();
    for (Vec<S>* a : {&x0,      &v0,      &vp,      &xp,       &f,      &g,      &d,  &trial_v, &trial_x,
                      &trial_f, &trial_g, &half_v,  &half_x,   &half_f, &half_g, &jv, &rhs,     &lambda,
                      &adj_x,   &adj_v,   &dummy_q, &dummy_qd, &adj_f,  &pf,     &wx, &wv,      &seed})
      a->resize(np);
    for (Vec<S>* a : {&f_slot, &adj_q_slot, &adj_qd_slot}) a->resize(slots);
    for (Vec<D>* a : {&xd, &vd, &f_d, &dummy_q_d, &dummy_qd_d, &pf_d}) a->resize(np);
    f_slot_d.resize(slots);
    table = grid_table_size(n);
    cell_start.resize(std::size_t(table) + 1);
    grid_fill.resize(std::size_t(table));
    sorted.resize(np);
    cell.resize(np);
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
    bodies = &b;
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

  // pf_d: pf on the dual iterate (xd, vd)
  void pair_forces_dual() {
    for (int i = 0; i < n; ++i) {
      const std::size_t ii = std::size_t(i);
      pf_d[ii] = pair_force<D>(i, xd[ii], vd[ii], control_f_d.empty() ? vec3<D>() : control_f_d[ii]);
    }
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

  // the preconditioner P at the iterate (xp, vp; the grid built there): J's diagonal blocks,
  // M (1 + c h) I - h d f_i / d u_i (x_i = xp_i + h u_i, v_i = vp_i + u_i), the forces' from their
  // kernels on 3 tangents (kernels.h's jacobian_blocks) and beside bodies the pair forces', each
  // inverted; a pinned particle's (its row of J is zero) and a singular one's: M (1 + c h) alone
  void precondition(bool transposed) {
    const std::size_t np = std::size_t(n);
    KernelArgs<S> a = args;
    a.q = xp.data();
    a.qd = vp.data();
    a.grid = grid();
    block_slot.resize(f_slot.size());
    block.resize(np);
    jacobian_blocks(ElementExec{}, BlockArgs<S>{a, h, block_slot.data(), block.data()});
    P.inv.resize(np);
    P.transposed = transposed;
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < np; ++i) {
      const S m_i = mass[i] * damp;
      if (!free[i]) {
        P.inv[i] = mat33<S>::identity();
        continue;
      }
      mat33<S> B = block[i];
      if (bodies) {
        S in[6];
        store3(in, xp[i]);
        store3(in + 3, vp[i]);
        add_block(B, input_block(PairEval{this, int(i)}, in, 0, 3, 0, h));
      }
      double size = 0;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          B.m[r][c] = (r == c ? m_i : S(0)) - B.m[r][c] * h;
          size = std::max(size, std::fabs(double(B.m[r][c])));
        }
      const double det = double(determinant(B));
      if (std::fabs(det) > 1e-9 * size * size * size) {
        P.inv[i] = inverse(B);
      } else {
        P.inv[i] = mat33<S>();
        for (int r = 0; r < 3; ++r) P.inv[i].m[r][r] = S(1) / m_i;
      }
    }
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

  // J u at the iterate (xp, vp; the grid built there): the forces on dual numbers along
  // (h u, u), J u = M (1 + c h) u - h (h df/dx + df/dv) u
  void jvp(const Vec<S>& u, Vec<S>& out) {
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      for (int c = 0; c < 3; ++c) {
        xd[i][c] = D(xp[i][c]);
        xd[i][c].d[0] = u[i][c] * h;
        vd[i][c] = D(vp[i][c]);
        vd[i][c].d[0] = u[i][c];
      }
    KernelArgs<D> a = args_d;
    if (bodies) {
      pair_forces_dual();
      a.control_f = pf_d.data();
    }
    a.q = xd.data();
    a.qd = vd.data();
    a.f_slot = f_slot_d.data();
    a.f_total = f_d.data();
    a.q_out = dummy_q_d.data();
    a.qd_out = dummy_qd_d.data();
    a.grid = grid();
    substep_forward(ElementExec{}, a);
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < std::size_t(n); ++i) {
      const vec3<S> df{f_d[i].x.d[0], f_d[i].y.d[0], f_d[i].z.d[0]};
      out[i] = free[i] ? u[i] * (mass[i] * damp) - df * h : vec3<S>();
    }
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

  // J^T l = M (1 + c h) l - h (h (df/dx)^T l + (df/dv)^T l), model gradients to the sink
  void jtvp(const Vec<S>& l, Vec<S>& out, const ModelGradView<S>& sink) {
    vjp(l, sink, nullptr, nullptr, adj_x, adj_v);
    const S* mass = model->particle_mass.data();
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      out[i] = free[i] ? l[i] * (mass[i] * damp) - (adj_x[i] * h + adj_v[i]) * h : vec3<S>();
  }

  static double default_tol() { return std::is_same_v<S, float> ? 1e-5 : 1e-11; }

  // one substep backwards from (x0, v0, vp): aq, av hold dL/d (x+, v+) and leave with dL/d (x0, v0);
  // J^T l = dL/dv+ + h dL/dx+ (beside bodies, dL/d their pair forces' dependence on x+ and v+
  // added), then the inputs' adjoints from h l. sink: the products' model gradients (discarded);
  // grads: the substep's
  Status substep_adjoint(Vec<S>& aq, Vec<S>& av, const ModelGradView<S>& sink, const ModelGradView<S>& grads,
                         ControlT<S>& adj_control, ModelGradT<S>& adj_model, const ImplicitOptions& o, int k) {
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
    std::fill(grad_sink.begin(), grad_sink.end(), S(0));
    const double tol = o.tol > 0 ? o.tol : default_tol();
    if (o.precondition) precondition(true);
    stats.krylov += gmres<S>([&](const Vec<S>& u, Vec<S>& out) { jtvp(u, out, sink); }, P, rhs, lambda, tol,
                             o.max_krylov, o.restart, rel);
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
    int it = 0, slow = 0;
    bool stalled = false;
    // at a contact's on/off kink in float the residual can sit above the tolerance while the
    // potential still creeps down: it stops after 4 iterations without a 10% gain once below
    // sqrt(tol) (counted as unconverged)
    const double settled = std::sqrt(tol) * scale;
    for (; it < o.max_newton && r > tol * scale && !stalled && !(slow >= 4 && r <= settled); ++it) {
      const double r_prev = r;
      // inexact Newton: the linear solve to a relative eta, no tighter than the goal needs
      double eta = std::min(0.1, r / r0);
      eta = std::min(0.5, std::max(eta, 0.1 * tol * scale / r));
      for (std::size_t i = 0; i < np; ++i) rhs[i] = -g[i];
      double rel = 0;
      if (o.precondition) precondition(false);
      stats.krylov +=
          gmres<S>([&](const Vec<S>& u, Vec<S>& out) { jvp(u, out); }, P, rhs, d, eta, o.max_krylov, o.restart, rel);
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
      if (!std::isfinite(r)) break;
    }
    stats.newton += it;
    stats.substeps += 1;
    stats.last_residual = r / scale;
    stats.worst_residual = std::max(stats.worst_residual, r / scale);
    if (r > tol * scale) {
      stats.unconverged += 1;
      if (stalled) stats.stalled += 1;
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
  return b + std::size_t(20) * std::size_t(w_->n) * sizeof(vec3<S>);
}

template <class S>
Status ImplicitSolverT<S>::step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                                S dt, int substeps, ContactsT<S>* contacts, const ImplicitOptions& options) {
  Work& w = *w_;
  w.setup(model, control, dt / S(substeps));
  w.x0 = in.particle_q;
  w.v0 = in.particle_qd;
  for (int k = 0; k < substeps; ++k) {
    if (contacts && k + 1 == substeps) {
      StateT<S> s;
      s.particle_q = w.x0;
      s.particle_qd = w.v0;
      compute_contacts(model, s, *contacts);
    }
    if (Status st = w.solve(options, k); !st) return st;
    std::swap(w.x0, w.xp);
    std::swap(w.v0, w.vp);
  }
  out.particle_q = w.x0;
  out.particle_qd = w.v0;
  return Status::ok();
}

template <class S>
Status ImplicitSolverT<S>::adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                                   int substeps, const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                                   ModelGradT<S>& adj_model, const ImplicitOptions& options) {
  Work& w = *w_;
  w.setup(model, control, dt / S(substeps));
  // the forward, keeping each substep's input and converged velocity
  w.sub_x.resize(std::size_t(substeps));
  w.sub_v.resize(std::size_t(substeps));
  w.sub_vp.resize(std::size_t(substeps));
  w.x0 = in.particle_q;
  w.v0 = in.particle_qd;
  for (int k = 0; k < substeps; ++k) {
    if (Status st = w.solve(options, k); !st) return Status::error(st.message() + " (adjoint recompute)");
    w.sub_x[std::size_t(k)] = w.x0;
    w.sub_v[std::size_t(k)] = w.v0;
    w.sub_vp[std::size_t(k)] = w.vp;
    std::swap(w.x0, w.xp);
    std::swap(w.v0, w.vp);
  }
  // backwards, one transposed solve a substep
  const GradSlots slots = grad_slots(model);
  w.grad_sink.assign(std::size_t(slots.size), S(0));
  w.partials.assign(std::size_t(slots.size), S(0));
  const ModelGradView<S> sink = grad_view(slots, w.grad_sink.data());
  const ModelGradView<S> grads = grad_view(adj_model, slots, w.partials.data());
  Vec<S> aq = adj_out.particle_q, av = adj_out.particle_qd;
  for (int k = substeps - 1; k >= 0; --k) {
    w.x0 = w.sub_x[std::size_t(k)];
    w.v0 = w.sub_v[std::size_t(k)];
    w.vp = w.sub_vp[std::size_t(k)];
    if (Status st = w.substep_adjoint(aq, av, sink, grads, adj_control, adj_model, options, k); !st) return st;
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
  const GradSlots slots = grad_slots(model);
  w.grad_sink.assign(std::size_t(slots.size), S(0));
  const ModelGradView<S> sink = grad_view(slots, w.grad_sink.data());
  Vec<S> aq(adj_x_out, adj_x_out + n), av(adj_v_out, adj_v_out + n);
  if (Status st = w.substep_adjoint(aq, av, sink, grads, adj_control, adj_model, options, k); !st) return st;
  std::copy(aq.begin(), aq.end(), adj_x);
  std::copy(av.begin(), av.end(), adj_v);
  return Status::ok();
}

template class ImplicitSolverT<float>;
template class ImplicitSolverT<double>;

}  // namespace adj
