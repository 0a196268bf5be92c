#include "engine/dist/communicator.h"

#include <cstdio>

namespace adj::dist {

Status LocalCommunicator::allgather(const Bytes& mine, std::vector<Bytes>& parts) {
  parts.assign(1, mine);
  return Status::ok();
}

Status compare_fingerprints(Communicator& comm, std::uint64_t fingerprint, const std::string& after) {
  Bytes mine;
  ByteWriter(mine).put(fingerprint);
  std::vector<Bytes> parts;
  if (Status st = comm.allgather(mine, parts); !st) return st;
  std::vector<std::uint64_t> fp(parts.size());
  for (std::size_t r = 0; r < parts.size(); ++r) ByteReader(parts[r]).get(fp[r]);
  std::string differ;
  for (std::size_t r = 1; r < fp.size(); ++r)
    if (fp[r] != fp[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (differ.empty()) return Status::ok();
  char text[64];
  std::snprintf(text, sizeof text, "rank 0 has %016llx", static_cast<unsigned long long>(fp[0]));
  return Status::error(after + ": the ranks' parameters differ: rank(s) " + differ + " disagree with rank 0 (" + text +
                       "); a rank computed different bits (another build, machine or library?)");
}

Status allgather_blocks(Communicator& comm, std::vector<double>& values, int count, int width, const char* what) {
  if (comm.size() == 1) return Status::ok();
  Bytes mine;
  ByteWriter(mine).put_vector(values);
  std::vector<Bytes> parts;
  if (Status st = comm.allgather(mine, parts); !st) return st;
  values.clear();
  std::vector<double> part;
  for (int r = 0; r < int(parts.size()); ++r) {
    const Block b = block(count, r, int(parts.size()));
    if (!ByteReader(parts[std::size_t(r)]).get_vector(part) || part.size() != std::size_t(b.count()) * width)
      return Status::error("rank " + std::to_string(r) + "'s " + what + " arrived malformed");
    values.insert(values.end(), part.begin(), part.end());
  }
  return Status::ok();
}

#ifndef ADJ_HAS_MPI
std::unique_ptr<Communicator> make_communicator(int*, char***) { return std::make_unique<LocalCommunicator>(); }
bool built_with_mpi() { return false; }
#endif

}  // namespace adj::dist
