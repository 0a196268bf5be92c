// adjoint_mpi_bench: the cost of the exchange the trainers use over MPI ranks (an allgather:
// every rank receives every rank's bytes), measured on this machine. Under mpirun:
//
//   mpirun -np 2 adjoint_mpi_bench [REPEATS]
//
// prints, on rank 0, one row per message size: bytes sent per rank, the time of one
// allgather and the bytes rank 0 received per second. Small messages give the latency, large
// ones the bandwidth; docs/benchmarks.md's scaling model is built from them. `--smoke` runs
// one small exchange (ctest).
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
    std::printf("| bytes per rank | ms per allgather | received by rank 0 [MB/s] |\n|---:|---:|---:|\n");
  }
  for (long n : sizes) {
    adj::dist::Bytes mine(static_cast<std::size_t>(n), std::uint8_t(comm->rank()));
    std::vector<adj::dist::Bytes> parts;
    if (!comm->allgather(mine, parts)) return 1;  // warm-up (connections, buffers)
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < repeats; ++k) {
      adj::Status st = comm->allgather(mine, parts);
      if (!st) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
      if (parts.size() != std::size_t(comm->size()) || parts.back().size() != mine.size()) return 1;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
    const double received = double(n) * (comm->size() - 1);
    if (lead) std::printf("| %ld | %.4f | %.0f |\n", n, 1e3 * s, received / s / 1e6);
  }
  return 0;
}
