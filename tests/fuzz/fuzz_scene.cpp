// Fuzz target: a scene file (engine/scene/scene_json.h) read and compiled to a Model
// (engine/scene/compile.h), as the editor and `adjoint run` open one. Robot and mesh files
// it names are looked up beside the assets' scenes (ADJ_FUZZ_SCENE_DIR), so the seeds' robots
// load. The limits are smaller than a user's so that one input stays within the 1 s budget
// the fuzzer allows; the checks they guard are the same.
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj;
  const std::string source = (fuzz::scratch_dir() / "scene.json").string();
  scene::LoadLimits load;
  load.max_grid_cells = 1024;
  load.max_list = 2048;
  load.max_horizon = 10'000;
  load.max_substeps = 100;
  auto doc = scene::parse_scene(std::string(reinterpret_cast<const char*>(data), size), source, load);
  if (!doc) {
    fuzz::require_names(doc.status().message(), source);
    return 0;
  }
  scene::CompileLimits limits;
  limits.max_particles = 8192;
  limits.max_elements = 32768;
  auto compiled = scene::compile<float>(doc.value(), ADJ_FUZZ_SCENE_DIR, limits);
  if (!compiled && compiled.status().message().empty()) {
    std::fprintf(stderr, "fuzz: compile failed without a message\n");
    std::abort();
  }
  return 0;
}
