#include "engine/optim/body_probe.h"

#include <algorithm>

#include "engine/articulation/rigid_adjoint.h"

namespace adj::optim {

template <class T, class S>
vec3<T> rigid_body_com(const RigidModelT<S>& m, const std::vector<T>& q, int body, std::vector<vec3<T>>* jac) {
  constexpr int N = 8;
  using D = Dual<T, N>;
  const int nq = m.q_count(), nv = m.dof_count();
  rigid::Work<D> w;
  w.resize(m.body_count(), nq, nv);
  rigid::Params<D> par = rigid::lift_params<D>(m);
  std::vector<D> qd(nv), qq(nq);
  if (jac) jac->assign(nq, vec3<T>{});
  vec3<T> c{};
  for (int lo = 0; lo < std::max(nq, 1); lo += N) {
    for (int k = 0; k < nq; ++k) qq[k] = (jac && k >= lo && k < lo + N) ? D::var(q[k], k - lo) : D(q[k]);
    rigid::kinematics(m, par, qq.data(), qd.data(), w);
    vec3<D> cd = w.p[body] + w.R[body] * lift<D>(m.body_com[body]);
    c = {cd.x.v, cd.y.v, cd.z.v};
    if (!jac) break;
    for (int k = lo; k < std::min(nq, lo + N); ++k) (*jac)[k] = {cd.x.d[k - lo], cd.y.d[k - lo], cd.z.d[k - lo]};
  }
  return c;
}

template <class T, class S>
RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd,
                                   int body) {
  rigid::Work<T> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, rigid::lift_params<T>(m), q.data(), qd.data(), w);
  RigidBodyProbe<T> r;
  r.R = w.R[body];
  r.c = w.p[body] + w.R[body] * lift<T>(m.body_com[body]);
  r.vc = w.v[body].v + cross(w.v[body].w, r.c);
  r.w = w.v[body].w;
  return r;
}

template <class T, class S>
void rigid_body_probe_adjoint(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd, int body,
                              const RigidBodyProbe<T>& adj, std::vector<T>& adj_q, std::vector<T>& adj_qd) {
  const int nb = m.body_count(), nv = m.dof_count();
  rigid::Work<T> w;
  w.resize(nb, m.q_count(), nv);
  const rigid::Params<T> par = rigid::lift_params<T>(m);
  rigid::kinematics(m, par, q.data(), qd.data(), w);
  rigid::AdjWork<T> g;
  g.reset(nb, nv);
  rigid::Params<T> adj_par;
  adj_par.body_mass.assign(std::size_t(nb), T(0));
  // vc = v.v + v.w x c, c = p + R com
  const rigid::svec<T>& v = w.v[body];
  const vec3<T> c = w.p[body] + w.R[body] * lift<T>(m.body_com[body]);
  g.v[body].v += adj.vc;
  g.v[body].w += cross(c, adj.vc) + adj.w;
  const vec3<T> gc = adj.c + cross(adj.vc, v.w);
  g.p[body] += gc;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g.R[body].m[i][j] += adj.R.m[i][j] + gc[i] * m.body_com[body][j];
  // the body and its ancestors, leaves to root (parents come before children)
  for (int i = body; i >= 0; --i)
    rigid::body_kinematics_adjoint(m, par, q.data(), qd.data(), w, i, adj_q.data(), adj_qd.data(), adj_par, g);
}

#define ADJ_BODY_PROBE_INSTANTIATE(S, T)                                                                           \
  template RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>&, const std::vector<T>&, const std::vector<T>&, \
                                              int);                                                                \
  template void rigid_body_probe_adjoint(const RigidModelT<S>&, const std::vector<T>&, const std::vector<T>&, int, \
                                         const RigidBodyProbe<T>&, std::vector<T>&, std::vector<T>&);              \
  template vec3<T> rigid_body_com(const RigidModelT<S>&, const std::vector<T>&, int, std::vector<vec3<T>>*);

ADJ_BODY_PROBE_INSTANTIATE(float, float)
ADJ_BODY_PROBE_INSTANTIATE(double, double)
using TangentF = Dual<float, 1>;
using TangentD = Dual<double, 1>;
ADJ_BODY_PROBE_INSTANTIATE(float, TangentF)
ADJ_BODY_PROBE_INSTANTIATE(double, TangentD)

}  // namespace adj::optim
