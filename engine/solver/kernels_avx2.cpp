// the cloth's lane kernels on AVX2's 32-byte packs (engine/solver/kernels_wide.inc)
#define ADJ_SIMD_BYTES 32
#define ADJ_WIDE_NS adj_avx2
#define ADJ_WIDE_RUN run_avx2
#include "engine/solver/kernels_wide.inc"

namespace adj {
bool cpu_has_avx2_lanes();
bool cpu_has_avx2_lanes() { return __builtin_cpu_supports("avx2"); }
}  // namespace adj
