// the cloth's kernels of engine/solver/kernels.h (triangle with its aerodynamics, bending, and
// the particles' forward step), k_lanes<S> elements or particles at a time on the host's SIMD
// packs (engine/core/simd.h): the same force functions and the same input layout (kernels.h's
// pack_vertices), each element's vertices gathered into its lane and its outputs scattered back
// to its slots. Each lane equals the scalar functor bit for bit, so which elements run in lanes
// changes nothing (tests/engine/core/simd_test.cpp). The CPU solver's executors run a launch of
// n elements as n / w groups and a scalar remainder (run_item), w = the SSE2 packs' lanes, or
// AVX2's or AVX-512's where the CPU has them (widest_lane_bytes); functors without a lane form
// run one element per item. Host only.
#pragma once

#include <cstring>
#include <type_traits>

#include "engine/core/simd.h"
#include "engine/solver/kernels.h"

namespace adj {

#if defined(__SSE2__)
// four floats' vec3s p[v[0..3]] transposed into x, y and z registers (two loads and three
// shuffles per pair of lanes instead of a scalar store per component)
inline void gather3_x4(const vec3<float>* p, const int* v, __m128& x, __m128& y, __m128& z) {
  auto xy = [&](int l) { return _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&p[v[l]].x)); };
  auto zl = [&](int l) { return _mm_load_ss(&p[v[l]].z); };
  const __m128 ab = _mm_unpacklo_ps(xy(0), xy(1)), cd = _mm_unpacklo_ps(xy(2), xy(3));
  x = _mm_movelh_ps(ab, cd);
  y = _mm_movehl_ps(cd, ab);
  z = _mm_movelh_ps(_mm_unpacklo_ps(zl(0), zl(1)), _mm_unpacklo_ps(zl(2), zl(3)));
}
#endif

// lane l = p[v[l]]: one vec3 per lane, transposed into three packs
template <class S>
inline vec3<Lanes<S>> gather3(const vec3<S>* p, const int* v) {
  vec3<Lanes<S>> r;
#if defined(__SSE2__) && ADJ_SIMD_BYTES == 16
  if constexpr (sizeof(S) == 4) {
    gather3_x4(p, v, r.x.v, r.y.v, r.z.v);
    return r;
  }
#elif defined(__AVX__) && ADJ_SIMD_BYTES == 32
  if constexpr (sizeof(S) == 4) {
    __m128 x0, y0, z0, x1, y1, z1;
    gather3_x4(p, v, x0, y0, z0);
    gather3_x4(p, v + 4, x1, y1, z1);
    r.x.v = _mm256_set_m128(x1, x0);
    r.y.v = _mm256_set_m128(y1, y0);
    r.z.v = _mm256_set_m128(z1, z0);
    return r;
  }
#elif defined(__AVX512F__) && ADJ_SIMD_BYTES == 64
  if constexpr (sizeof(S) == 4) {
    __m128 x[4], y[4], z[4];
    for (int q = 0; q < 4; ++q) gather3_x4(p, v + 4 * q, x[q], y[q], z[q]);
    auto join = [](const __m128* h) {
      const __m256 lo = __builtin_shufflevector(h[0], h[1], 0, 1, 2, 3, 4, 5, 6, 7);
      const __m256 hi = __builtin_shufflevector(h[2], h[3], 0, 1, 2, 3, 4, 5, 6, 7);
      return __m512(__builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    };
    r.x.v = join(x);
    r.y.v = join(y);
    r.z.v = join(z);
    return r;
  }
#endif
  for (int l = 0; l < k_lanes<S>; ++l) {
    r.x.set(l, p[v[l]].x);
    r.y.set(l, p[v[l]].y);
    r.z.set(l, p[v[l]].z);
  }
  return r;
}

#if defined(__SSE2__)
// the float pack of the build's width, and the 4x4 transposes of its 16-byte blocks (each
// block q of a pack holds lanes 4q .. 4q + 3)
#if ADJ_SIMD_BYTES == 64 && defined(__AVX512F__)
#define ADJ_PACKF 1
using PackF = __m512;
// as _mm512_unpacklo_ps, _mm512_unpackhi_ps and _mm512_shuffle_ps (GCC 12's trip -Wuninitialized)
inline PackF unpacklo(PackF a, PackF b) {
  return __builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
}
inline PackF unpackhi(PackF a, PackF b) {
  return __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
}
template <int I>
inline PackF shuffle(PackF a, PackF b) {
  constexpr int i0 = I & 3, i1 = (I >> 2) & 3, i2 = 16 + ((I >> 4) & 3), i3 = 16 + ((I >> 6) & 3);
  return __builtin_shufflevector(a, b, i0, i1, i2, i3, 4 + i0, 4 + i1, 4 + i2, 4 + i3, 8 + i0, 8 + i1, 8 + i2, 8 + i3,
                                 12 + i0, 12 + i1, 12 + i2, 12 + i3);
}
#elif ADJ_SIMD_BYTES == 32 && defined(__AVX__)
#define ADJ_PACKF 1
using PackF = __m256;
inline PackF unpacklo(PackF a, PackF b) { return _mm256_unpacklo_ps(a, b); }
inline PackF unpackhi(PackF a, PackF b) { return _mm256_unpackhi_ps(a, b); }
template <int I>
inline PackF shuffle(PackF a, PackF b) {
  return _mm256_shuffle_ps(a, b, I);
}
#elif ADJ_SIMD_BYTES == 16
#define ADJ_PACKF 1
using PackF = __m128;
inline PackF unpacklo(PackF a, PackF b) { return _mm_unpacklo_ps(a, b); }
inline PackF unpackhi(PackF a, PackF b) { return _mm_unpackhi_ps(a, b); }
template <int I>
inline PackF shuffle(PackF a, PackF b) {
  return _mm_shuffle_ps(a, b, I);
}
#endif
#if defined(ADJ_PACKF)
// the pack whose block q is b[q] (b: W / 4 blocks)
inline PackF join_blocks(const __m128* b) {
#if ADJ_SIMD_BYTES == 64
  // the masked inserts with every lane set (GCC 12's _mm512_insertf32x4 trips -Wuninitialized)
  PackF r = _mm512_castps128_ps512(b[0]);
  r = _mm512_mask_insertf32x4(r, __mmask16(0xffff), r, b[1], 1);
  r = _mm512_mask_insertf32x4(r, __mmask16(0xffff), r, b[2], 2);
  return _mm512_mask_insertf32x4(r, __mmask16(0xffff), r, b[3], 3);
#elif ADJ_SIMD_BYTES == 32
  return _mm256_set_m128(b[1], b[0]);
#else
  return b[0];
#endif
}
// block q of p
inline __m128 block(PackF p, int q) {
#if ADJ_SIMD_BYTES == 64
  switch (q) {
    case 0:
      return __builtin_shufflevector(p, p, 0, 1, 2, 3);
    case 1:
      return __builtin_shufflevector(p, p, 4, 5, 6, 7);
    case 2:
      return __builtin_shufflevector(p, p, 8, 9, 10, 11);
    default:
      return __builtin_shufflevector(p, p, 12, 13, 14, 15);
  }
#elif ADJ_SIMD_BYTES == 32
  return q == 0 ? _mm256_castps256_ps128(p) : _mm256_extractf128_ps(p, 1);
#else
  (void)q;
  return p;
#endif
}
#endif
#endif

// loops over the lanes of a pack, unrolled so that block() and the strides are constants; and
// the gathers and scatters inlined into every lane kernel however many call them
#if defined(__GNUC__)
#define ADJ_LANE_UNROLL _Pragma("GCC unroll 16")
#define ADJ_LANE_INLINE [[gnu::always_inline]] inline
#else
#define ADJ_LANE_UNROLL
#define ADJ_LANE_INLINE inline
#endif

// KernelArgs::state_pack of n particles' q and qd. Floats: a 16-byte load and store of each
// vec3 but the last (its fourth float the next one's x, unused), the last one's alone
template <class S>
inline void pack_state(const vec3<S>* q, const vec3<S>* qd, int n, S* pack) {
  int p = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(S) == 4) {
    for (; p + 1 < n; ++p) {
      _mm_storeu_ps(pack + 8 * p, _mm_loadu_ps(&q[p].x));
      _mm_storeu_ps(pack + 8 * p + 4, _mm_loadu_ps(&qd[p].x));
    }
  }
#endif
  for (; p < n; ++p) {
    S* r = pack + 8 * p;
    r[0] = q[p].x, r[1] = q[p].y, r[2] = q[p].z, r[3] = S(0);
    r[4] = qd[p].x, r[5] = qd[p].y, r[6] = qd[p].z, r[7] = S(0);
  }
}

#if defined(ADJ_PACKF)
// r's lane l = the first three floats of b[l] (l < W): 4x4 transposes of 16-byte blocks
ADJ_LANE_INLINE void transpose_blocks(const __m128* b, vec3<Lanes<float>>& r) {
  constexpr int blocks = ADJ_SIMD_BYTES / 16;
  PackF row[4];  // block q of row[j]: b[4q + j]
  ADJ_LANE_UNROLL
  for (int j = 0; j < 4; ++j) {
    __m128 c[blocks];
    ADJ_LANE_UNROLL
    for (int q = 0; q < blocks; ++q) c[q] = b[4 * q + j];
    row[j] = join_blocks(c);
  }
  const PackF t0 = unpacklo(row[0], row[1]), t1 = unpackhi(row[0], row[1]);
  const PackF t2 = unpacklo(row[2], row[3]), t3 = unpackhi(row[2], row[3]);
  r.x.v = shuffle<0x44>(t0, t2);
  r.y.v = shuffle<0xEE>(t0, t2);
  r.z.v = shuffle<0x44>(t1, t3);
}
#endif

// lane l = the packed state (KernelArgs::state_pack) of particle idx[l * stride]: its position
// into x, its velocity into v (floats: 4x4 transposes of 16-byte blocks, loaded as one 32-byte
// record a particle on AVX2 and AVX-512, as two 16-byte halves on SSE2)
template <class S>
ADJ_LANE_INLINE void gather_state(const S* pack, const int* idx, int stride, vec3<Lanes<S>>& x, vec3<Lanes<S>>& v) {
#if defined(ADJ_PACKF) && ADJ_SIMD_BYTES >= 32
  if constexpr (sizeof(S) == 4) {
    // one 32-byte load a particle: row[4g + j] holds particles 8g + j and 8g + j + 4 (AVX2: 4g + j),
    // so the transposes of rows 4g .. 4g + 3 give positions and velocities of 8 (4) particles
    // in alternate blocks, and one shuffle of blocks per pack puts them in lane order
    auto rec = [&](int l) { return _mm256_loadu_ps(pack + 8 * std::ptrdiff_t(idx[l * stride])); };
    PackF t[2][3];  // [g]: x, y, z rows of group g, positions and velocities in alternate blocks
    ADJ_LANE_UNROLL
    for (int g = 0; g < 2; ++g) {
      PackF row[4];
      ADJ_LANE_UNROLL
      for (int j = 0; j < 4; ++j) {
#if ADJ_SIMD_BYTES == 64
        const PackF r = _mm512_castps256_ps512(rec(8 * g + j));
        row[j] = _mm512_mask_insertf32x8(r, __mmask16(0xffff), r, rec(8 * g + j + 4), 1);
#else
        row[j] = rec(4 * g + j);
#endif
      }
      const PackF t0 = unpacklo(row[0], row[1]), t1 = unpackhi(row[0], row[1]);
      const PackF t2 = unpacklo(row[2], row[3]), t3 = unpackhi(row[2], row[3]);
      t[g][0] = shuffle<0x44>(t0, t2), t[g][1] = shuffle<0xEE>(t0, t2), t[g][2] = shuffle<0x44>(t1, t3);
    }
    Lanes<S>* out[2][3] = {{&x.x, &x.y, &x.z}, {&v.x, &v.y, &v.z}};
    ADJ_LANE_UNROLL
    for (int c = 0; c < 3; ++c) {
#if ADJ_SIMD_BYTES == 64
      out[0][c]->v =
          __builtin_shufflevector(t[0][c], t[1][c], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
      out[1][c]->v =
          __builtin_shufflevector(t[0][c], t[1][c], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
#else
      out[0][c]->v = __builtin_shufflevector(t[0][c], t[1][c], 0, 1, 2, 3, 8, 9, 10, 11);
      out[1][c]->v = __builtin_shufflevector(t[0][c], t[1][c], 4, 5, 6, 7, 12, 13, 14, 15);
#endif
    }
    return;
  }
#elif defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    __m128 b[2][k_lanes<S>];
    ADJ_LANE_UNROLL
    for (int l = 0; l < k_lanes<S>; ++l) {
      const float* p = pack + 8 * std::ptrdiff_t(idx[l * stride]);
      b[0][l] = _mm_loadu_ps(p), b[1][l] = _mm_loadu_ps(p + 4);
    }
    transpose_blocks(b[0], x);
    transpose_blocks(b[1], v);
    return;
  }
#endif
  for (int l = 0; l < k_lanes<S>; ++l) {
    const S* p = pack + 8 * std::ptrdiff_t(idx[l * stride]);
    x.x.set(l, p[0]), x.y.set(l, p[1]), x.z.set(l, p[2]);
    v.x.set(l, p[4]), v.y.set(l, p[5]), v.z.set(l, p[6]);
  }
}

// the V vertices' positions x and velocities v of elements e0 .. e0 + k_lanes - 1 (kernels.h's
// pack_vertices on lanes): lane l holds the element whose k-th vertex is idx[V * l + k]
static_assert(sizeof(Idx3) == 3 * sizeof(int) && sizeof(Idx4) == 4 * sizeof(int), "index tuples are packed ints");
template <int V, class S>
inline void gather_vertices(const KernelArgs<S>& a, const int* idx, vec3<Lanes<S>>* x, vec3<Lanes<S>>* v) {
  using L = Lanes<S>;
  if (a.state_pack) {
    ADJ_LANE_UNROLL
    for (int k = 0; k < V; ++k) gather_state(a.state_pack, idx + k, V, x[k], v[k]);
    return;
  }
  for (int k = 0; k < V; ++k) {
    int vk[L::W];
    for (int l = 0; l < L::W; ++l) vk[l] = idx[V * l + k];
    x[k] = gather3(a.q, vk);
    v[k] = gather3(a.qd, vk);
  }
}

#if defined(ADJ_PACKF)
// transpose_blocks backwards: block q of row[j] = lane 4q + j's (x, y, z, z)
inline void block_rows(const vec3<Lanes<float>>& f, PackF* row) {
  const PackF t0 = unpacklo(f.x.v, f.y.v), t1 = unpackhi(f.x.v, f.y.v);
  const PackF t2 = unpacklo(f.z.v, f.z.v), t3 = unpackhi(f.z.v, f.z.v);
  row[0] = shuffle<0x44>(t0, t2), row[1] = shuffle<0xEE>(t0, t2);
  row[2] = shuffle<0x44>(t1, t3), row[3] = shuffle<0xEE>(t1, t3);
}
#endif

// lane l of x and v into the packed state of particle l (pack + 8 l: x, y, z, z, vx, vy, vz, vz)
template <class S>
inline void scatter_state(const vec3<Lanes<S>>& x, const vec3<Lanes<S>>& v, S* pack) {
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    PackF row[2][4];
    block_rows(x, row[0]);
    block_rows(v, row[1]);
    ADJ_LANE_UNROLL
    for (int l = 0; l < k_lanes<S>; ++l) {
      _mm_storeu_ps(pack + 8 * l, block(row[0][l % 4], l / 4));
      _mm_storeu_ps(pack + 8 * l + 4, block(row[1][l % 4], l / 4));
    }
    return;
  }
#endif
  for (int l = 0; l < k_lanes<S>; ++l) {
    S* r = pack + 8 * l;
    r[0] = x.x[l], r[1] = x.y[l], r[2] = x.z[l], r[3] = x.z[l];
    r[4] = v.x[l], r[5] = v.y[l], r[6] = v.z[l], r[7] = v.z[l];
  }
}

// lane l of f[k] to first[K * l + k], k < K (kernels.h's slot writes on lanes). Floats: a
// 16-byte store per vec3 in address order, each overwriting the next one's x with a
// scratch value that the next store replaces; the last one stores its 12 bytes alone
template <int K, class S>
ADJ_LANE_INLINE void scatter_slots(const vec3<Lanes<S>>* f, vec3<S>* first) {
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    constexpr int W = k_lanes<S>;
    PackF row[K][4];  // block q of row[k][j]: lane 4q + j's (x, y, z, z) of f[k]
    ADJ_LANE_UNROLL
    for (int k = 0; k < K; ++k) block_rows(f[k], row[k]);
    float* out = &first[0].x;
    ADJ_LANE_UNROLL
    for (int l = 0; l < W; ++l) {
      ADJ_LANE_UNROLL
      for (int k = 0; k < K; ++k) {
        const __m128 b = block(row[k][l % 4], l / 4);
        float* p = out + 3 * (K * l + k);
        if (l + 1 < W || k + 1 < K) {
          _mm_storeu_ps(p, b);
        } else {
          _mm_storel_pi(reinterpret_cast<__m64*>(p), b);
          _mm_store_ss(p + 2, _mm_movehl_ps(b, b));
        }
      }
    }
    return;
  }
#endif
  for (int l = 0; l < k_lanes<S>; ++l)
    for (int k = 0; k < K; ++k) first[K * l + k] = {f[k].x[l], f[k].y[l], f[k].z[l]};
}

// k_lanes<S> consecutive scalars from p
template <class S>
inline Lanes<S> load_lanes(const S* p) {
  Lanes<S> r;
  std::memcpy(&r.v, p, sizeof r.v);
  return r;
}

// k_lanes<S> consecutive 2x2 matrices, transposed into one pack per entry (floats: a 16-byte
// load a matrix and 4x4 transposes in registers, instead of a scalar insert per entry)
template <class S>
inline mat22<Lanes<S>> load_mat22_lanes(const mat22<S>* p) {
  mat22<Lanes<S>> r;
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    constexpr int blocks = ADJ_SIMD_BYTES / 16;
    PackF row[4];  // block q of row[j]: matrix 4q + j's (a, b, c, d)
    ADJ_LANE_UNROLL
    for (int j = 0; j < 4; ++j) {
      __m128 c[blocks];
      ADJ_LANE_UNROLL
      for (int q = 0; q < blocks; ++q) c[q] = _mm_loadu_ps(&p[4 * q + j].a);
      row[j] = join_blocks(c);
    }
    const PackF t0 = unpacklo(row[0], row[1]), t1 = unpackhi(row[0], row[1]);
    const PackF t2 = unpacklo(row[2], row[3]), t3 = unpackhi(row[2], row[3]);
    r.a.v = shuffle<0x44>(t0, t2), r.b.v = shuffle<0xEE>(t0, t2);
    r.c.v = shuffle<0x44>(t1, t3), r.d.v = shuffle<0xEE>(t1, t3);
    return r;
  }
#endif
  for (int l = 0; l < Lanes<S>::W; ++l) {
    r.a.set(l, p[l].a);
    r.b.set(l, p[l].b);
    r.c.set(l, p[l].c);
    r.d.set(l, p[l].d);
  }
  return r;
}

template <class S>
inline TriangleEval<Lanes<S>> tri_eval_lanes(const ModelView<S>& m, int e0) {
  return {load_mat22_lanes(m.tri_pose + e0), load_lanes(m.tri_area + e0), load_lanes(m.tri_ke + e0),
          load_lanes(m.tri_ka + e0), load_lanes(m.tri_kd + e0)};
}

template <class S>
inline BendingEval<Lanes<S>> bending_eval_lanes(const ModelView<S>& m, int e0) {
  return {load_lanes(m.edge_ke + e0), load_lanes(m.edge_kd + e0), load_lanes(m.edge_rest_angle + e0)};
}

// ---- forward ----

template <class S>
inline void run_lanes(const TriangleForward<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  // TriangleEval's and AeroEval's force functions on the gathered vertices
  vec3<L> x[3], v[3], fm[3], fa[3];
  gather_vertices<3>(a, reinterpret_cast<const int*>(a.m.tri_indices + e0), x, v);
  const TriangleEval<L> te = tri_eval_lanes(a.m, e0);
  triangle_force(x[0], x[1], x[2], v[0], v[1], v[2], te.pose, te.area, te.ke, te.ka, te.kd, fm[0], fm[1], fm[2]);
  aero_force(x[0], x[1], x[2], v[0], v[1], v[2], L(a.m.tri_lift), L(a.m.tri_drag), fa[0], fa[1], fa[2]);
  for (int k = 0; k < 3; ++k) fm[k] = fm[k] + fa[k];
  scatter_slots<3>(fm, a.f_slot + a.m.tri_slot + 3 * e0);
}

template <class S>
inline void run_lanes(const BendingForward<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  // BendingEval's force function on the gathered vertices
  vec3<L> x[4], v[4], fk[4];
  gather_vertices<4>(a, reinterpret_cast<const int*>(a.m.edge_indices + e0), x, v);
  const BendingEval<L> be = bending_eval_lanes(a.m, e0);
  bending_force(x[0], x[1], x[2], x[3], v[0], v[1], v[2], v[3], be.ke, be.kd, be.rest, fk[0], fk[1], fk[2], fk[3]);
  scatter_slots<4>(fk, a.f_slot + a.m.edge_slot + 4 * e0);
}

// spare slots past the last one in the host's slot arrays (SolverT's scratch): slot_force_host
// and slot_adjoint_host load 16 bytes from the last slot's 12
inline constexpr int k_slot_pad = 1;

// kernels.h's slot_force on the host: each slot's vec3 one 16-byte load and add (the fourth lane,
// the next slot's x, is dropped), so the same adds in the same order at half the instructions
#if defined(__SSE2__)
inline __m128 slot_force_block(const KernelArgs<float>& a, int p) {
  __m128 f = _mm_setzero_ps();
  if (a.control_f)
    f = _mm_movelh_ps(_mm_loadl_pi(f, reinterpret_cast<const __m64*>(&a.control_f[p].x)),
                      _mm_load_ss(&a.control_f[p].z));
  const int* slot = a.m.incidence_slot;
  ADJ_CSR_UNROLL
  for (int k = a.m.incidence_start[p]; k < a.m.incidence_start[p + 1]; ++k)
    f = _mm_add_ps(f, _mm_loadu_ps(&a.f_slot[slot[k]].x));
  return f;
}
#endif
template <class S>
inline vec3<S> slot_force_host(const KernelArgs<S>& a, int p) {
#if defined(__SSE2__)
  if constexpr (sizeof(S) == 4) {
    alignas(16) float r[4];
    _mm_store_ps(r, slot_force_block(a, p));
    return {r[0], r[1], r[2]};
  }
#endif
  return slot_force(a, p);
}

// slot_force_host of particles p0 .. p0 + k_lanes - 1, lane by lane
template <class S>
inline vec3<Lanes<S>> slot_force_lanes(const KernelArgs<S>& a, int p0) {
  vec3<Lanes<S>> f;
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    __m128 b[k_lanes<S>];
    for (int l = 0; l < k_lanes<S>; ++l) b[l] = slot_force_block(a, p0 + l);
    transpose_blocks(b, f);
    return f;
  }
#endif
  int lane[k_lanes<S>];
  vec3<S> part[k_lanes<S>];
  for (int l = 0; l < k_lanes<S>; ++l) lane[l] = l, part[l] = slot_force_host(a, p0 + l);
  return gather3(part, lane);
}

// particles p0 .. p0 + k_lanes - 1: the slot sums and any contact but a plane's one particle at a
// time, a plane's contact and the integration on lanes; the scalar functor's operations in its order
template <class S>
inline void run_lanes(const ParticleForward<S>& k, int p0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = k.a;
  int lane[L::W];
  vec3<S> part[L::W];  // one vec3 a particle, gathered into packs
  for (int l = 0; l < L::W; ++l) lane[l] = l;
  vec3<L> f = slot_force_lanes(a, p0), q, qd;
  if (a.state_pack) {
    gather_state(a.state_pack + 8 * std::ptrdiff_t(p0), lane, 1, q, qd);
  } else {
    q = gather3(a.q + p0, lane);
    qd = gather3(a.qd + p0, lane);
  }
  L in[9];
  store3(in, q);
  store3(in + 3, qd);
  in[6] = L(a.m.contact_ke), in[7] = L(a.m.contact_kd), in[8] = L(a.m.contact_mu);
  for (int s = 0; s < a.m.shape_count; ++s) {
    if (a.m.shape_type[s] == GEOM_PLANE) {
      f += plane_contact_force(a.m.shape(s), load_lanes(a.m.particle_radius + p0), in, a.m.contact_kf, a.m.contact_eps);
      continue;
    }
    for (int l = 0; l < L::W; ++l) {
      S in1[9];
      pack_particle_contact(a, p0 + l, in1);
      part[l] = shape_force(a, p0 + l, s, in1);
    }
    f += gather3(part, lane);
  }
  if (a.m.particle_contact) {
    for (int l = 0; l < L::W; ++l) {
      ContactSum<S> sum{a, p0 + l, vec3<S>()};
      for_each_neighbour(a, p0 + l, sum);
      part[l] = sum.f;
    }
    f += gather3(part, lane);
  }
  scatter_slots<1>(&f, a.f_total + p0);
  const vec3<L> v = integrate_velocity(a.m, a.dt, load_lanes(a.m.particle_mass + p0), qd, f);
  scatter_slots<1>(&v, a.qd_out + p0);
  const vec3<L> q_out = q + v * L(a.dt);
  scatter_slots<1>(&q_out, a.q_out + p0);
  if (a.state_pack_out) scatter_state(q_out, v, a.state_pack_out + 8 * std::ptrdiff_t(p0));
}

// ---- adjoint ----

// lane l = p[l] (k_lanes consecutive vec3s). Floats: a 16-byte load of each but the last (its
// fourth float the next one's x, dropped by the transposes), the last one's 12 bytes alone
template <class S>
inline vec3<Lanes<S>> load_run(const vec3<S>* p) {
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    constexpr int W = k_lanes<S>;
    __m128 b[W];
    ADJ_LANE_UNROLL
    for (int l = 0; l + 1 < W; ++l) b[l] = _mm_loadu_ps(&p[l].x);
    b[W - 1] = _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&p[W - 1].x)),
                             _mm_load_ss(&p[W - 1].z));
    vec3<Lanes<S>> r;
    transpose_blocks(b, r);
    return r;
  }
#endif
  int lane[k_lanes<S>];
  for (int l = 0; l < k_lanes<S>; ++l) lane[l] = l;
  return gather3(p, lane);
}

// the integration's adjoint (kernels.h's ParticleIntegrateAdjoint) for particles p0 .. p0 +
// k_lanes - 1: its operations lane by lane, a kinematic lane's by select; the particles' vec3s
// read by load_run and written by scatter_slots
template <class S>
inline void run_lanes(const ParticleIntegrateAdjoint<S>& k, int p0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = k.a;
  const vec3<L> aq = load_run(a.adj_q_out + p0), av = load_run(a.adj_qd_out + p0);
  const L m = load_lanes(a.m.particle_mass + p0), dt(a.dt);
  const vec3<L> av_total = av + aq * dt;
  scatter_slots<1>(&aq, a.adj_q_in + p0);
  const auto moving = m > L(0);
  const vec3<L> au = av_total * L(S(1) - a.m.particle_damping * a.dt);
  const vec3<L> af = au * (dt / m);
  const vec3<L> aqd_in = select(moving, au, av_total), af_out = select(moving, af, vec3<L>());
  scatter_slots<1>(&aqd_in, a.adj_qd_in + p0);
  scatter_slots<1>(&af_out, a.adj_f + p0);
  if (!any(moving)) return;
  const vec3<L> f = load_run(a.f_total + p0);
  const L gm = load_lanes(a.g.particle_mass + p0);
  const L gm_new = select(moving, gm + -dot(af, f) / m, gm);
  std::memcpy(a.g.particle_mass + p0, &gm_new.v, sizeof gm_new.v);
  // the gravity partials: three a particle, as a vec3 array
  vec3<S>* gg = reinterpret_cast<vec3<S>*>(a.g.gravity + 3 * p0);
  const vec3<L> g = load_run(gg), g_new = select(moving, g + au * dt, g);
  scatter_slots<1>(&g_new, gg);
  if (a.adj_control_f) {
    const vec3<L> c = load_run(a.adj_control_f + p0), c_new = select(moving, c + af, c);
    scatter_slots<1>(&c_new, a.adj_control_f + p0);
  }
}

// dL/d forces on the V vertices of the elements of gather_vertices' lanes, into g. Floats: a
// 16-byte load a vertex (its fourth float the next particle's x, or the pad past the last
// one: the CPU solver's adj_f has a spare vec3, as its slot arrays) and 4x4 transposes
template <int V, class S>
inline void gather_adj_f(const KernelArgs<S>& a, const int* idx, vec3<Lanes<S>>* g) {
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    ADJ_LANE_UNROLL
    for (int k = 0; k < V; ++k) {
      __m128 b[k_lanes<S>];
      ADJ_LANE_UNROLL
      for (int l = 0; l < k_lanes<S>; ++l) b[l] = _mm_loadu_ps(&a.adj_f[idx[V * l + k]].x);
      transpose_blocks(b, g[k]);
    }
    return;
  }
#endif
  for (int k = 0; k < V; ++k) {
    int vk[k_lanes<S>];
    for (int l = 0; l < k_lanes<S>; ++l) vk[l] = idx[V * l + k];
    g[k] = gather3(a.adj_f, vk);
  }
}

// p[l] += x[l] for the k_lanes<S> consecutive scalars from p (each lane's one add)
template <class S>
inline void add_lanes(S* p, const Lanes<S>& x) {
  const Lanes<S> r = load_lanes(p) + x;
  std::memcpy(p, &r.v, sizeof r.v);
}

template <class S>
inline void run_lanes(const TriangleAdjoint<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  const int* idx = reinterpret_cast<const int*>(a.m.tri_indices + e0);
  vec3<L> x[3], v[3], g[3];
  gather_vertices<3>(a, idx, x, v);
  gather_adj_f<3>(a, idx, g);
  // the adjoint functions on the gathered vertices
  vec3<L> aq[3], av[3];
  L mat[3], coef[2];
  triangle_adjoint(tri_eval_lanes(a.m, e0), x, v, g, aq, av, mat);
  if (a.m.tri_lift != S(0) || a.m.tri_drag != S(0)) {
    vec3<L> aq2[3], av2[3];
    aero_adjoint(AeroEval<L>{L(a.m.tri_lift), L(a.m.tri_drag)}, x, v, g, aq2, av2, coef);
    for (int k = 0; k < 3; ++k) aq[k] += aq2[k], av[k] += av2[k];
  } else {
    aero_coef_adjoint(x, v, g, coef);
  }
  add_lanes(a.g.tri_ke + e0, mat[0]);
  add_lanes(a.g.tri_ka + e0, mat[1]);
  add_lanes(a.g.tri_kd + e0, mat[2]);
  add_lanes(a.g.lift + e0, coef[0]);
  add_lanes(a.g.drag + e0, coef[1]);
  scatter_slots<3>(aq, a.adj_q_slot + a.m.tri_slot + 3 * e0);
  scatter_slots<3>(av, a.adj_qd_slot + a.m.tri_slot + 3 * e0);
}

template <class S>
inline void run_lanes(const BendingAdjoint<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  const int* idx = reinterpret_cast<const int*>(a.m.edge_indices + e0);
  vec3<L> x[4], v[4], g[4];
  gather_vertices<4>(a, idx, x, v);
  gather_adj_f<4>(a, idx, g);
  // the adjoint function on the gathered vertices
  vec3<L> aq[4], av[4];
  L coef[2];
  bending_adjoint(bending_eval_lanes(a.m, e0), x, v, g, aq, av, coef);
  add_lanes(a.g.edge_ke + e0, coef[0]);
  scatter_slots<4>(aq, a.adj_q_slot + a.m.edge_slot + 4 * e0);
  scatter_slots<4>(av, a.adj_qd_slot + a.m.edge_slot + 4 * e0);
}

// kernels.h's slot_adjoint on the host, as slot_force_host
#if defined(__SSE2__)
inline void slot_adjoint_block(const KernelArgs<float>& a, int p, __m128& q, __m128& v) {
  auto load = [](const vec3<float>& x) {
    return _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&x.x)), _mm_load_ss(&x.z));
  };
  q = load(a.adj_q_in[p]), v = load(a.adj_qd_in[p]);
  const int* slot = a.m.incidence_slot;
  ADJ_CSR_UNROLL
  for (int k = a.m.incidence_start[p]; k < a.m.incidence_start[p + 1]; ++k) {
    q = _mm_add_ps(q, _mm_loadu_ps(&a.adj_q_slot[slot[k]].x));
    v = _mm_add_ps(v, _mm_loadu_ps(&a.adj_qd_slot[slot[k]].x));
  }
}
#endif
template <class S>
inline void slot_adjoint_host(const KernelArgs<S>& a, int p, vec3<S>& aq, vec3<S>& av) {
#if defined(__SSE2__)
  if constexpr (sizeof(S) == 4) {
    __m128 q, v;
    slot_adjoint_block(a, p, q, v);
    alignas(16) float r[2][4];
    _mm_store_ps(r[0], q);
    _mm_store_ps(r[1], v);
    aq = {r[0][0], r[0][1], r[0][2]}, av = {r[1][0], r[1][1], r[1][2]};
    return;
  }
#endif
  slot_adjoint(a, p, aq, av);
}

#if defined(__SSE2__)
// the first three floats of b to x
inline void store12(__m128 b, vec3<float>* x) {
  _mm_storel_pi(reinterpret_cast<__m64*>(&x->x), b);
  _mm_store_ss(&x->z, _mm_movehl_ps(b, b));
}
#endif

// Dual<Lanes<S>, N> chosen lane by lane (each lane the scalar Dual's side), for the contact
// code's select on dual packs (plane_adjoint_lanes)
template <class S, int N>
inline Dual<Lanes<S>, N> select(const Mask<S>& c, const Dual<Lanes<S>, N>& a, const Dual<Lanes<S>, N>& b) {
  Dual<Lanes<S>, N> r;
  r.v = select(c, a.v, b.v);
  for (int k = 0; k < N; ++k) r.d[k] = select(c, a.d[k], b.d[k]);
  return r;
}
template <class S, int N>
inline vec3<Dual<Lanes<S>, N>> select(const Mask<S>& c, const vec3<Dual<Lanes<S>, N>>& a,
                                      const vec3<Dual<Lanes<S>, N>>& b) {
  return {select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}

// particles p0 .. p0 + k_lanes - 1 (positions x) within their radius of plane s (plane_touches
// on lanes, its operations)
template <class S>
inline Mask<S> plane_touches_lanes(const KernelArgs<S>& a, int p0, int s, const vec3<Lanes<S>>& x) {
  using L = Lanes<S>;
  return dot(x - lift<L>(a.m.shape_pos[s]), lift<L>(a.m.shape_size[s])) < load_lanes(a.m.particle_radius + p0);
}

// particle_gather_adjoint's contact adjoint against plane s for particles p0 .. p0 + k_lanes - 1
// (positions x, velocities v) where `touch`: the vjp of ShapeContactEval::eval_plane on
// Dual<Lanes<S>, 9>, so each lane runs the scalar dual numbers' operations; added to aq, av and
// c (the contact ke, kd, mu gradients) in the scalar order
template <class S>
inline void plane_adjoint_lanes(const KernelArgs<S>& a, int p0, int s, const Mask<S>& touch, const vec3<Lanes<S>>& x,
                                const vec3<Lanes<S>>& v, vec3<Lanes<S>>& aq, vec3<Lanes<S>>& av, Lanes<S>* c) {
  using L = Lanes<S>;
  using D = Dual<L, 9>;
  const L in[9] = {x.x, x.y, x.z, v.x, v.y, v.z, L(a.m.contact_ke), L(a.m.contact_kd), L(a.m.contact_mu)};
  D din[9];
  for (int k = 0; k < 9; ++k) din[k] = D::var(in[k], k);
  const vec3<D> f =
      plane_contact_force(a.m.shape(s), D(load_lanes(a.m.particle_radius + p0)), din, a.m.contact_kf, a.m.contact_eps);
  const vec3<L> ao = load_run(a.adj_f + p0);
  L ai[9];
  for (int k = 0; k < 9; ++k) {
    L sum = L(S(0));
    sum = sum + ao.x * f.x.d[k];
    sum = sum + ao.y * f.y.d[k];
    sum = sum + ao.z * f.z.d[k];
    ai[k] = sum;
  }
  aq = select(touch, aq + vec3<L>(ai[0], ai[1], ai[2]), aq);
  av = select(touch, av + vec3<L>(ai[3], ai[4], ai[5]), av);
  for (int k = 0; k < 3; ++k) c[k] = select(touch, c[k] + ai[6 + k], c[k]);
}

#if defined(ADJ_PACKF)
// ParticleGatherAdjoint's lanes for floats where particles do not collide with each other and
// every collider is a plane: the slot sums (slot_adjoint_block) one particle at a time; with
// no particle of the group touching a plane, they go out as they are (16-byte stores in address
// order, each overwriting the next one's x until that one's store; the last one 12 bytes) and
// the contact gradients get the scalar path's zero adds on lanes; else they are transposed onto
// lanes and each touched plane's adjoint added (plane_adjoint_lanes)
inline void gather_adjoint_planes(const KernelArgs<float>& a, int p0) {
  using L = Lanes<float>;
  constexpr int W = k_lanes<float>;
  int lane[W];
  for (int l = 0; l < W; ++l) lane[l] = l;
  vec3<L> x, v;
  if (a.state_pack) {
    gather_state(a.state_pack + 8 * std::ptrdiff_t(p0), lane, 1, x, v);
  } else {
    x = load_run(a.q + p0);
    v = load_run(a.qd + p0);
  }
  bool touching = false;
  for (int s = 0; s < a.m.shape_count; ++s) touching = touching || any(plane_touches_lanes(a, p0, s, x));
  __m128 q[W], u[W];
  ADJ_LANE_UNROLL
  for (int l = 0; l < W; ++l) slot_adjoint_block(a, p0 + l, q[l], u[l]);
  if (!touching) {
    ADJ_LANE_UNROLL
    for (int l = 0; l + 1 < W; ++l) {
      _mm_storeu_ps(&a.adj_q_in[p0 + l].x, q[l]);
      _mm_storeu_ps(&a.adj_qd_in[p0 + l].x, u[l]);
    }
    store12(q[W - 1], &a.adj_q_in[p0 + W - 1]);
    store12(u[W - 1], &a.adj_qd_in[p0 + W - 1]);
    for (float* g : {a.g.contact_ke, a.g.contact_kd, a.g.contact_mu}) add_lanes(g + p0, L(0.0f));
    return;
  }
  vec3<L> aq, av;
  transpose_blocks(q, aq);
  transpose_blocks(u, av);
  L c[3] = {L(0.0f), L(0.0f), L(0.0f)};
  for (int s = 0; s < a.m.shape_count; ++s) {
    const Mask<float> touch = plane_touches_lanes(a, p0, s, x);
    if (any(touch)) plane_adjoint_lanes(a, p0, s, touch, x, v, aq, av, c);
  }
  scatter_slots<1>(&aq, a.adj_q_in + p0);
  scatter_slots<1>(&av, a.adj_qd_in + p0);
  add_lanes(a.g.contact_ke + p0, c[0]);
  add_lanes(a.g.contact_kd + p0, c[1]);
  add_lanes(a.g.contact_mu + p0, c[2]);
}
#endif

// particles p0 .. p0 + k_lanes - 1: the slot sums (slot_adjoint_host) and kernels.h's
// particle_gather_adjoint (in contact, dual numbers) one at a time, in one item; on lanes
// (gather_adjoint_planes) for floats where particles do not collide with each other and every
// collider is a plane
template <class S>
inline void run_lanes(const ParticleGatherAdjoint<S>& k, int p0) {
  const KernelArgs<S>& a = k.a;
#if defined(ADJ_PACKF)
  if constexpr (sizeof(S) == 4) {
    bool planes = !a.m.particle_contact;
    for (int s = 0; s < a.m.shape_count; ++s) planes = planes && a.m.shape_type[s] == GEOM_PLANE;
    if (planes) return gather_adjoint_planes(a, p0);
  }
#endif
  for (int p = p0; p < p0 + k_lanes<S>; ++p) {
    vec3<S> aq, av;
    slot_adjoint_host(a, p, aq, av);
    particle_gather_adjoint(a, p, aq, av);
  }
}

// ---- the items of a launch ----

// a functor with a lane form: k_lanes elements per call of run_lanes(f, first)
template <class F>
concept LaneKernel = requires(const F& f) {
  run_lanes(f, 0);
};

#if ADJ_SIMD_BYTES == 16 && defined(ADJ_WIDE_LANES)
// the same lane kernels on 32-byte packs (AVX2: 8 floats, 4 doubles) and on 64-byte ones
// (AVX-512: 16 floats, 8 doubles), each built in a translation unit of its own
// (engine/solver/kernels_avx2.cpp, kernels_avx512.cpp) and run where the CPU has it
#define ADJ_WIDE_DECLARE(F)              \
  void run_avx2(const F<float>&, int);   \
  void run_avx2(const F<double>&, int);  \
  void run_avx512(const F<float>&, int); \
  void run_avx512(const F<double>&, int);
ADJ_WIDE_DECLARE(TriangleForward)
ADJ_WIDE_DECLARE(BendingForward)
ADJ_WIDE_DECLARE(TriangleAdjoint)
ADJ_WIDE_DECLARE(BendingAdjoint)
ADJ_WIDE_DECLARE(ParticleForward)
ADJ_WIDE_DECLARE(ParticleIntegrateAdjoint)
ADJ_WIDE_DECLARE(ParticleGatherAdjoint)
#undef ADJ_WIDE_DECLARE
bool cpu_has_avx2_lanes();
bool cpu_has_avx512_lanes();
// pack bytes of the lane kernels: the widest the CPU runs, at most max_bytes (0: no limit);
// 0 = none (max_bytes below 16: every element on its own, as the scalar functors)
inline int widest_lane_bytes(int max_bytes) {
  if (max_bytes > 0 && max_bytes < 16) return 0;  // no packs: one element at a time
  if ((max_bytes == 0 || max_bytes >= 64) && cpu_has_avx512_lanes()) return 64;
  if ((max_bytes == 0 || max_bytes >= 32) && cpu_has_avx2_lanes()) return 32;
  return 16;
}
#else
inline int widest_lane_bytes(int max_bytes) { return max_bytes > 0 && max_bytes < ADJ_SIMD_BYTES ? 0 : ADJ_SIMD_BYTES; }
#endif

// the scalar type of a lane kernel: its KernelArgs'
template <class F>
struct LaneScalar {
  using type = std::remove_cvref_t<decltype(std::declval<F>().a.dt)>;
};

// the host's backward (semi_implicit.cpp) runs a substep's gather and the next substep's (k - 1's)
// integration adjoint as one loop, a barrier and a pass fewer: for each item, the gather's
// particles, then the same particles' integration adjoint, then their k - 1 input state
// packed into `pack` (when set) for k - 1's element adjoints. Per particle it
// is substep_adjoint's order: the integration reads only its own particle's gathered adjoint,
// which the item has just written in full (a group's stores end with its last particle's 12
// bytes); it writes adj_f for k - 1 to an array apart from the gather's, whose contacts read
// neighbours' adj_f; and its pack goes to the other of the two pack arrays
template <class S>
struct GatherThenIntegrate {
  ParticleGatherAdjoint<S> gather;        // substep k
  ParticleIntegrateAdjoint<S> integrate;  // substep k - 1
  S* pack;                                // k - 1's state_pack, or null
};
template <class S>
struct LaneScalar<GatherThenIntegrate<S>> {
  using type = S;
};
template <class S>
inline void pack_integrated(const GatherThenIntegrate<S>& f, int p0, int count) {
  const KernelArgs<S>& a = f.integrate.a;
  if (f.pack) pack_state(a.q + p0, a.qd + p0, count, f.pack + 8 * std::ptrdiff_t(p0));
}
template <class S>
inline void run_lanes(const GatherThenIntegrate<S>& f, int p0) {
  run_lanes(f.gather, p0);
  run_lanes(f.integrate, p0);
  pack_integrated(f, p0, k_lanes<S>);
}
template <class S>
inline void run_tail(const GatherThenIntegrate<S>& f, int p) {
  f.gather(p);
  f.integrate(p);
  pack_integrated(f, p, 1);
}
#if ADJ_SIMD_BYTES == 16 && defined(ADJ_WIDE_LANES)
template <class S>
inline void run_avx2(const GatherThenIntegrate<S>& f, int p0) {
  run_avx2(f.gather, p0);
  run_avx2(f.integrate, p0);
  pack_integrated(f, p0, 32 / int(sizeof(S)));
}
template <class S>
inline void run_avx512(const GatherThenIntegrate<S>& f, int p0) {
  run_avx512(f.gather, p0);
  run_avx512(f.integrate, p0);
  pack_integrated(f, p0, 64 / int(sizeof(S)));
}
#endif

// elements per item of a launch: 1 without a lane form or packs, else the lanes of a
// `bytes`-byte pack (widest_lane_bytes)
template <class F>
inline int item_width(int bytes) {
  if constexpr (LaneKernel<F>) {
    using S = typename LaneScalar<F>::type;
    return bytes > 0 ? bytes / int(sizeof(S)) : 1;
  } else {
    return 1;
  }
}

// items of a launch of n elements at width w: the lane groups, then the remainder one each
inline int item_count(int n, int w) { return n / w + n % w; }

// one element of a launch's scalar remainder: the functor; ParticleForward's also writes the
// next substep's packed state (its lanes write the whole groups'), so that no serial pass
// follows the particle step
template <class F>
inline void run_tail(const F& f, int i) {
  f(i);
}
template <class S>
inline void run_tail(const ParticleForward<S>& f, int p) {
  f(p);
  if (f.a.state_pack_out) pack_state(f.a.q_out + p, f.a.qd_out + p, 1, f.a.state_pack_out + 8 * std::ptrdiff_t(p));
}

template <class F>
inline void run_item(const F& f, int n, int w, int item) {
  if constexpr (LaneKernel<F>) {
    if (w == 1) return run_tail(f, item);
    const int groups = n / w;
    if (item >= groups) return run_tail(f, groups * w + (item - groups));
#if ADJ_SIMD_BYTES == 16 && defined(ADJ_WIDE_LANES)
    using S = typename LaneScalar<F>::type;
    if (w * int(sizeof(S)) == 32) return run_avx2(f, item * w);
    if (w * int(sizeof(S)) == 64) return run_avx512(f, item * w);
#endif
    run_lanes(f, item * w);
  } else {
    f(item);
  }
}

}  // namespace adj
