// parallel loops over [0, n): OpenMP with a static schedule, so each index always runs
// the same code on the same data; results never depend on the thread count
#pragma once

namespace adj {

// loops shorter than this run serially: an element costs tens of nanoseconds, a parallel
// region microseconds, and on a loaded machine spinning OpenMP threads made a 169-particle
// cloth 200x slower (measured: 63 vs 17,000 substeps/s on 2 busy cores)
inline constexpr int k_parallel_min = 4096;

// the particle solver runs a whole substep in one parallel region (one team, a barrier between
// its loops), so the bar is on the substep's particles + elements together: a 16x16 cloth
// (~1,500) runs serially, a 32x32 (~6,100) on the team
inline constexpr int k_team_min = 4096;

// thread_count 0 = OpenMP's default
template <class F>
inline void parallel_for(int n, int thread_count, const F& f) {
  if (thread_count == 1 || n < k_parallel_min) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  if (thread_count > 0) {
#pragma omp parallel for schedule(static) num_threads(thread_count)
    for (int i = 0; i < n; ++i) f(i);
  } else {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) f(i);
  }
}

}  // namespace adj
