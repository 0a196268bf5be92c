#pragma once
// `adjoint bench render`: frame times of the renderer, printed as a table.
#include <cstdint>

namespace adj::app {

struct BenchRenderOptions {
  uint32_t frames = 5;
  bool quick = false;  // 10k particles and a 64x64 cloth only (a smoke run)
};

int run_bench_render(const BenchRenderOptions& options);

}  // namespace adj::app
