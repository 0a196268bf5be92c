// adjoint_mpi_bench: the cost of the exchange the trainers use over MPI ranks (an allgather:
// every rank receives every rank's bytes), measured on this machine. Under mpirun:
//
//   mpirun -np 2 adjoint_mpi_bench [REPEATS]
//
// prints, on rank 0, one row per message size: bytes sent per rank, the mean and the fastest
// time of one allgather, and the bytes rank 0 received per second in the fastest. Small messages give the latency,
// large ones the bandwidth; docs/benchmarks.md's scaling model is built from them. `--smoke` runs one small exchange
// (ctest).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/dist/communicator.h"

int main(int argc, char** argv) {
  auto comm = adj::dist::make_communicator(&argc, &argv);
  const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
  const int repeats = smoke ? 2 : argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  const std::vector<long> sizes =
      smoke ? std::vector<long>{1024} : std::vector<long>{64, 4096, 65536, 262144, 1048576, 4194304, 16777216};
  const bool lead = comm->rank() == 0;
  if (lead) {
    std::printf("allgather over %d rank(s) (%s), %d repeats each\n\n", comm->size(), comm->kind(), repeats);
    std::printf(
        "| bytes per rank | ms per allgather (mean) | ms (fastest) | received by rank 0, fastest [MB/s] |\n"
        "|---:|---:|---:|---:|\n");
  }
  for (long n : sizes) {
    adj::dist::Bytes mine(static_cast<std::size_t>(n), std::uint8_t(comm->rank()));
    std::vector<adj::dist::Bytes> parts;
    if (!comm->allgather(mine, parts)) return 1;  // warm-up (connections, buffers)
    double best = 1e30, sum = 0;                  // the fastest exchange: the link's own speed, whatever else runs
    for (int k = 0; k < repeats; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      adj::Status st = comm->allgather(mine, parts);
      if (!st) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
      if (parts.size() != std::size_t(comm->size()) || parts.back().size() != mine.size()) return 1;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s), sum += s;
    }
    const double received = double(n) * (comm->size() - 1);
    if (lead) std::printf("| %ld | %.4f | %.4f | %.0f |\n", n, 1e3 * sum / repeats, 1e3 * best, received / best / 1e6);
  }
  return 0;
}
