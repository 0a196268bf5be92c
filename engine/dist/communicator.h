// The communicator a training run uses (DESIGN.md: "dist/"): one process, or the ranks of an
// MPI job. A trainer that holds one simulates its rank's contiguous block of the worlds and
// combines what every world contributed with allgather: each rank receives every rank's bytes
// in rank order, and so every rank sums the worlds in world order itself. The results are then
// the same bits for any number of ranks (DESIGN.md, principle 4), which no all-reduce (whose
// summation order depends on the rank count) would give.
//
//   auto comm = dist::make_communicator(argc, argv);  // MPI under mpirun (ADJ_MPI), else one process
//   dist::Block mine = dist::block(world_count, comm->rank(), comm->size());
//   std::vector<dist::Bytes> parts;
//   comm->allgather(my_bytes, parts);  // parts[r]: rank r's bytes, on every rank
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/status.h"

namespace adj::dist {

using Bytes = std::vector<std::uint8_t>;

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* kind() const = 0;  // "one process" or "MPI"
  // every rank's `mine` (sizes may differ), in rank order, on every rank. Errors name the rank
  virtual Status allgather(const Bytes& mine, std::vector<Bytes>& parts) = 0;
  // root's bytes on every rank (the others' are replaced)
  virtual Status broadcast(Bytes& bytes, int root) = 0;
  // end every rank now with `code` (a rank that fails alone would leave the others waiting)
  virtual void abort(int code) = 0;
  // wall time spent inside communication calls so far [s], and the bytes this rank received
  double seconds() const { return seconds_; }
  long long bytes_received() const { return bytes_received_; }

 protected:
  double seconds_ = 0;
  long long bytes_received_ = 0;
};

// rank 0 of 1: allgather and broadcast copy
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* kind() const override { return "one process"; }
  Status allgather(const Bytes& mine, std::vector<Bytes>& parts) override;
  Status broadcast(Bytes&, int) override { return Status::ok(); }
  void abort(int code) override { std::exit(code); }
};

// MPI_COMM_WORLD when the program was built with MPI (ADJ_MPI) and started by mpirun (its
// environment names a rank); otherwise one process, without touching MPI. The MPI one calls
// MPI_Init here and MPI_Finalize when destroyed; its calls return errors (MPI_ERRORS_RETURN)
// that name the rank instead of aborting silently.
std::unique_ptr<Communicator> make_communicator(int* argc, char*** argv);
bool built_with_mpi();

// rank r's contiguous block [begin, end) of `count` worlds; the first count % size ranks get one more
struct Block {
  int begin = 0, end = 0;
  int count() const { return end - begin; }
};
inline Block block(int count, int rank, int size) {
  const int base = count / size, extra = count % size;
  const int begin = rank * base + (rank < extra ? rank : extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

// 64-bit FNV-1a of bytes (fingerprints of parameters across ranks, checkpoint arrays)
inline std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::size_t k = 0; k < n; ++k) h = (h ^ p[k]) * 0x100000001b3ull;
  return h;
}

// every rank's fingerprint of its replicated parameters compared with rank 0's (collective);
// an error when one differs: "<after>: the ranks' parameters differ: rank(s) 2 disagree with
// rank 0 (...)", `after` saying when ("SHAC, after 20 windows")
Status compare_fingerprints(Communicator& comm, std::uint64_t fingerprint, const std::string& after);

// this rank's block of `count` items (dist::block), `width` values each, in `values`: on return
// every block's, in rank order (= item order) on every rank. Errors name the rank whose part
// is malformed, and `what` the items
Status allgather_blocks(Communicator& comm, std::vector<double>& values, int count, int width, const char* what);

// plain values and vectors of them appended to / read from bytes, in the host's byte order
// (every rank of a job runs on the same kind of machine)
class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(std::uint64_t(v.size()));
    const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
    out_.insert(out_.end(), p, p + v.size() * sizeof(T));
  }
  void put_string(const std::string& s) {
    put(std::uint64_t(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  Bytes& out_;
};

class ByteReader {
 public:
  explicit ByteReader(const Bytes& in) : in_(in) {}
  template <class T>
  bool get(T& v) {
    if (pos_ + sizeof(T) > in_.size()) return false;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  template <class T>
  bool get_vector(std::vector<T>& v) {
    std::uint64_t n = 0;
    if (!get(n) || n > (in_.size() - pos_) / sizeof(T)) return false;
    v.resize(std::size_t(n));
    if (n) std::memcpy(v.data(), in_.data() + pos_, std::size_t(n) * sizeof(T));
    pos_ += std::size_t(n) * sizeof(T);
    return true;
  }
  bool get_string(std::string& s) {
    std::uint64_t n = 0;
    if (!get(n) || n > in_.size() - pos_) return false;
    s.assign(reinterpret_cast<const char*>(in_.data() + pos_), std::size_t(n));
    pos_ += std::size_t(n);
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  const Bytes& in_;
  std::size_t pos_ = 0;
};

}  // namespace adj::dist
