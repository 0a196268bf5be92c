// helpers shared by the engine tests: random configurations, vjp-vs-FD checks of packed
// force functions, and end-to-end rollout FD checks
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/grad/fd_check.h"
#include "engine/grad/rollout.h"
#include "engine/model/builder.h"

namespace adj::test {

// checks a force's adjoint adj_in = J^T adj_out against central differences of
// <adj_out, f(in)>, and against the dual-number vector-Jacobian product of the same force
template <class F, class Adjoint>
FdReport check_vjp(const F& f, const Adjoint& adjoint, const std::vector<double>& in, std::mt19937& rng,
                   double eps = 1e-6, double atol = 1e-6, double rtol = 1e-5) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> adj_out(F::out_count), adj_in(F::in_count), ref(F::in_count);
  for (double& v : adj_out) v = u(rng);
  adjoint(in.data(), adj_out.data(), adj_in.data());
  vjp(f, in.data(), adj_out.data(), ref.data());
  {
    double scale = 1e-300;
    for (double g : ref) scale = std::max(scale, std::fabs(g));
    for (int k = 0; k < F::in_count; ++k) {
      INFO("adjoint vs dual reference, input " << k << ": " << adj_in[k] << " vs " << ref[k]);
      CHECK(std::fabs(adj_in[k] - ref[k]) <= 1e-10 * scale);
    }
  }
  auto loss = [&](const std::vector<double>& x) {
    double out[F::out_count];
    f.eval(x.data(), out);
    double s = 0;
    for (int o = 0; o < F::out_count; ++o) s += adj_out[o] * out[o];
    return s;
  };
  // scale-aware absolute tolerance
  double scale = 0;
  for (double g : adj_in) scale = std::max(scale, std::fabs(g));
  return fd_check(loss, in, adj_in, eps, atol * std::max(1.0, scale), rtol);
}

inline vec3<double> rand3(std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  return {u(rng), u(rng), u(rng)};
}

inline void put3(std::vector<double>& v, int at, const vec3<double>& x) {
  v[at] = x.x;
  v[at + 1] = x.y;
  v[at + 2] = x.z;
}

// a scalar parameter of the problem that the FD check perturbs, with its AD gradient
struct Probe {
  std::string name;
  std::function<double&(ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>&)> ref;
  std::function<double(const RolloutT<double>&)> ad;
};

// a trajectory loss: sum over steps and particles of w_tp . q_tp + w'_p . qd_p(T)
struct TrajectoryLoss {
  int steps, particles;
  std::vector<vec3<double>> wq, wv;
  TrajectoryLoss(int T, int n, unsigned seed) : steps(T), particles(n) {
    std::mt19937 rng(seed);
    for (int i = 0; i < (T + 1) * n; ++i) wq.push_back(rand3(rng, -1, 1) * (1.0 / (T + 1)));
    for (int i = 0; i < n; ++i) wv.push_back(rand3(rng, -1, 1));
  }
  double value(int t, const StateT<double>& s) const {
    double l = 0;
    for (int p = 0; p < particles; ++p) l += dot(wq[t * particles + p], s.particle_q[p]);
    if (t == steps)
      for (int p = 0; p < particles; ++p) l += dot(wv[p], s.particle_qd[p]);
    return l;
  }
  void seed(int t, StateT<double>& adj) const {
    for (int p = 0; p < particles; ++p) adj.particle_q[p] += wq[t * particles + p];
    if (t == steps)
      for (int p = 0; p < particles; ++p) adj.particle_qd[p] += wv[p];
  }
};

struct E2EResult {
  FdReport report;
  std::vector<double> ad, fd;
};

// runs the rollout (with options), then FD over each probe; the loss is TrajectoryLoss
inline E2EResult check_rollout(const ModelT<double>& model0, const StateT<double>& init0,
                               const std::vector<ControlT<double>>& controls0, RolloutOptions<double> opt,
                               const std::vector<Probe>& probes, double eps, double atol, double rtol) {
  TrajectoryLoss loss(opt.steps, model0.particle_count(), 7);
  E2EResult r;
  ModelT<double> model = model0;
  StateT<double> init = init0;
  std::vector<ControlT<double>> controls = controls0;
  RolloutT<double> roll(model, opt);
  double l0 = 0;
  Status st = roll.forward(init, controls, [&](int t, const StateT<double>& s) { l0 += loss.value(t, s); });
  INFO(st.message());
  REQUIRE(st.is_ok());
  st = roll.backward([&](int t, const StateT<double>&, StateT<double>& adj) { loss.seed(t, adj); });
  INFO(st.message());
  REQUIRE(st.is_ok());
  for (const Probe& p : probes) r.ad.push_back(p.ad(roll));
  for (const Probe& p : probes) {
    auto eval = [&](double delta) {
      ModelT<double> m = model0;
      StateT<double> s = init0;
      std::vector<ControlT<double>> c = controls0;
      p.ref(m, s, c) += delta;
      RolloutT<double> rr(m, opt);
      double l = 0;
      Status st2 = rr.forward(s, c, [&](int t, const StateT<double>& x) { l += loss.value(t, x); });
      REQUIRE(st2.is_ok());
      return l;
    };
    r.fd.push_back((eval(eps) - eval(-eps)) / (2 * eps));
  }
  double scale = 0;
  for (double g : r.fd) scale = std::max(scale, std::fabs(g));
  r.report = compare_gradients(r.ad, r.fd, atol * std::max(1.0, scale), rtol);
  std::string detail;
  for (std::size_t i = 0; i < probes.size(); ++i)
    detail += "\n  " + probes[i].name + ": AD " + std::to_string(r.ad[i]) + " FD " + std::to_string(r.fd[i]);
  r.report.message += detail;
  return r;
}

// probes over the usual quantities
inline Probe probe_q0(int p, int axis) {
  return {"q0[" + std::to_string(p) + "][" + std::to_string(axis) + "]",
          [=](ModelT<double>&, StateT<double>& s, std::vector<ControlT<double>>&) -> double& {
            return s.particle_q[p][axis];
          },
          [=](const RolloutT<double>& r) { return r.grad_initial().particle_q[p][axis]; }};
}
inline Probe probe_qd0(int p, int axis) {
  return {"qd0[" + std::to_string(p) + "][" + std::to_string(axis) + "]",
          [=](ModelT<double>&, StateT<double>& s, std::vector<ControlT<double>>&) -> double& {
            return s.particle_qd[p][axis];
          },
          [=](const RolloutT<double>& r) { return r.grad_initial().particle_qd[p][axis]; }};
}
inline Probe probe_force(int t, int p, int axis) {
  return {"control[" + std::to_string(t) + "].f[" + std::to_string(p) + "]",
          [=](ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>& c) -> double& {
            return c[t].particle_f[p][axis];
          },
          [=](const RolloutT<double>& r) { return r.grad_controls()[t].particle_f[p][axis]; }};
}
inline Probe probe_mass(int p) {
  return {"mass[" + std::to_string(p) + "]",
          [=](ModelT<double>& m, StateT<double>&, std::vector<ControlT<double>>&) -> double& {
            return m.particle_mass[p];
          },
          [=](const RolloutT<double>& r) { return r.grad_model().particle_mass[p]; }};
}
#define ADJ_PROBE_ARRAY(fn, field)                                                                   \
  inline Probe fn(int e) {                                                                           \
    return {#field "[" + std::to_string(e) + "]",                                                    \
            [=](ModelT<double>& m, StateT<double>&, std::vector<ControlT<double>>&) -> double& {     \
              return m.field[e];                                                                     \
            },                                                                                       \
            [=](const RolloutT<double>& r) { return r.grad_model().field[e]; }};                     \
  }
ADJ_PROBE_ARRAY(probe_spring_ke, spring_ke)
ADJ_PROBE_ARRAY(probe_spring_kd, spring_kd)
ADJ_PROBE_ARRAY(probe_spring_rest, spring_rest)
ADJ_PROBE_ARRAY(probe_tet_mu, tet_mu)
ADJ_PROBE_ARRAY(probe_tet_lambda, tet_lambda)
ADJ_PROBE_ARRAY(probe_tri_ke, tri_ke)
ADJ_PROBE_ARRAY(probe_tri_ka, tri_ka)
ADJ_PROBE_ARRAY(probe_tri_kd, tri_kd)
ADJ_PROBE_ARRAY(probe_edge_ke, edge_ke)
#undef ADJ_PROBE_ARRAY
#define ADJ_PROBE_SCALAR(fn, field)                                                                  \
  inline Probe fn() {                                                                                \
    return {#field,                                                                                  \
            [=](ModelT<double>& m, StateT<double>&, std::vector<ControlT<double>>&) -> double& {     \
              return m.field;                                                                        \
            },                                                                                       \
            [=](const RolloutT<double>& r) { return r.grad_model().field; }};                        \
  }
ADJ_PROBE_SCALAR(probe_contact_ke, contact_ke)
ADJ_PROBE_SCALAR(probe_contact_kd, contact_kd)
ADJ_PROBE_SCALAR(probe_contact_mu, contact_mu)
ADJ_PROBE_SCALAR(probe_lift, tri_lift)
ADJ_PROBE_SCALAR(probe_drag, tri_drag)
#undef ADJ_PROBE_SCALAR
inline Probe probe_gravity(int axis) {
  return {
      "gravity[" + std::to_string(axis) + "]",
      [=](ModelT<double>& m, StateT<double>&, std::vector<ControlT<double>>&) -> double& { return m.gravity[axis]; },
      [=](const RolloutT<double>& r) { return r.grad_model().gravity[axis]; }};
}
// the adjoint's dL/dp (ad) of L(p) = <adj_out, f(in; p)> against a central difference in p;
// set(f, p) writes the coefficient into a copy of the packed force f
template <class F, class Set>
FdReport check_coefficient(const F& f, const Set& set, double p, double ad, const std::vector<double>& in,
                           const std::vector<double>& adj_out, double atol = 1e-7, double rtol = 1e-6) {
  auto loss = [&](const std::vector<double>& x) {
    F g = f;
    set(g, x[0]);
    double out[F::out_count];
    g.eval(in.data(), out);
    double s = 0;
    for (int o = 0; o < F::out_count; ++o) s += adj_out[o] * out[o];
    return s;
  };
  return fd_check(loss, std::vector<double>{p}, std::vector<double>{ad}, 1e-6 * std::max(1.0, std::fabs(p)),
                  atol * std::max(1.0, std::fabs(ad)), rtol);
}
inline std::vector<double> random_seed_vector(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}
inline Probe probe_spring_act(int t, int e) {
  return {"control[" + std::to_string(t) + "].spring_act[" + std::to_string(e) + "]",
          [=](ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>& c) -> double& {
            return c[t].spring_act[e];
          },
          [=](const RolloutT<double>& r) { return r.grad_controls()[t].spring_act[e]; }};
}
inline Probe probe_tet_act(int t, int e) {
  return {"control[" + std::to_string(t) + "].tet_act[" + std::to_string(e) + "]",
          [=](ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>& c) -> double& {
            return c[t].tet_act[e];
          },
          [=](const RolloutT<double>& r) { return r.grad_controls()[t].tet_act[e]; }};
}

}  // namespace adj::test
