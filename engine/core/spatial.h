// spatial algebra for articulated bodies (Featherstone, "Rigid Body Dynamics Algorithms",
// ch. 2), in absolute coordinates: every motion and force vector is expressed in the world
// frame at the world origin, so no per-joint transforms are needed between bodies.
// templated on the scalar (float, double, Dual) like engine/core/math.h.
#pragma once

#include <cmath>

#include "engine/core/math.h"

namespace adj::rigid {

// sin/cos with one name for float, double and Dual (math.h has no trig for Dual)
ADJ_HD inline float rsin(float x) { return ::sinf(x); }
ADJ_HD inline double rsin(double x) { return ::sin(x); }
ADJ_HD inline float rcos(float x) { return ::cosf(x); }
ADJ_HD inline double rcos(double x) { return ::cos(x); }
template <class S, int N>
ADJ_HD inline Dual<S, N> rcos(const Dual<S, N>& a);  // (nested duals: rsin's derivative is rcos)
template <class S, int N>
ADJ_HD inline Dual<S, N> rsin(const Dual<S, N>& a) {
  return a.chain(rsin(a.v), rcos(a.v));
}
template <class S, int N>
ADJ_HD inline Dual<S, N> rcos(const Dual<S, N>& a) {
  return a.chain(rcos(a.v), -rsin(a.v));
}

// unit quaternion (w, x, y, z): rotation of a child frame relative to its parent
template <class T>
struct quat {
  T w, x, y, z;
  ADJ_HD quat() : w(1), x(0), y(0), z(0) {}
  ADJ_HD quat(T w_, T x_, T y_, T z_) : w(w_), x(x_), y(y_), z(z_) {}
};

template <class T>
ADJ_HD inline quat<T> qmul(const quat<T>& a, const quat<T>& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

template <class T>
ADJ_HD inline quat<T> qnormalize(const quat<T>& q) {
  T inv = T(1) / sqrt_(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return {q.w * inv, q.x * inv, q.y * inv, q.z * inv};
}

// rotation matrix of a quaternion (normalized first, so any nonzero 4-vector is a rotation)
template <class T>
ADJ_HD inline mat33<T> qmat(const quat<T>& q0) {
  quat<T> q = qnormalize(q0);
  T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  T wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  mat33<T> r;
  r.m[0][0] = T(1) - T(2) * (yy + zz);
  r.m[0][1] = T(2) * (xy - wz);
  r.m[0][2] = T(2) * (xz + wy);
  r.m[1][0] = T(2) * (xy + wz);
  r.m[1][1] = T(1) - T(2) * (xx + zz);
  r.m[1][2] = T(2) * (yz - wx);
  r.m[2][0] = T(2) * (xz - wy);
  r.m[2][1] = T(2) * (yz + wx);
  r.m[2][2] = T(1) - T(2) * (xx + yy);
  return r;
}

// exp map of a rotation vector w*h (angle |w| h about w); Taylor series near zero
template <class T>
ADJ_HD inline quat<T> qexp(const vec3<T>& w, T h) {
  vec3<T> a = w * (h * T(0.5));
  T th2 = dot(a, a);
  T c, s;  // cos(th), sin(th)/th
  if (value(th2) < 1e-12) {
    c = T(1) - th2 * T(0.5);
    s = T(1) - th2 * T(1.0 / 6.0);
  } else {
    T th = sqrt_(th2);
    c = rcos(th);
    s = rsin(th) / th;
  }
  return {c, a.x * s, a.y * s, a.z * s};
}

// rotation by angle about a unit axis
template <class T>
ADJ_HD inline mat33<T> axis_angle(const vec3<T>& a, T angle) {
  T c = rcos(angle), s = rsin(angle), t = T(1) - c;
  mat33<T> r;
  r.m[0][0] = t * a.x * a.x + c;
  r.m[0][1] = t * a.x * a.y - s * a.z;
  r.m[0][2] = t * a.x * a.z + s * a.y;
  r.m[1][0] = t * a.x * a.y + s * a.z;
  r.m[1][1] = t * a.y * a.y + c;
  r.m[1][2] = t * a.y * a.z - s * a.x;
  r.m[2][0] = t * a.x * a.z - s * a.y;
  r.m[2][1] = t * a.y * a.z + s * a.x;
  r.m[2][2] = t * a.z * a.z + c;
  return r;
}

// spatial vector: angular part w, linear part v (motion: velocity of the body point at the
// world origin; force: moment about the world origin and the force)
template <class T>
struct svec {
  vec3<T> w, v;
  ADJ_HD friend svec operator+(const svec& a, const svec& b) { return {a.w + b.w, a.v + b.v}; }
  ADJ_HD friend svec operator-(const svec& a, const svec& b) { return {a.w - b.w, a.v - b.v}; }
  ADJ_HD friend svec operator*(const svec& a, const T& s) { return {a.w * s, a.v * s}; }
  ADJ_HD svec& operator+=(const svec& b) {
    w += b.w;
    v += b.v;
    return *this;
  }
  ADJ_HD svec& operator-=(const svec& b) {
    w -= b.w;
    v -= b.v;
    return *this;
  }
};

// motion . force (power)
template <class T>
ADJ_HD inline T sdot(const svec<T>& m, const svec<T>& f) {
  return dot(m.w, f.w) + dot(m.v, f.v);
}
// motion x motion
template <class T>
ADJ_HD inline svec<T> crm(const svec<T>& a, const svec<T>& b) {
  return {cross(a.w, b.w), cross(a.w, b.v) + cross(a.v, b.w)};
}
// motion x* force
template <class T>
ADJ_HD inline svec<T> crf(const svec<T>& a, const svec<T>& f) {
  return {cross(a.w, f.w) + cross(a.v, f.v), cross(a.w, f.v)};
}
// motion of a rotation axis a (unit, world) through point p
template <class T>
ADJ_HD inline svec<T> axis_motion(const vec3<T>& a, const vec3<T>& p) {
  return {a, cross(p, a)};
}

// spatial inertia at the world origin: [[A, B], [B^T, m 1]], A = Ic - m [c]x^2, B = m [c]x
template <class T>
struct sinertia {
  mat33<T> A, B;
  T m = T(0);
  ADJ_HD svec<T> operator*(const svec<T>& x) const { return {A * x.w + B * x.v, transpose(B) * x.w + x.v * m}; }
  ADJ_HD sinertia& operator+=(const sinertia& o) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        A.m[i][j] = A.m[i][j] + o.A.m[i][j];
        B.m[i][j] = B.m[i][j] + o.B.m[i][j];
      }
    m = m + o.m;
    return *this;
  }
};

template <class T>
ADJ_HD inline mat33<T> skew(const vec3<T>& c) {
  mat33<T> r;
  r.m[0][1] = -c.z;
  r.m[0][2] = c.y;
  r.m[1][0] = c.z;
  r.m[1][2] = -c.x;
  r.m[2][0] = -c.y;
  r.m[2][1] = c.x;
  return r;
}

// body of mass m with centre of mass c (world) and inertia Ic about it (world axes)
template <class T>
ADJ_HD inline sinertia<T> make_inertia(T m, const vec3<T>& c, const mat33<T>& Ic) {
  sinertia<T> r;
  mat33<T> cx = skew(c), cxx = cx * cx;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      r.A.m[i][j] = Ic.m[i][j] - m * cxx.m[i][j];
      r.B.m[i][j] = m * cx.m[i][j];
    }
  r.m = m;
  return r;
}

}  // namespace adj::rigid
