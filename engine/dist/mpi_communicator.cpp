// the MPI communicator (built with ADJ_MPI): MPI_COMM_WORLD, errors returned, not fatal
#include <mpi.h>

#include <chrono>
#include <cstdlib>

#include "engine/dist/communicator.h"

namespace adj::dist {

namespace {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int* argc, char*** argv) {
    MPI_Init(argc, argv);
    // a failing call (a rank that died, a broken link) returns its code: the message names us
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* kind() const override { return "MPI"; }
  void abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

  Status allgather(const Bytes& mine, std::vector<Bytes>& parts) override {
    const auto t0 = std::chrono::steady_clock::now();
    if (mine.size() > 0x7fffffffu) return fail("allgather", MPI_ERR_COUNT, "more than 2 GiB from one rank");
    int n = int(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    if (int rc = MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD); rc != MPI_SUCCESS)
      return fail("allgather (sizes)", rc);
    long long total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = int(total), total += counts[r];
    if (total > 0x7fffffffll) return fail("allgather", MPI_ERR_COUNT, "more than 2 GiB in all");
    Bytes all(std::size_t(total) + 1);
    if (int rc = MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
                                MPI_COMM_WORLD);
        rc != MPI_SUCCESS)
      return fail("allgather", rc);
    parts.resize(std::size_t(size_));
    for (int r = 0; r < size_; ++r) parts[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + counts[r]);
    bytes_received_ += total - n;
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return Status::ok();
  }

  Status broadcast(Bytes& bytes, int root) override {
    const auto t0 = std::chrono::steady_clock::now();
    unsigned long long n = bytes.size();
    if (int rc = MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD); rc != MPI_SUCCESS)
      return fail("broadcast (size)", rc);
    if (n > 0x7fffffffull) return fail("broadcast", MPI_ERR_COUNT, "more than 2 GiB");
    bytes.resize(std::size_t(n));
    if (int rc = MPI_Bcast(bytes.data(), int(n), MPI_BYTE, root, MPI_COMM_WORLD); rc != MPI_SUCCESS)
      return fail("broadcast", rc);
    if (rank_ != root) bytes_received_ += (long long)n;
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return Status::ok();
  }

 private:
  Status fail(const char* what, int rc, const char* why = nullptr) const {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return Status::error("MPI rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + what +
                         " failed: " + (why ? why : text) + " (did another rank stop?)");
  }
  int rank_ = 0, size_ = 1;
};

// mpirun (OpenMPI, MPICH/Hydra, PMIx launchers) names the rank in the environment; a plain
// start does not, and then MPI is left alone (no singleton start-up)
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

std::unique_ptr<Communicator> make_communicator(int* argc, char*** argv) {
  if (!launched_by_mpi()) return std::make_unique<LocalCommunicator>();
  return std::make_unique<MpiCommunicator>(argc, argv);
}

bool built_with_mpi() { return true; }

}  // namespace adj::dist
