#pragma once
// `adjoint bench gpu`: CUDA backend numbers as tables (exit 77 = skipped: no CUDA device)
#include <cstdint>

namespace adj::app {

struct BenchGpuOptions {
  int steps = 60;           // rollout length for the engine table
  int reps = 3;             // timed repetitions (best is printed)
  int frames = 100;         // timed frames per sim + render case
  bool quick = false;       // 64x64 cloth and 20k particles (a smoke run)
  bool validation = false;  // Vulkan validation on the render cases (errors fail the run)
};

int run_bench_gpu(const BenchGpuOptions& options);

}  // namespace adj::app
