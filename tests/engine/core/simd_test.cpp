// the SIMD lanes (engine/core/simd.h) against the scalar code they stand for: each lane of a
// force function run on Lanes<S> must equal the scalar run bit for bit (that is what lets the
// CPU solver run elements in lanes without changing a result), degenerate elements included
#include "engine/core/simd.h"

#include <cstring>

#include "engine/forces/aero.h"
#include "engine/forces/bending.h"
#include "engine/forces/triangle.h"
#include "engine/solver/kernels.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

template <class S>
bool same_bits(S a, S b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0 || (a != a && b != b);
}

// lane l of x[k] = inputs[l][k]
template <class S>
std::vector<Lanes<S>> to_lanes(const std::vector<std::vector<S>>& inputs) {
  std::vector<Lanes<S>> x(inputs[0].size());
  for (std::size_t k = 0; k < x.size(); ++k)
    for (int l = 0; l < k_lanes<S>; ++l) x[k].set(l, inputs[std::size_t(l)][k]);
  return x;
}

// n random scalars in [-1, 1] around a base configuration, per lane; lane 1 degenerate
// (its first three points on one spot) when `degenerate`
template <class S>
std::vector<std::vector<S>> random_lanes(std::mt19937& rng, const std::vector<double>& base, bool degenerate) {
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  std::vector<std::vector<S>> in(std::size_t(k_lanes<S>));
  for (int l = 0; l < k_lanes<S>; ++l) {
    for (double b : base) in[std::size_t(l)].push_back(S(b + u(rng)));
    if (degenerate && l == 1)
      for (int k = 3; k < 9; ++k) in[1][std::size_t(k)] = in[1][std::size_t(k % 3)];
  }
  return in;
}

// every lane of a packed function's lane run against its scalar run
template <class S, class RunLanes, class RunScalar>
void check_lanes(const std::vector<std::vector<S>>& in, int out_count, const RunLanes& run_lanes,
                 const RunScalar& run_scalar) {
  const std::size_t n = static_cast<std::size_t>(out_count);
  std::vector<Lanes<S>> x = to_lanes(in), y(n);
  run_lanes(x.data(), y.data());
  for (int l = 0; l < k_lanes<S>; ++l) {
    std::vector<S> ys(n);
    run_scalar(in[std::size_t(l)].data(), ys.data());
    for (int k = 0; k < out_count; ++k) {
      INFO("lane " << l << ", output " << k << ": " << y[std::size_t(k)][l] << " vs " << ys[std::size_t(k)]);
      CHECK(same_bits(y[std::size_t(k)][l], ys[std::size_t(k)]));
    }
  }
}

const std::vector<double> k_hinge = {0.5, 1,   0.3, 0.5,  -1,  0.3, 0,   0,    0,   1,   0,   0,
                                     0.1, 0.2, 0.3, -0.1, 0.4, 0.2, 0.3, -0.2, 0.1, 0.2, 0.1, -0.3};
const std::vector<double> k_triangle = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.5, -1, 0.2, 1.5, 0.3, -0.7, -0.4, 0.8, 2.0};

// a particle's plane contact and its integration after it (the solver's particle lanes):
// touching, apart and pulling particles, with friction; lane 1 without (mu 0), the last lane
// kinematic (mass 0)
const std::vector<double> k_particle = {0.1, 0.005, -0.2, 0.3, -0.4, 0.1, 1e3, 10, 0.5, 1};  // x, v, ke, kd, mu, mass

template <class S>
void check_particles(std::mt19937& rng) {
  auto in = random_lanes<S>(rng, k_particle, false);
  in[1][8] = S(0);
  in[std::size_t(k_lanes<S> - 1)][9] = S(0);
  const ShapeRef<S> plane{
      GEOM_PLANE, {S(0), S(-0.01), S(0)}, mat33<S>::identity(), {S(0), S(1), S(0)}, nullptr, nullptr, 0, 0};
  const S radius(0.01), kf(1), eps(0.01), dt(1e-3);
  ModelView<S> m{};
  m.gravity = {S(0), S(-9.81), S(0)};
  m.particle_damping = S(0.1);
  check_lanes<S>(
      in, 6,
      [&](const Lanes<S>* i, Lanes<S>* o) {
        const vec3<Lanes<S>> f = plane_contact_force(plane, Lanes<S>(radius), i, kf, eps);
        store3(o, f);
        store3(o + 3, integrate_velocity(m, dt, i[9], load3(i + 3), f));
      },
      [&](const S* i, S* o) {
        const vec3<S> f = plane_contact_force(plane, radius, i, kf, eps);
        store3(o, f);
        store3(o + 3, integrate_velocity(m, dt, i[9], load3(i + 3), f));
      });
}

template <class S>
void check_forces() {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const bool degenerate = trial % 5 == 0;
    // bending: forward and adjoint (with dL/d(ke, kd))
    auto hinge = random_lanes<S>(rng, k_hinge, degenerate);
    const BendingEval<S> be{S(2.5), S(0.1), S(0.2)};
    const BendingEval<Lanes<S>> bl{Lanes<S>(be.ke), Lanes<S>(be.kd), Lanes<S>(be.rest)};
    check_lanes<S>(
        hinge, 12, [&](const Lanes<S>* i, Lanes<S>* o) { bl.eval(i, o); }, [&](const S* i, S* o) { be.eval(i, o); });
    auto seed = random_lanes<S>(rng, std::vector<double>(12, 0.0), false);
    for (int l = 0; l < k_lanes<S>; ++l)
      hinge[std::size_t(l)].insert(hinge[std::size_t(l)].end(), seed[std::size_t(l)].begin(),
                                   seed[std::size_t(l)].end());
    check_lanes<S>(
        hinge, 26, [&](const Lanes<S>* i, Lanes<S>* o) { bending_adjoint(bl, i, i + 24, o, o + 24); },
        [&](const S* i, S* o) { bending_adjoint(be, i, i + 24, o, o + 24); });
    // triangle membrane and aerodynamics: forward and adjoint (with the coefficients' gradients)
    auto tri = random_lanes<S>(rng, k_triangle, degenerate);
    const TriangleEval<S> te{{S(1.1), S(-0.2), S(0.1), S(0.9)}, S(0.5), S(100), S(20), S(0.3)};
    const TriangleEval<Lanes<S>> tl{{te.pose.a, te.pose.b, te.pose.c, te.pose.d}, te.area, te.ke, te.ka, te.kd};
    const AeroEval<S> ae{S(10), S(5)};
    const AeroEval<Lanes<S>> al{ae.lift, ae.drag};
    check_lanes<S>(
        tri, 9, [&](const Lanes<S>* i, Lanes<S>* o) { tl.eval(i, o); }, [&](const S* i, S* o) { te.eval(i, o); });
    check_lanes<S>(
        tri, 9, [&](const Lanes<S>* i, Lanes<S>* o) { al.eval(i, o); }, [&](const S* i, S* o) { ae.eval(i, o); });
    seed = random_lanes<S>(rng, std::vector<double>(9, 0.0), false);
    for (int l = 0; l < k_lanes<S>; ++l)
      tri[std::size_t(l)].insert(tri[std::size_t(l)].end(), seed[std::size_t(l)].begin(), seed[std::size_t(l)].end());
    check_lanes<S>(
        tri, 21, [&](const Lanes<S>* i, Lanes<S>* o) { triangle_adjoint(tl, i, i + 18, o, o + 18); },
        [&](const S* i, S* o) { triangle_adjoint(te, i, i + 18, o, o + 18); });
    check_lanes<S>(
        tri, 20, [&](const Lanes<S>* i, Lanes<S>* o) { aero_adjoint(al, i, i + 18, o, o + 18); },
        [&](const S* i, S* o) { aero_adjoint(ae, i, i + 18, o, o + 18); });
    check_lanes<S>(
        tri, 2, [&](const Lanes<S>* i, Lanes<S>* o) { aero_coef_adjoint(i, i + 18, o); },
        [&](const S* i, S* o) { aero_coef_adjoint(i, i + 18, o); });
    check_particles<S>(rng);
  }
}

}  // namespace

TEST_CASE("simd: float atan2 lanes equal the scalar atan2_ (and glibc's fdlibm atan2f) bit for bit", "[simd]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> u(-3, 3);
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 1e-40f, 3e38f, 0.4375f, 2.4375f};
  long differ = 0, differ_libm = 0, count = 0;
  for (int it = 0; it < 400000; ++it) {
    Lanes<float> y, x;
    for (int l = 0; l < 4; ++l) {
      float a = u(rng), b = u(rng);
      if (it % 4 == 0) {  // any bit pattern
        std::uint32_t p = bits(rng), q = bits(rng);
        std::memcpy(&a, &p, 4);
        std::memcpy(&b, &q, 4);
      } else if (it % 4 == 1) {  // special values in some lanes
        if (l == it % 3) a = special[it % 11];
        if (l == it % 5) b = special[(it / 11) % 11];
      } else if (it % 4 == 2) {  // small angles
        a *= 1e-4f;
      }
      y.set(l, a), x.set(l, b);
    }
    const Lanes<float> r = atan2_(y, x);
    for (int l = 0; l < 4; ++l, ++count) {
      differ += !same_bits(r[l], atan2_(y[l], x[l]));
      differ_libm += !same_bits(r[l], ::atan2f(y[l], x[l]));
    }
  }
  INFO(differ << " of " << count << " differ from the scalar, " << differ_libm << " from libm");
  CHECK(differ == 0);
#if defined(__GLIBC__) && __GLIBC__ == 2 && __GLIBC_MINOR__ <= 40
  CHECK(differ_libm == 0);  // glibc's atan2f is fdlibm's up to 2.40 (2.41 took CORE-MATH's)
#endif
}

TEST_CASE("simd: force functions on lanes equal their scalar runs bit for bit", "[simd][forces]") {
  check_forces<float>();
  check_forces<double>();
}
