// small vector/matrix types and a forward-mode dual number, usable on host and device.
// we use our own vec3/mat33 instead of glm: the same generic code must also run on the
// dual number (adjoints are derived from the force functions themselves), and glm's
// templates reject non-arithmetic scalars and warn under nvcc device compilation.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define ADJ_HD __host__ __device__
#else
#define ADJ_HD
#endif

namespace adj {

// scalar functions with one name for float, double and Dual
ADJ_HD inline float sqrt_(float x) { return ::sqrtf(x); }
ADJ_HD inline double sqrt_(double x) { return ::sqrt(x); }
ADJ_HD inline float atan2_(float y, float x);  // fdlibm's on the host (below), CUDA's on the device
ADJ_HD inline double atan2_(double y, double x) { return ::atan2(y, x); }
ADJ_HD inline float acos_(float x) { return ::acosf(x); }
ADJ_HD inline double acos_(double x) { return ::acos(x); }
ADJ_HD inline float value(float x) { return x; }
ADJ_HD inline double value(double x) { return x; }
ADJ_HD inline bool is_finite(float x) { return x - x == 0.0f; }
ADJ_HD inline bool is_finite(double x) { return x - x == 0.0; }

// forward-mode dual number with N tangents: d[k] = d value / d input k
template <class S, int N>
struct Dual {
  S v;
  S d[N];
  ADJ_HD Dual() : v(0) {
    for (int k = 0; k < N; ++k) d[k] = S(0);
  }
  ADJ_HD Dual(S x) : v(x) {
    for (int k = 0; k < N; ++k) d[k] = S(0);
  }
  // an independent variable: tangent 1 in slot k
  ADJ_HD static Dual var(S x, int k) {
    Dual r(x);
    r.d[k] = S(1);
    return r;
  }
  ADJ_HD Dual& operator+=(const Dual& b) { return *this = *this + b; }
  ADJ_HD Dual& operator-=(const Dual& b) { return *this = *this - b; }
  ADJ_HD Dual& operator*=(const Dual& b) { return *this = *this * b; }
  ADJ_HD friend Dual operator-(const Dual& a) {
    Dual r;
    r.v = -a.v;
    for (int k = 0; k < N; ++k) r.d[k] = -a.d[k];
    return r;
  }
  ADJ_HD friend Dual operator+(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v + b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] + b.d[k];
    return r;
  }
  ADJ_HD friend Dual operator-(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v - b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] - b.d[k];
    return r;
  }
  ADJ_HD friend Dual operator*(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v * b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    return r;
  }
  ADJ_HD friend Dual operator/(const Dual& a, const Dual& b) {
    Dual r;
    S inv = S(1) / b.v;
    r.v = a.v * inv;
    for (int k = 0; k < N; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) * inv;
    return r;
  }
  ADJ_HD friend Dual operator+(const Dual& a, S b) { Dual r = a; r.v += b; return r; }
  ADJ_HD friend Dual operator+(S a, const Dual& b) { Dual r = b; r.v += a; return r; }
  ADJ_HD friend Dual operator-(const Dual& a, S b) { Dual r = a; r.v -= b; return r; }
  ADJ_HD friend Dual operator-(S a, const Dual& b) { return Dual(a) - b; }
  ADJ_HD friend Dual operator*(const Dual& a, S b) {
    Dual r;
    r.v = a.v * b;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] * b;
    return r;
  }
  ADJ_HD friend Dual operator*(S a, const Dual& b) { return b * a; }
  ADJ_HD friend Dual operator/(const Dual& a, S b) { return a * (S(1) / b); }
  ADJ_HD friend Dual operator/(S a, const Dual& b) { return Dual(a) / b; }
  // comparisons act on the value: branches in force code pick the same side as the primal
  ADJ_HD friend bool operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  ADJ_HD friend bool operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  ADJ_HD friend bool operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  ADJ_HD friend bool operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  ADJ_HD friend bool operator==(const Dual& a, const Dual& b) { return a.v == b.v; }
  ADJ_HD friend bool operator!=(const Dual& a, const Dual& b) { return a.v != b.v; }
  // chain rule helper: f(v) with derivative df
  ADJ_HD Dual chain(S fv, S df) const {
    Dual r;
    r.v = fv;
    for (int k = 0; k < N; ++k) r.d[k] = d[k] * df;
    return r;
  }
  ADJ_HD friend Dual sqrt_(const Dual& a) {
    S s = sqrt_(a.v);
    return a.chain(s, S(0.5) / s);
  }
  ADJ_HD friend Dual acos_(const Dual& a) {
    return a.chain(acos_(a.v), -S(1) / sqrt_(S(1) - a.v * a.v));
  }
  ADJ_HD friend Dual atan2_(const Dual& y, const Dual& x) {
    S r2 = x.v * x.v + y.v * y.v;
    Dual r;
    r.v = atan2_(y.v, x.v);
    for (int k = 0; k < N; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) / r2;
    return r;
  }
  // the plain value (of the innermost scalar, for duals of duals)
  ADJ_HD friend auto value(const Dual& a) { return value(a.v); }
};

// lane-wise control flow: a scalar (or Dual) is one lane, a host SIMD pack (engine/core/simd.h)
// several, whose comparisons give a Mask. Force code that branches on a value skips the work
// when no lane needs it (any) and keeps each lane's side (select)
template <class T>
using cond_t = decltype(T() < T());  // bool, or the pack's Mask
ADJ_HD inline bool any(bool c) { return c; }
template <class T>
ADJ_HD inline T select(bool c, const T& a, const T& b) {
  return c ? a : b;
}

template <class T>
ADJ_HD inline T abs_(const T& x) {
  return x < T(0) ? -x : x;
}
template <class T>
ADJ_HD inline T max_(const T& a, const T& b) {
  return a < b ? b : a;
}
template <class T>
ADJ_HD inline T min_(const T& a, const T& b) {
  return b < a ? b : a;
}

// atan2 of floats: fdlibm's atan2f/atanf (Sun 1993; what glibc up to 2.40 and the BSDs ship),
// written once over a scalar or a host SIMD pack (engine/core/simd.h), the argument reduction's
// five cases chosen by select: so each lane equals the scalar, and the host's results do not
// depend on the C library's atan2f. Arguments outside the common case (a zero, infinite or NaN
// one, x = 1, |y/x| beyond [2^-29, 2^25); y = 0 is handled) go to the C library (special_atan2)
inline bool sign_bit(float x) { return std::signbit(x); }
// r where common, else the C library's atan2f
inline float special_atan2(bool common, float r, float y, float x) { return common ? r : ::atan2f(y, x); }
template <class T>
inline T atan2f_fdlibm(const T& y, const T& x) {
  constexpr float at[11] = {3.3333334327e-01f, -2.0000000298e-01f, 1.4285714924e-01f, -1.1111110449e-01f,
                            9.0908870101e-02f, -7.6918758452e-02f, 6.6610731184e-02f, -5.8335702866e-02f,
                            4.9768779427e-02f, -3.6531571299e-02f, 1.6285819933e-02f};
  const T t = abs_(y / x);
  // reduction: t < 7/16 as is (hi = lo = 0), < 11/16 about 1/2, < 19/16 about 1, < 39/16 about 3/2, else -1/t
  const auto c0 = t < T(0.4375f), c1 = t < T(0.6875f), c2 = t < T(1.1875f), c3 = t < T(2.4375f);
  const T one(1.0f), two(2.0f), half3(1.5f);
  T num = select(c3, t - half3, T(-1.0f)), den = select(c3, one + half3 * t, t);
  T hi = select(c3, T(9.8279368877e-01f), T(1.5707962513e+00f));
  T lo = select(c3, T(3.4473217170e-08f), T(7.5497894159e-08f));
  num = select(c2, t - one, num), den = select(c2, t + one, den);
  hi = select(c2, T(7.8539812565e-01f), hi), lo = select(c2, T(3.7748947079e-08f), lo);
  num = select(c1, two * t - one, num), den = select(c1, two + t, den);
  hi = select(c1, T(4.6364760399e-01f), hi), lo = select(c1, T(5.0121582440e-09f), lo);
  num = select(c0, t, num), den = select(c0, one, den), hi = select(c0, T(0.0f), hi), lo = select(c0, T(0.0f), lo);
  const T xr = num / den, z = xr * xr, w = z * z;
  const T s1 = z * (T(at[0]) + w * (T(at[2]) + w * (T(at[4]) + w * (T(at[6]) + w * (T(at[8]) + w * T(at[10]))))));
  const T s2 = w * (T(at[1]) + w * (T(at[3]) + w * (T(at[5]) + w * (T(at[7]) + w * T(at[9])))));
  // t < 7/16: xr - xr (s1 + s2), which hi - ((xr (s1 + s2) - lo) - xr) equals when hi = lo = 0
  const T a = select(c0, xr - xr * (s1 + s2), hi - ((xr * (s1 + s2) - lo) - xr));
  // quadrants; y = +-0: +-0 for x > 0, +-pi for x < 0 (fdlibm's pi + tiny rounds to pi)
  const T pi(3.1415927410e+00f), pi_lo(-8.7422776573e-08f), zero(0.0f);
  const auto yneg = y < zero, xneg = x < zero, yzero = y == zero;
  T r = select(xneg, select(yneg, (a - pi_lo) - pi, pi - (a - pi_lo)), select(yneg, -a, a));
  r = select(yzero, select(xneg, select(sign_bit(y), -pi, pi), y), r);
  const auto common = (yzero || (is_finite(y / x) && !(t < T(0x1p-29f)) && t < T(0x1p25f))) && !(x == zero) &&
                      !(x == one) && is_finite(x) && is_finite(y);
  return special_atan2(common, r, y, x);
}

ADJ_HD inline float atan2_(float y, float x) {
#if defined(__CUDA_ARCH__)
  return ::atan2f(y, x);
#else
  return atan2f_fdlibm(y, x);
#endif
}

// 3-vector over any scalar (float, double, Dual)
template <class T>
struct vec3 {
  T x, y, z;
  ADJ_HD vec3() : x(0), y(0), z(0) {}
  ADJ_HD vec3(T a, T b, T c) : x(a), y(b), z(c) {}
  ADJ_HD T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  ADJ_HD const T& operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  ADJ_HD friend vec3 operator+(const vec3& a, const vec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
  ADJ_HD friend vec3 operator-(const vec3& a, const vec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
  ADJ_HD friend vec3 operator-(const vec3& a) { return {-a.x, -a.y, -a.z}; }
  ADJ_HD friend vec3 operator*(const vec3& a, const T& s) { return {a.x * s, a.y * s, a.z * s}; }
  ADJ_HD friend vec3 operator*(const T& s, const vec3& a) { return {a.x * s, a.y * s, a.z * s}; }
  ADJ_HD friend vec3 operator/(const vec3& a, const T& s) { return {a.x / s, a.y / s, a.z / s}; }
  ADJ_HD vec3& operator+=(const vec3& b) { x = x + b.x; y = y + b.y; z = z + b.z; return *this; }
  ADJ_HD vec3& operator-=(const vec3& b) { x = x - b.x; y = y - b.y; z = z - b.z; return *this; }
  ADJ_HD friend T dot(const vec3& a, const vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
  ADJ_HD friend vec3 cross(const vec3& a, const vec3& b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
  }
  ADJ_HD friend T length_sq(const vec3& a) { return dot(a, a); }
  ADJ_HD friend T length(const vec3& a) { return sqrt_(dot(a, a)); }
  ADJ_HD friend bool operator==(const vec3& a, const vec3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
};

// row-major 3x3 matrix
template <class T>
struct mat33 {
  T m[3][3];
  ADJ_HD mat33() {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = T(0);
  }
  ADJ_HD static mat33 identity() {
    mat33 r;
    r.m[0][0] = r.m[1][1] = r.m[2][2] = T(1);
    return r;
  }
  ADJ_HD static mat33 from_cols(const vec3<T>& a, const vec3<T>& b, const vec3<T>& c) {
    mat33 r;
    for (int i = 0; i < 3; ++i) {
      r.m[i][0] = a[i];
      r.m[i][1] = b[i];
      r.m[i][2] = c[i];
    }
    return r;
  }
  ADJ_HD vec3<T> col(int j) const { return {m[0][j], m[1][j], m[2][j]}; }
  ADJ_HD friend mat33 operator*(const mat33& a, const mat33& b) {
    mat33 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
  }
  ADJ_HD friend vec3<T> operator*(const mat33& a, const vec3<T>& v) {
    return {a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z, a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
            a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
  }
  ADJ_HD friend mat33 transpose(const mat33& a) {
    mat33 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
    return r;
  }
  ADJ_HD friend T determinant(const mat33& a) {
    return dot(a.col(0), cross(a.col(1), a.col(2)));
  }
};

// a plain-scalar matrix lifted to another scalar type (constants in dual code)
template <class T, class S>
ADJ_HD inline mat33<T> lift(const mat33<S>& a) {
  mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = T(a.m[i][j]);
  return r;
}
template <class T, class S>
ADJ_HD inline vec3<T> lift(const vec3<S>& a) {
  return {T(a.x), T(a.y), T(a.z)};
}

// inverse of a 3x3 matrix (caller checks the determinant)
template <class T>
ADJ_HD inline mat33<T> inverse(const mat33<T>& a) {
  vec3<T> c0 = a.col(0), c1 = a.col(1), c2 = a.col(2);
  vec3<T> r0 = cross(c1, c2), r1 = cross(c2, c0), r2 = cross(c0, c1);
  T inv_det = T(1) / dot(c0, r0);
  mat33<T> r;
  for (int j = 0; j < 3; ++j) {
    r.m[0][j] = r0[j] * inv_det;
    r.m[1][j] = r1[j] * inv_det;
    r.m[2][j] = r2[j] * inv_det;
  }
  return r;
}

// 2x2 matrix [[a, b], [c, d]] (triangle rest pose)
template <class S>
struct mat22 {
  S a, b, c, d;
};

// element index tuples
struct Idx2 {
  int i, j;
};
struct Idx3 {
  int i, j, k;
};
struct Idx4 {
  int i, j, k, l;
};

// packing helpers for the vector-Jacobian products of force functions
template <class T>
ADJ_HD inline vec3<T> load3(const T* p) {
  return {p[0], p[1], p[2]};
}
template <class T>
ADJ_HD inline void store3(T* p, const vec3<T>& v) {
  p[0] = v.x;
  p[1] = v.y;
  p[2] = v.z;
}

// the packed form of an element's adjoint over its n vertices' vec3s: in = x0..x(n-1),
// v0..v(n-1); adj_out = dL/d(f0..f(n-1)); adj_in = dL/d in; f(x, v, g, adj_x, adj_v) is the
// vec3 form (engine/forces' triangle_adjoint, bending_adjoint)
template <int N, class T>
ADJ_HD inline void unpack_vertices(const T* in, const T* adj_out, vec3<T>* x, vec3<T>* v, vec3<T>* g) {
  for (int k = 0; k < N; ++k) x[k] = load3(in + 3 * k), v[k] = load3(in + 3 * N + 3 * k), g[k] = load3(adj_out + 3 * k);
}
template <int N, class T, class F>
ADJ_HD inline void packed_vertex_adjoint(const T* in, const T* adj_out, T* adj_in, const F& f) {
  vec3<T> x[N], v[N], g[N], adj_x[N], adj_v[N];
  unpack_vertices<N>(in, adj_out, x, v, g);
  f(x, v, g, adj_x, adj_v);
  for (int k = 0; k < N; ++k) store3(adj_in + 3 * k, adj_x[k]), store3(adj_in + 3 * N + 3 * k, adj_v[k]);
}

// adj_in = J^T adj_out for f.eval (in[F::in_count] -> out[F::out_count]); f.eval is the
// same generic function the forward pass runs, evaluated once on dual numbers
template <class F, class S>
ADJ_HD inline void vjp(const F& f, const S* in, const S* adj_out, S* adj_in) {
  using D = Dual<S, F::in_count>;
  D din[F::in_count];
  D dout[F::out_count];
  for (int k = 0; k < F::in_count; ++k) din[k] = D::var(in[k], k);
  f.eval(din, dout);
  for (int k = 0; k < F::in_count; ++k) {
    S s = S(0);
    for (int o = 0; o < F::out_count; ++o) s = s + adj_out[o] * dout[o].d[k];
    adj_in[k] = s;
  }
}

}  // namespace adj
