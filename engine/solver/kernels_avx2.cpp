// engine/solver/kernels_simd.h's lane kernels on 32-byte packs (8 floats, 4 doubles), compiled
// with -mavx2 (no FMA: each lane still computes the scalar code's IEEE operations, so results
// equal the SSE2 and scalar paths bit for bit) and run only where the CPU has AVX2
// (cpu_has_wide_lanes). Everything the headers define is compiled here inside the namespace
// adj_avx2 (the macro below), so no inline function built with AVX2 instructions can stand in
// for the baseline build's copy of the same function elsewhere in the program.
#include <immintrin.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define ADJ_SIMD_BYTES 32
#define adj adj_avx2
#include "engine/solver/kernels_simd.h"
#undef adj

namespace adj {

template <class S>
struct TriangleForward;
template <class S>
struct BendingForward;
template <class S>
struct TriangleAdjoint;
template <class S>
struct BendingAdjoint;

// the functors are the same token sequences in both namespaces (one layout)
#define ADJ_WIDE(F, S) \
  void run_wide(const F<S>& f, int e0) { adj_avx2::run_lanes(reinterpret_cast<const adj_avx2::F<S>&>(f), e0); }
ADJ_WIDE(TriangleForward, float)
ADJ_WIDE(BendingForward, float)
ADJ_WIDE(TriangleAdjoint, float)
ADJ_WIDE(BendingAdjoint, float)
ADJ_WIDE(TriangleForward, double)
ADJ_WIDE(BendingForward, double)
ADJ_WIDE(TriangleAdjoint, double)
ADJ_WIDE(BendingAdjoint, double)
#undef ADJ_WIDE

bool cpu_has_wide_lanes() { return __builtin_cpu_supports("avx2"); }

}  // namespace adj
