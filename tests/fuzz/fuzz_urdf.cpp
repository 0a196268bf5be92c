// Fuzz target: a URDF robot (engine/io/urdf.h) imported into a RigidBuilder and finalized
// to a RigidModel, as a scene's "urdf" object is. Mesh filenames resolve beside the assets'
// robots (ADJ_FUZZ_ROBOT_DIR), so the seeds' meshes load.
#include "engine/model/rigid_builder.h"
#include "engine/io/urdf.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj;
  const std::string source = std::string(ADJ_FUZZ_ROBOT_DIR) + "/fuzz.urdf";
  RigidBuilder b;
  auto r = rigid_import_urdf_string(std::string(reinterpret_cast<const char*>(data), size), source, b);
  if (!r) {
    fuzz::require_names(r.status().message(), source);
    return 0;
  }
  auto m = b.finalize<double>();
  if (!m && m.status().message().empty()) std::abort();
  return 0;
}
