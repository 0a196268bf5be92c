// SIMD packs for the host. Lanes<S> holds k_lanes<S> scalars: 4 floats or 2 doubles in one
// 16-byte register (SSE2, the baseline of every x86-64 CPU; GCC/Clang vector extensions
// elsewhere), 8 floats or 4 doubles in the AVX2 build of engine/solver/kernels_avx2.cpp, 16 floats
// or 8 doubles in the AVX-512 build of kernels_avx512.cpp. It has
// the operators and the sqrt_/atan2_/acos_/value/is_finite of engine/core/math.h, so the
// generic force functions run one element per lane; comparisons give a Mask, and where force
// code branches on a value it uses any() and select() (math.h). Each lane computes the scalar
// code's IEEE operations in the same order (atan2 is math.h's one fdlibm code; acos calls the
// scalar per lane), so a kernel run on lanes equals its scalar run bit for bit
// (tests/engine/core/simd_test.cpp). Host only: the CUDA backend runs the scalar functors.
#pragma once

#if defined(__CUDACC__)
#error "engine/core/simd.h is host-only"
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/core/math.h"

// the pack's width in bytes: 16 (SSE2), or 32 / 64 in the translation units built for AVX2 /
// AVX-512 (engine/solver/kernels_avx2.cpp, kernels_avx512.cpp, which rename the namespace so
// nothing is shared)
#ifndef ADJ_SIMD_BYTES
#define ADJ_SIMD_BYTES 16
#endif
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace adj {

template <class S>
inline constexpr int k_lanes = ADJ_SIMD_BYTES / int(sizeof(S));

// a lane-wise condition: all bits set where true
template <class S>
struct Mask {
  using I = std::conditional_t<sizeof(S) == 4, std::int32_t, std::int64_t>;
  typedef I V __attribute__((vector_size(ADJ_SIMD_BYTES)));
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
struct Lanes {
  static constexpr int W = k_lanes<S>;
  typedef S V __attribute__((vector_size(ADJ_SIMD_BYTES)));
  V v;

  Lanes() = default;  // uninitialized, as a float (vec3 and the force code zero what they read)
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
#if defined(__SSE2__) && ADJ_SIMD_BYTES == 16
    if constexpr (sizeof(S) == 4)
      return from(V(_mm_sqrt_ps(__m128(a.v))));
    else
      return from(V(_mm_sqrt_pd(__m128d(a.v))));
#elif defined(__AVX__) && ADJ_SIMD_BYTES == 32
    if constexpr (sizeof(S) == 4)
      return from(V(_mm256_sqrt_ps(__m256(a.v))));
    else
      return from(V(_mm256_sqrt_pd(__m256d(a.v))));
#elif defined(__AVX512F__) && ADJ_SIMD_BYTES == 64
    // the masked forms with every lane set (GCC 12's _mm512_sqrt_ps trips -Wuninitialized)
    if constexpr (sizeof(S) == 4)
      return from(V(_mm512_mask_sqrt_ps(__m512(a.v), __mmask16(0xffff), __m512(a.v))));
    else
      return from(V(_mm512_mask_sqrt_pd(__m512d(a.v), __mmask8(0xff), __m512d(a.v))));
#else
    Lanes r;
    for (int l = 0; l < W; ++l) r.v[l] = sqrt_(a.v[l]);
    return r;
#endif
  }
  friend Lanes atan2_(const Lanes& y, const Lanes& x) {
    if constexpr (sizeof(S) == 4) {
      return atan2f_fdlibm(y, x);  // engine/core/math.h
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

// math.h's atan2f_fdlibm on lanes: the sign bit, and the C library for special lanes
inline Mask<float> sign_bit(const Lanes<float>& x) { return {Mask<float>::V(x.v) < 0}; }
inline Lanes<float> special_atan2(const Mask<float>& common, Lanes<float> r, const Lanes<float>& y,
                                  const Lanes<float>& x) {
  if (any(!common))
    for (int l = 0; l < Lanes<float>::W; ++l)
      if (!common[l]) r.set(l, ::atan2f(y[l], x[l]));
  return r;
}

}  // namespace adj
