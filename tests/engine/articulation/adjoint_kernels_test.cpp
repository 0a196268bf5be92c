// the hand-written reverse kernels of engine/articulation (one body's kinematics, one ground contact
// point) against the dual-number vector-Jacobian products of the forward kernels themselves,
// in double precision, on every joint type and on touching, sliding and separating contacts
#include "engine/articulation/rigid_adjoint.h"
#include "rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

template <class T>
T rnd(std::mt19937& rng) {
  return T(std::uniform_real_distribution<double>(-1, 1)(rng));
}
vec3<double> rnd3(std::mt19937& rng) { return {rnd<double>(rng), rnd<double>(rng), rnd<double>(rng)}; }
mat33<double> rnd33(std::mt19937& rng) {
  mat33<double> r;
  for (auto& row : r.m)
    for (double& x : row) x = rnd<double>(rng);
  return r;
}
rigid::svec<double> rnd6(std::mt19937& rng) { return {rnd3(rng), rnd3(rng)}; }

// |a - b| <= tol * scale for every pair
void near(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  REQUIRE(a.size() == b.size());
  double scale = 1e-300;
  for (double x : b) scale = std::max(scale, std::fabs(x));
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(what << "[" << i << "]: hand " << a[i] << ", dual " << b[i] << ", scale " << scale);
    CHECK(std::fabs(a[i] - b[i]) <= 1e-13 * scale);
  }
}

void flat(std::vector<double>& out, const mat33<double>& m) {
  for (const auto& row : m.m)
    for (double x : row) out.push_back(x);
}
void flat(std::vector<double>& out, const vec3<double>& v) {
  for (int i = 0; i < 3; ++i) out.push_back(v[i]);
}
void flat(std::vector<double>& out, const rigid::svec<double>& s) {
  flat(out, s.w);
  flat(out, s.v);
}

std::vector<double> flatten(const rigid::AdjWork<double>& g, const std::vector<double>& aq,
                            const std::vector<double>& aqd, const rigid::Params<double>& ap) {
  std::vector<double> r(aq);
  r.insert(r.end(), aqd.begin(), aqd.end());
  r.insert(r.end(), ap.body_mass.begin(), ap.body_mass.end());
  for (std::size_t i = 0; i < g.R.size(); ++i) {
    flat(r, g.R[i]);
    flat(r, g.p[i]);
    flat(r, g.v[i]);
  }
  return r;
}

}  // namespace

TEST_CASE("reverse kernels: hand-written body kinematics adjoint equals the dual-number VJP (every joint type)",
          "[rigid][grad][adjoint]") {
  RigidModelT<double> m = finalize(mixed_tree());
  // a non-identity parent for the root too: the free base hangs off nothing, so also test a
  // mass that differs from the model's (the inertia scales with it)
  const int nb = m.body_count(), nv = m.dof_count(), nq = m.q_count();
  std::mt19937 rng(5);
  for (int trial = 0; trial < 4; ++trial) {
    StateT<double> s = random_state(m, rng, 0.8, 1.5);
    rigid::Params<double> par = rigid::lift_params<double>(m);
    for (double& x : par.body_mass) x *= 1.0 + 0.3 * rnd<double>(rng);
    rigid::Work<double> w;
    w.resize(nb, nq, nv);
    rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
    for (int i = 0; i < nb; ++i) {
      INFO("trial " << trial << ", " << m.joint_label(i));
      // random adjoints of every body's outputs
      rigid::AdjWork<double> g;
      g.reset(nb, nv);
      for (int b = 0; b < nb; ++b) {
        g.R[b] = rnd33(rng);
        g.p[b] = rnd3(rng);
        g.v[b] = rnd6(rng);
        g.I[b].A = rnd33(rng);
        g.I[b].B = rnd33(rng);
        g.I[b].m = rnd<double>(rng);
      }
      for (int d = 0; d < nv; ++d) g.S_[d] = rnd6(rng);
      rigid::AdjWork<double> g2 = g;
      std::vector<double> aq(nq, 0.0), aqd(nv, 0.0), aq2(nq, 0.0), aqd2(nv, 0.0);
      rigid::Params<double> ap, ap2;
      ap.body_mass.assign(nb, 0.0);
      ap2.body_mass.assign(nb, 0.0);
      rigid::body_kinematics_adjoint(m, par, s.joint_q.data(), s.joint_qd.data(), w, i, aq.data(), aqd.data(), ap, g);
      switch (m.joint_type[i]) {
        case RIGID_JOINT_FREE:
          rigid::body_kinematics_adjoint_dual<double, 32>(m, par, s.joint_q.data(), s.joint_qd.data(), w, i, aq2.data(),
                                                          aqd2.data(), ap2, g2);
          break;
        case RIGID_JOINT_BALL:
          rigid::body_kinematics_adjoint_dual<double, 26>(m, par, s.joint_q.data(), s.joint_qd.data(), w, i, aq2.data(),
                                                          aqd2.data(), ap2, g2);
          break;
        case RIGID_JOINT_FIXED:
          rigid::body_kinematics_adjoint_dual<double, 19>(m, par, s.joint_q.data(), s.joint_qd.data(), w, i, aq2.data(),
                                                          aqd2.data(), ap2, g2);
          break;
        default:
          rigid::body_kinematics_adjoint_dual<double, 21>(m, par, s.joint_q.data(), s.joint_qd.data(), w, i, aq2.data(),
                                                          aqd2.data(), ap2, g2);
      }
      std::vector<double> hand = flatten(g, aq, aqd, ap), dual = flatten(g2, aq2, aqd2, ap2);
      near(hand, dual, "adjoint");
      // and the result is not trivially zero: the joint's own coordinates get a gradient
      double sum = 0;
      for (int k = m.joint_q_start[i]; k < m.joint_q_start[i + 1]; ++k) sum += std::fabs(aq[k]);
      if (m.joint_type[i] != RIGID_JOINT_FIXED) CHECK(sum > 1e-6);
    }
  }
}

TEST_CASE("reverse kernels: hand-written ground contact adjoint equals the dual-number VJP", "[rigid][grad][adjoint]") {
  RigidModelT<double> m = finalize(mixed_tree());
  m.contact_ke = 2e3;
  m.contact_kd = 20;
  m.contact_kf = 50;
  std::mt19937 rng(11);
  constexpr int N = 21;
  using D = Dual<double, N>;
  int touching = 0, pushing = 0, pulling = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int s = trial % m.shape_count();
    vec3<double> pts[8];
    double r = 0;
    const int count = shape_points(m.shape_type[s], m.shape_size[s], pts, r);
    const int k = (trial / m.shape_count()) % count;
    // a random pose near the ground, random velocity (some points separate fast: no force)
    rigid::quat<double> qr(1 + 0.5 * rnd<double>(rng), rnd<double>(rng), rnd<double>(rng), rnd<double>(rng));
    const mat33<double> R = rigid::qmat(qr);
    vec3<double> p = rnd3(rng) * 0.2;
    const rigid::svec<double> v = {rnd3(rng) * 3.0, rnd3(rng) * 3.0};
    // mu = 0 every 5th trial: no friction branch
    const double ke = m.contact_ke, kd = m.contact_kd, mu = trial % 5 == 4 ? 0.0 : 0.8;
    rigid::svec<double> fs;
    vec3<double> xc, f;
    if (!rigid::point_contact(m, s, pts[k], r, R, p, v, ke, kd, mu, fs, xc, f)) continue;
    ++touching;
    (length(f) > 0 ? pushing : pulling) += 1;
    const rigid::svec<double> adj_fs = rnd6(rng);
    mat33<double> aR;
    vec3<double> ap;
    rigid::svec<double> av{};
    double ake = 0, akd = 0, amu = 0;
    rigid::point_contact_adjoint(m, s, pts[k], r, R, p, v, ke, kd, mu, adj_fs, aR, ap, av, ake, akd, amu);
    // the reference: duals through point_contact
    rigid::Seeder<double, N> seed;
    mat33<D> Rd = seed.mat(R);
    vec3<D> pd = seed.vec(p);
    rigid::svec<D> vd = seed.sv(v);
    D ked = seed(ke), kdd = seed(kd), mud = seed(mu);
    rigid::svec<D> fsd;
    vec3<D> xcd, fd;
    rigid::point_contact(m, s, pts[k], r, Rd, pd, vd, ked, kdd, mud, fsd, xcd, fd);
    rigid::Contract<double, N> c;
    c.add(fsd, adj_fs);
    mat33<double> aR2;
    vec3<double> ap2;
    rigid::svec<double> av2{};
    c.take(aR2);
    c.take(ap2);
    c.take(av2);
    std::vector<double> hand, dual;
    flat(hand, aR);
    flat(hand, ap);
    flat(hand, av);
    hand.insert(hand.end(), {ake, akd, amu});
    flat(dual, aR2);
    flat(dual, ap2);
    flat(dual, av2);
    const double dke = c.take(), dkd = c.take(), dmu = c.take();
    dual.insert(dual.end(), {dke, dkd, dmu});
    INFO("trial " << trial << ", shape " << s << ", point " << k << ", force " << length(f));
    near(hand, dual, "contact adjoint");
  }
  INFO(touching << " touching points, " << pushing << " pushing, " << pulling << " separating (no force)");
  CHECK(pushing >= 20);
  CHECK(pulling >= 5);
}
