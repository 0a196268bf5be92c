// the cloth's lane kernels on AVX-512's 64-byte packs (engine/solver/kernels_wide.inc)
#define ADJ_SIMD_BYTES 64
#define ADJ_WIDE_NS adj_avx512
#define ADJ_WIDE_RUN run_avx512
#include "engine/solver/kernels_wide.inc"

namespace adj {
bool cpu_has_avx512_lanes();
bool cpu_has_avx512_lanes() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}
}  // namespace adj
