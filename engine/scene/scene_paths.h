#pragma once
// Files a scene names (OBJ meshes, URDF robots) are relative to the scene file. Saving the
// scene somewhere else moves that reference point: rebase_paths rewrites every relative
// reference so that it still names the same file. Absolute paths and empty ones stay.
#include <string>

#include "engine/scene/scene.h"

namespace adj::scene {

// from_dir: the directory the paths are relative to now; to_dir: the one they should be
// relative to. Paths that cannot be made relative (another root) become absolute.
void rebase_paths(Scene& scene, const std::string& from_dir, const std::string& to_dir);

}  // namespace adj::scene
