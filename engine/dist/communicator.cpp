#include "engine/dist/communicator.h"

namespace adj::dist {

Status LocalCommunicator::allgather(const Bytes& mine, std::vector<Bytes>& parts) {
  parts.assign(1, mine);
  return Status::ok();
}

Status compare_fingerprints(Communicator& comm, std::uint64_t fingerprint, std::string& differ, std::uint64_t& first) {
  Bytes mine;
  ByteWriter(mine).put(fingerprint);
  std::vector<Bytes> parts;
  if (Status st = comm.allgather(mine, parts); !st) return st;
  std::vector<std::uint64_t> fp(parts.size());
  for (std::size_t r = 0; r < parts.size(); ++r) ByteReader(parts[r]).get(fp[r]);
  differ.clear();
  first = fp.empty() ? fingerprint : fp[0];
  for (std::size_t r = 1; r < fp.size(); ++r)
    if (fp[r] != fp[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  return Status::ok();
}

#ifndef ADJ_HAS_MPI
std::unique_ptr<Communicator> make_communicator(int*, char***) { return std::make_unique<LocalCommunicator>(); }
bool built_with_mpi() { return false; }
#endif

}  // namespace adj::dist
