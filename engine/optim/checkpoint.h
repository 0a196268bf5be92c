// A training run's checkpoint: a JSON header (what was trained, scalars, random engines' states)
// and named arrays of float, double or uint64 values stored raw after it, little-endian, so
// every value comes back bit for bit. One file:
//
//   ADJOINT-CHECKPOINT 1\n
//   <header length in bytes>\n
//   <header JSON: {"run": {...}, "arrays": [{"name", "type", "count", "fnv1a"}, ...], ...}>
//   <the arrays' bytes, in the header's order>
//
// Each array carries its FNV-1a hash, so a truncated or altered file is refused. Written
// atomically: a temporary file in the same folder, fsync, rename, fsync of the folder; a
// crash leaves the old checkpoint or the new one, never half of one.
//
//   optim::Checkpoint ck;
//   ck.header["run"] = {{"scene", "ant"}, {"task", "run"}};
//   ck.put("actor.w", weights);                        // float, double or uint64 vectors
//   write_checkpoint(ck, dir + "/checkpoint.adjck");
//   auto back = read_checkpoint(dir + "/checkpoint.adjck");
//   Status st = back->expect_run("scene", "ant");      // "FILE: the checkpoint is of scene ..."
//   st = back->get("actor.w", weights, weights.size()); // names the file, the array, the count
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace adj::optim {

struct Checkpoint {
  nlohmann::json header = nlohmann::json::object();  // "run": what was trained; the rest: the trainer's
  std::string file;                                  // where it was read from (messages)

  void put(const std::string& name, const std::vector<float>& v) { put_raw(name, "f32", v.data(), v.size(), 4); }
  void put(const std::string& name, const std::vector<double>& v) { put_raw(name, "f64", v.data(), v.size(), 8); }
  void put(const std::string& name, const std::vector<std::uint64_t>& v) {
    put_raw(name, "u64", v.data(), v.size(), 8);
  }
  // the array `name`; with `count` >= 0 it must hold that many values. Errors name the file,
  // the array and what differs (a missing array, another type or length)
  Status get(const std::string& name, std::vector<float>& v, long long count = -1) const;
  Status get(const std::string& name, std::vector<double>& v, long long count = -1) const;
  Status get(const std::string& name, std::vector<std::uint64_t>& v, long long count = -1) const;
  bool has(const std::string& name) const { return arrays.count(name) != 0; }
  // header["run"][key] must equal `value` (this run's); the error names the file and both values
  Status expect_run(const std::string& key, const nlohmann::json& value) const;
  // "FILE: " + what (the messages of the trainer's checks)
  Status error(const std::string& what) const;

  struct Array {
    std::string type;  // "f32", "f64", "u64"
    std::size_t count = 0;
    std::vector<std::uint8_t> bytes;
  };
  std::map<std::string, Array> arrays;

 private:
  void put_raw(const std::string& name, const char* type, const void* data, std::size_t count, std::size_t size);
  template <class T>
  Status get_raw(const std::string& name, const char* type, std::vector<T>& v, long long count) const;
};

// the file's bytes, and back; decode's errors name `file` (truncated, altered, not a checkpoint)
std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& ck);
Result<Checkpoint> decode_checkpoint(const std::vector<std::uint8_t>& bytes, const std::string& file);
// atomic write (see above); errors name the path and the system's reason
Status write_checkpoint(const Checkpoint& ck, const std::string& path);
Result<Checkpoint> read_checkpoint(const std::string& path);
Result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path);

}  // namespace adj::optim
