// Fuzz target: an MJCF model (engine/io/mjcf.h) imported into a RigidBuilder and finalized
// to a RigidModel. The input is the main file, written to the scratch folder; <include> and
// mesh files resolve there too.
#include "engine/io/mjcf.h"
#include "engine/model/rigid_builder.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj;
  const std::string path = fuzz::write_input(data, size, "model.xml");
  RigidBuilder b;
  auto r = rigid_import_mjcf(path, b);
  if (!r) {
    fuzz::require_names(r.status().message(), path);
    return 0;
  }
  auto m = b.finalize<double>();
  if (!m && m.status().message().empty()) std::abort();
  return 0;
}
