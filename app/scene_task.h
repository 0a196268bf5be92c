#pragma once
// What the task commands (optimize, check-grad, --shac, --receding-horizon) start from: the
// scene file loaded and compiled, and its task found by name (empty: the first). Errors name
// the file and the task.
#include <string>

#include "engine/core/status.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::app {

template <class S>
struct SceneTask {
  scene::Scene doc;
  scene::CompiledSceneT<S> cs;
  scene::Task task;
};

template <class S>
Result<SceneTask<S>> load_scene_task(const std::string& path, const std::string& task_name);

}  // namespace adj::app
