// the host's floating-point environment inside a simulation step: subnormal numbers (below
// 1.2e-38 in float, 2.2e-308 in double) flushed to zero, as results (FTZ) and as inputs (DAZ).
// On x86 an operation that makes or reads a subnormal takes a microcode assist of ~100+ cycles,
// and a cloth near rest makes them all the time (products of near-zero strains, bending angles
// and velocities): on the 32x32 benchmark cloth (AVX-512 VM) they cost 8% of a forward step and
// 13% of forward + backward. A subnormal is physically zero and below every tolerance we test; the
// flush is deterministic and the same on every thread and SIMD width, so results stay
// bit-identical run to run and across thread counts. Host only; elsewhere than x86 a no-op. The
// CUDA kernels keep subnormals (nvcc's default); CPU-vs-CUDA parity is held to tolerances.
#pragma once

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace adj {

// FTZ and DAZ on for this thread while in scope; the caller's mode restored after
class FlushSubnormals {
 public:
#if defined(__SSE2__) && !defined(__CUDACC__)
  static constexpr unsigned k_ftz_daz = 0x8040;  // MXCSR bits 15 (flush to zero) and 6 (denormals are zero)
  FlushSubnormals() : saved_(_mm_getcsr()) {
    if ((saved_ & k_ftz_daz) != k_ftz_daz) _mm_setcsr(saved_ | k_ftz_daz);
  }
  ~FlushSubnormals() {
    if ((saved_ & k_ftz_daz) != k_ftz_daz) _mm_setcsr(saved_);
  }
#else
  FlushSubnormals() = default;
#endif
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

#if defined(__SSE2__) && !defined(__CUDACC__)
 private:
  unsigned saved_;
#endif
};

}  // namespace adj
