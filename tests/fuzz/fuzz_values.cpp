// Fuzz target: the stored values file of a task (engine/scene/scene_json.h: the sidecar
// "<scene>.values.json" that keeps what Apply kept of per-frame inputs and policy weights,
// the project's checkpoint of an optimization). The input is the sidecar; the scene that
// names it is fixed.
#include "engine/scene/scene_json.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// a scene with two tasks, both reading their values from the sidecar
constexpr const char* k_scene = R"({
  "format": "adjoint-scene", "version": 1, "name": "values",
  "objects": [{"name": "p", "type": "particles", "particles": [{"position": [0, 1, 0]}]},
              {"name": "goal", "type": "target", "position": [1, 1, 0]}],
  "tasks": [{"name": "walk", "horizon": 4, "values_file": "values.json",
             "loss": [{"kind": "position", "object": "p", "target": "goal"}]},
            {"name": "policy", "horizon": 4, "values_file": "values.json",
             "loss": [{"kind": "position", "object": "p", "target": "goal"}]}]
})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj;
  const std::string sidecar = adj::fuzz::write_input(data, size, "values.json");
  const std::string source = (fuzz::scratch_dir() / "scene.json").string();
  auto doc = scene::parse_scene(k_scene, source);
  if (!doc) fuzz::require_names(doc.status().message(), sidecar);
  return 0;
}
