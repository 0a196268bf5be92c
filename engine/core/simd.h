// SIMD packs for the host: Lanes<S> holds k_lanes<S> scalars (4 floats or 2 doubles, one
// 16-byte register: SSE2 on x86-64, the baseline every x86-64 CPU has; GCC/Clang vector
// extensions elsewhere) with the operators and the sqrt_/atan2_/acos_/value/is_finite of
// engine/core/math.h, so the generic force functions run one element per lane. Comparisons
// give a Mask; where force code branches on a value it uses any() and select() (math.h).
// Each lane computes exactly what the scalar code computes (the same IEEE operations in the
// same order; atan2 and acos call the scalar function per lane), so a kernel run on lanes
// equals its scalar run bit for bit (tests/engine/core/simd_test.cpp). Host only: the CUDA
// backend runs the scalar functors.
#pragma once

#if defined(__CUDACC__)
#error "engine/core/simd.h is host-only"
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/core/math.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace adj {

template <class S>
inline constexpr int k_lanes = 16 / int(sizeof(S));

// a lane-wise condition: all bits set where true
template <class S>
struct Mask {
  using I = std::conditional_t<sizeof(S) == 4, std::int32_t, std::int64_t>;
  typedef I V __attribute__((vector_size(16)));
  V m;
  friend Mask operator&&(const Mask& a, const Mask& b) { return {a.m & b.m}; }
  friend Mask operator||(const Mask& a, const Mask& b) { return {a.m | b.m}; }
  friend Mask operator!(const Mask& a) { return {~a.m}; }
  bool operator[](int l) const { return m[l] != 0; }
};

template <class S>
inline bool any(const Mask<S>& c) {
  bool r = false;
  for (int l = 0; l < k_lanes<S>; ++l) r |= c[l];
  return r;
}

// the float comparison thresholds equal to comparing a float with a double constant, as the
// scalar code does (`value(x) < 1e-20` promotes x): x < d  <=>  x < ceil_float(d)
constexpr float next_float_up(float c) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(c);
  if (c == 0.0f) return std::bit_cast<float>(std::uint32_t(1));
  return std::bit_cast<float>(c > 0.0f ? b + 1 : b - 1);
}
constexpr float ceil_float(double d) {
  float c = float(d);
  return double(c) < d ? next_float_up(c) : c;
}

template <class S>
struct Lanes;
inline Lanes<float> atan2_fdlibm(const Lanes<float>& y, const Lanes<float>& x);

template <class S>
struct Lanes {
  static constexpr int W = k_lanes<S>;
  typedef S V __attribute__((vector_size(16)));
  V v;

  Lanes() : v{} {}
  Lanes(S x) : v(V{} + x) {}
  Lanes(int x) : v(V{} + S(x)) {}
  template <class A, class = std::enable_if_t<std::is_arithmetic_v<A>>>
  explicit Lanes(A x) : v(V{} + S(x)) {}
  static Lanes from(V x) {
    Lanes r;
    r.v = x;
    return r;
  }
  S operator[](int l) const { return v[l]; }
  void set(int l, S x) { v[l] = x; }

  friend Lanes operator+(const Lanes& a, const Lanes& b) { return from(a.v + b.v); }
  friend Lanes operator-(const Lanes& a, const Lanes& b) { return from(a.v - b.v); }
  friend Lanes operator*(const Lanes& a, const Lanes& b) { return from(a.v * b.v); }
  friend Lanes operator/(const Lanes& a, const Lanes& b) { return from(a.v / b.v); }
  friend Lanes operator-(const Lanes& a) { return from(-a.v); }
  Lanes& operator+=(const Lanes& b) { return *this = *this + b; }
  Lanes& operator-=(const Lanes& b) { return *this = *this - b; }
  Lanes& operator*=(const Lanes& b) { return *this = *this * b; }
  Lanes& operator/=(const Lanes& b) { return *this = *this / b; }

  friend Mask<S> operator<(const Lanes& a, const Lanes& b) { return {a.v < b.v}; }
  friend Mask<S> operator>(const Lanes& a, const Lanes& b) { return {a.v > b.v}; }
  friend Mask<S> operator<=(const Lanes& a, const Lanes& b) { return {a.v <= b.v}; }
  friend Mask<S> operator>=(const Lanes& a, const Lanes& b) { return {a.v >= b.v}; }
  friend Mask<S> operator==(const Lanes& a, const Lanes& b) { return {a.v == b.v}; }
  friend Mask<S> operator!=(const Lanes& a, const Lanes& b) { return {a.v != b.v}; }
  // against a double constant, as the scalar code compares (a float promoted to double)
  friend Mask<S> operator<(const Lanes& a, double d) {
    if constexpr (sizeof(S) == 4)
      return a < Lanes(ceil_float(d));
    else
      return a < Lanes(d);
  }

  friend Lanes sqrt_(const Lanes& a) {
#if defined(__SSE2__)
    if constexpr (sizeof(S) == 4)
      return from(V(_mm_sqrt_ps(__m128(a.v))));
    else
      return from(V(_mm_sqrt_pd(__m128d(a.v))));
#else
    Lanes r;
    for (int l = 0; l < W; ++l) r.v[l] = sqrt_(a.v[l]);
    return r;
#endif
  }
  friend Lanes atan2_(const Lanes& y, const Lanes& x) {
    if constexpr (sizeof(S) == 4) {
      return atan2_fdlibm(y, x);
    } else {
      Lanes r;
      for (int l = 0; l < W; ++l) r.v[l] = atan2_(y.v[l], x.v[l]);
      return r;
    }
  }
  friend Lanes acos_(const Lanes& a) {
    Lanes r;
    for (int l = 0; l < W; ++l) r.v[l] = acos_(a.v[l]);
    return r;
  }
  friend Lanes value(const Lanes& a) { return a; }
  friend Mask<S> is_finite(const Lanes& a) { return a - a == Lanes(0); }
};

// lane-wise a where c, else b
template <class S>
inline Lanes<S> select(const Mask<S>& c, const Lanes<S>& a, const Lanes<S>& b) {
  using I = typename Mask<S>::V;
  return Lanes<S>::from(typename Lanes<S>::V((I(a.v) & c.m) | (I(b.v) & ~c.m)));
}
template <class S>
inline vec3<Lanes<S>> select(const Mask<S>& c, const vec3<Lanes<S>>& a, const vec3<Lanes<S>>& b) {
  return {select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}
// the same branches as math.h's generic abs_/max_/min_, lane by lane
template <class S>
inline Lanes<S> abs_(const Lanes<S>& x) {
  return select(x < Lanes<S>(0), -x, x);
}
template <class S>
inline Lanes<S> max_(const Lanes<S>& a, const Lanes<S>& b) {
  return select(a < b, b, a);
}
template <class S>
inline Lanes<S> min_(const Lanes<S>& a, const Lanes<S>& b) {
  return select(b < a, b, a);
}

// atan2 of floats lane by lane: fdlibm's atan2f/atanf (Sun 1993, as glibc 2.36 and the BSDs
// ship it) on every lane at once, the argument reduction's five cases chosen by select, so each
// lane equals libm's atan2f where libm is fdlibm's (tests/engine/core/simd_test.cpp compares
// millions of arguments). Lanes outside the common case (a zero, infinite or NaN argument,
// x = 1, |y/x| beyond [2^-29, 2^25)) take libm's atan2f itself.
inline Lanes<float> atan2_fdlibm(const Lanes<float>& y, const Lanes<float>& x) {
  using L = Lanes<float>;
  static constexpr float at[11] = {3.3333334327e-01f,  -2.0000000298e-01f, 1.4285714924e-01f,  -1.1111110449e-01f,
                                   9.0908870101e-02f,  -7.6918758452e-02f, 6.6610731184e-02f,  -5.8335702866e-02f,
                                   4.9768779427e-02f,  -3.6531571299e-02f, 1.6285819933e-02f};
  const L t = abs_(y / x);
  // reduction: t < 7/16 as is (hi = lo = 0), < 11/16 about 1/2, < 19/16 about 1, < 39/16 about 3/2, else -1/t
  const Mask<float> c0 = t < L(0.4375f), c1 = t < L(0.6875f), c2 = t < L(1.1875f), c3 = t < L(2.4375f);
  const L one(1.0f), two(2.0f), half3(1.5f);
  L num = select(c3, t - half3, L(-1.0f)), den = select(c3, one + half3 * t, t);
  L hi = select(c3, L(9.8279368877e-01f), L(1.5707962513e+00f));
  L lo = select(c3, L(3.4473217170e-08f), L(7.5497894159e-08f));
  num = select(c2, t - one, num), den = select(c2, t + one, den);
  hi = select(c2, L(7.8539812565e-01f), hi), lo = select(c2, L(3.7748947079e-08f), lo);
  num = select(c1, two * t - one, num), den = select(c1, two + t, den);
  hi = select(c1, L(4.6364760399e-01f), hi), lo = select(c1, L(5.0121582440e-09f), lo);
  num = select(c0, t, num), den = select(c0, one, den), hi = select(c0, L(0), hi), lo = select(c0, L(0), lo);
  const L xr = num / den, z = xr * xr, w = z * z;
  const L s1 = z * (L(at[0]) + w * (L(at[2]) + w * (L(at[4]) + w * (L(at[6]) + w * (L(at[8]) + w * L(at[10]))))));
  const L s2 = w * (L(at[1]) + w * (L(at[3]) + w * (L(at[5]) + w * (L(at[7]) + w * L(at[9])))));
  // t < 7/16: xr - xr (s1 + s2), which hi - ((xr (s1 + s2) - lo) - xr) equals when hi = lo = 0
  const L a = select(c0, xr - xr * (s1 + s2), hi - ((xr * (s1 + s2) - lo) - xr));
  // quadrants
  const L pi(3.1415927410e+00f), pi_lo(-8.7422776573e-08f);
  const Mask<float> yneg = y < L(0), xneg = x < L(0);
  L r = select(xneg, select(yneg, (a - pi_lo) - pi, pi - (a - pi_lo)), select(yneg, -a, a));
  // y = +-0 (a flat hinge): +-0 for x > 0, +-pi (fdlibm's pi + tiny rounds to pi) for x < 0
  const Mask<float> yzero = y == L(0), ysign = {Mask<float>::V(y.v) < 0};
  r = select(yzero && !(x == L(0)) && is_finite(x), select(xneg, select(ysign, -pi, pi), y), r);
  const Mask<float> common = (yzero || (is_finite(y / x) && !(t < L(0x1p-29f)) && t < L(0x1p25f))) &&
                             !(x == L(0)) && !(x == one) && is_finite(x) && is_finite(y);
  if (any(!common))
    for (int l = 0; l < L::W; ++l)
      if (!common[l]) r.set(l, atan2_(y[l], x[l]));
  return r;
}

}  // namespace adj
