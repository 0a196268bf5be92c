// Fuzz target: a training checkpoint's bytes (engine/optim/checkpoint.h: SHAC's and PPO's
// `--checkpoint-dir`, `--resume`; a file a user copies between machines). The rules: no crash,
// no exception; a refusal names the file; what decodes encodes again to bytes that decode to the
// same arrays and header.
#include <cstdio>
#include <cstdlib>

#include "engine/optim/checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj::optim;
  const std::vector<std::uint8_t> bytes(data, data + size);
  auto ck = decode_checkpoint(bytes, "fuzz.adjck");
  if (!ck) {
    adj::fuzz::require_names(ck.status().message(), "fuzz.adjck");
    return 0;
  }
  auto back = decode_checkpoint(encode_checkpoint(*ck), "again.adjck");
  if (!back || back->header != ck->header || back->arrays.size() != ck->arrays.size()) {
    std::fprintf(stderr, "fuzz_checkpoint: a decoded checkpoint does not encode to itself\n");
    std::abort();
  }
  for (const auto& [name, a] : ck->arrays) {
    auto it = back->arrays.find(name);
    if (it == back->arrays.end() || it->second.type != a.type || it->second.bytes != a.bytes) {
      std::fprintf(stderr, "fuzz_checkpoint: array %s does not encode to itself\n", name.c_str());
      std::abort();
    }
  }
  return 0;
}
