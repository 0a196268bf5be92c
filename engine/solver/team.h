// how the particle solver's substep loops run on the host: one thread (SerialExec) or an OpenMP
// team (TeamExec) that runs a whole step in one parallel region; run_chosen picks between them by
// measured time (TeamChoice). Which thread runs an element never changes a result: each element
// and particle writes its own outputs. Host only.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "engine/core/float_env.h"
#include "engine/core/parallel.h"
#include "engine/solver/kernels_simd.h"

namespace adj {

// the loops of a substep on one thread; elements with a lane form run k_lanes at a time
// (engine/solver/kernels_simd.h: the same numbers as one at a time)
struct SerialExec {
  int lane_bytes;  // SIMD pack bytes of the lane kernels (kernels_simd.h's widest_lane_bytes)
  template <class F>
  void launch(int n, const F& f) const {
    const int w = item_width<F>(lane_bytes);
    for (int i = 0, items = item_count(n, w); i < items; ++i) run_item(f, n, w, i);
  }
  template <class F>
  void launch_nowait(int n, const F& f) const {
    launch(n, f);
  }
  template <class F>
  void single(const F& f) const {
    f();
  }
};

// the loops of a step's substeps inside one OpenMP team (one parallel region a step, not one a
// substep or a loop): each loop split into equal shares of lane groups, ending in the team's
// barrier (launch) or not (launch_nowait: the next loop does not read what it writes); single:
// one thread, then the barrier.
struct TeamExec {
  int lane_bytes;
  // this thread's items of a launch of n elements at width w: an equal share of the lane groups,
  // the last thread also the scalar remainder (a static schedule of groups + remainder items gave
  // the first of two threads 35 of the 32x32 cloth's 68 particle groups and the other 33)
  static void range(int n, int w, int& begin, int& end) {
    const int threads = omp_get_num_threads(), t = omp_get_thread_num(), groups = n / w;
    begin = int(std::int64_t(groups) * t / threads);
    end = t == threads - 1 ? item_count(n, w) : int(std::int64_t(groups) * (t + 1) / threads);
  }
  template <class F>
  void launch_nowait(int n, const F& f) const {
    const int w = item_width<F>(lane_bytes);
    int begin, end;
    range(n, w, begin, end);
    for (int i = begin; i < end; ++i) run_item(f, n, w, i);
  }
  template <class F>
  void launch(int n, const F& f) const {
    launch_nowait(n, f);
#pragma omp barrier
  }
  template <class F>
  void single(const F& f) const {
#pragma omp single
    f();
  }
};

// threads of the particle stages: thread_count, 0 = OpenMP's default
inline int team_size(int thread_count) { return thread_count > 0 ? thread_count : std::max(1, omp_get_max_threads()); }

// one thread or the team for a step, by measured time: where other processes keep the cores
// busy, a team's barriers wait for a descheduled thread and can cost far more than the work they
// split (measured: a 32x32 cloth 25x slower on 2 threads at load 10). Each way keeps the lower
// envelope of its times (the fastest recent step, drifting up 5% a sample, so one preempted
// step does not decide); each runs twice first, as the first of each runs on cold caches. While
// one thread is faster the team is retried after 8, 16, ... 4096 steps; while the team is faster
// it runs every step (its own times rise when it stops paying; retrying one thread cost 2% of a
// 32x32 cloth's 2-thread time). Results do not depend on the choice.
struct TeamChoice {
  double ms[2] = {0, 0};  // [0] one thread, [1] the team
  int calls = 0, next_probe = 8, probe_gap = 8;

  bool best() const { return ms[1] < ms[0]; }
  bool pick() {
    if (calls < 4) return calls % 2 == 1;  // two of each first: the first of each on cold caches
    if (best()) {
      next_probe = calls + probe_gap;  // should one thread take over, its first retry of the team
      return true;                     // comes probe_gap steps later
    }
    if (calls < next_probe) return false;
    next_probe = calls + probe_gap;
    probe_gap = std::min(2 * probe_gap, 4096);
    return true;
  }
  void note(bool team, double t) {
    double& m = ms[team ? 1 : 0];
    m = m == 0 ? t : std::min(t, 1.05 * m);
    ++calls;
  }
};

// body(exec) on one thread, or on each thread of a team of `threads` (work: the substep's
// particles + elements; below k_team_min one thread)
// body(SerialExec) on this thread with subnormals flushed (engine/core/float_env.h): how the
// particle solver's loops run outside a team (a team's threads each take the flush themselves)
template <class F>
void run_serial(int lane_bytes, const F& body) {
  const FlushSubnormals flush;
  body(SerialExec{lane_bytes});
}

template <class F>
void run_chosen(int threads, int lane_bytes, int work, TeamChoice& choice, const F& body) {
  if (threads <= 1 || work < k_team_min) return run_serial(lane_bytes, body);
  bool team = choice.pick();
  auto t0 = std::chrono::steady_clock::now();
  if (team) {
#pragma omp parallel num_threads(threads)
    {
      // on each thread after the fork: a thread starts in its creator's mode, so a pool forked
      // under the flush would keep it outside our steps
      const FlushSubnormals flush;
      // a smaller team than asked (a thread limit) would leave a share unrun: its first thread
      // runs the step alone
      if (omp_get_num_threads() == threads)
        body(TeamExec{lane_bytes});
      else if (omp_get_thread_num() == 0)
        body(SerialExec{lane_bytes});
    }
  } else {
    run_serial(lane_bytes, body);
  }
  choice.note(team, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace adj
