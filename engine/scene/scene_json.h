// Scene files: JSON ("format": "adjoint-scene", "version": 1). Loading reports every error
// with the file and the JSON path (`objects[3].material.tri_ke: expected a number`) and
// refuses absurd sizes; saving writes a temporary file and renames it over the target.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/scene/scene.h"

namespace adj::scene {

// limits on what one file may ask for, checked while reading
struct LoadLimits {
  long long max_grid_cells = 1'000'000;  // cloth nx*ny, soft nx*ny*nz
  long long max_list = 1'000'000;        // particles/springs listed in one object
  int max_horizon = 1'000'000;           // task frames
  int max_substeps = 10'000;
};

// `source` names the text in messages (usually the file path)
Result<Scene> parse_scene(const std::string& text, const std::string& source,
                          const LoadLimits& limits = {});
Result<Scene> load_scene(const std::string& path, const LoadLimits& limits = {});

// the document as JSON text (2-space indent, keys in a fixed order)
std::string to_json(const Scene& scene);
// atomic: write path.tmp-XXXX in the same folder, flush, rename over path. A task whose
// stored values (Task::values) hold more than 4096 numbers keeps them in the sidecar
// "<file>.values.json" beside it ("values_file" in the task), written first, renamed first;
// to_json() writes every value inline.
Status save_scene(const Scene& scene, const std::string& path);

}  // namespace adj::scene
