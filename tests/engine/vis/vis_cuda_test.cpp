// engine/vis on the GPU gives the CPU's bytes (GPU only: exits 77 = skipped without one)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/model/builder.h"
#include "engine/vis/vis.h"
#include "engine/vis/vis_cuda.h"

using namespace adj;

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("vis_cuda_test: no CUDA device: skipped\n");
    return 77;
  }
  ModelBuilder b;
  mat33<float> rot = mat33<float>::from_cols({1, 0, 0}, {0, 0.8f, 0.6f}, {0, -0.6f, 0.8f});
  b.add_cloth_grid({0, 1, 0}, rot, 32, 24, 0.05f, 0.1f, {}, ClothMaterial<float>{});
  b.add_soft_grid({0, 0, 0}, 3, 2, 2, 0.2f, {}, SoftMaterial<float>{});
  Model m = *b.finalize();
  State s = m.make_state();
  for (int i = 0; i < m.particle_count(); ++i) s.particle_q[i].y += 0.01f * float(i % 7);  // not flat
  const int n = m.particle_count();
  vis::Surface surf = vis::extract_surface(m, 0, m.tri_count(), 0, m.tet_count());

  std::vector<float> cpu_p(3 * n), cpu_n(3 * n, 0.0f);
  vis::write_positions(s, 0, n, cpu_p.data());
  vis::write_normals(s, surf, cpu_n.data());

  vec3<float>* dq = nullptr;
  float *dp = nullptr, *dn = nullptr;
  cudaMalloc(&dq, n * sizeof(vec3<float>));
  cudaMalloc(&dp, 3 * n * sizeof(float));
  cudaMalloc(&dn, 3 * n * sizeof(float));
  cudaMemcpy(dq, s.particle_q.data(), n * sizeof(vec3<float>), cudaMemcpyHostToDevice);
  cudaMemset(dn, 0, 3 * n * sizeof(float));
  vis::cuda::DeviceSurface ds;
  if (!vis::cuda::upload(surf, ds) || !vis::cuda::write_positions(dq, 0, n, dp) ||
      !vis::cuda::write_normals(dq, ds, dn)) {
    std::printf("vis_cuda_test: a launch failed\n");
    return 1;
  }
  std::vector<float> gpu_p(3 * n), gpu_n(3 * n);
  cudaMemcpy(gpu_p.data(), dp, 3 * n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(gpu_n.data(), dn, 3 * n * sizeof(float), cudaMemcpyDeviceToHost);
  vis::cuda::release(ds);
  cudaFree(dq);
  cudaFree(dp);
  cudaFree(dn);

  if (std::memcmp(cpu_p.data(), gpu_p.data(), cpu_p.size() * 4) != 0) {
    std::printf("vis_cuda_test: positions differ\n");
    return 1;
  }
  // normals: the same sums in the same order; allow rounding of fused multiply-adds
  for (int i = 0; i < 3 * n; ++i)
    if (std::abs(cpu_n[i] - gpu_n[i]) > 1e-5f) {
      std::printf("vis_cuda_test: normal %d differs: cpu %g gpu %g\n", i, cpu_n[i], gpu_n[i]);
      return 1;
    }
  std::printf("vis_cuda_test: ok (%d particles, %d surface triangles)\n", n, surf.triangle_count());
  return 0;
}
