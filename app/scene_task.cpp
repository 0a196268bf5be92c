#include "app/scene_task.h"

#include <cstdio>
#include <filesystem>

#include "engine/scene/scene_json.h"

namespace adj::app {

template <class S>
Result<SceneTask<S>> load_scene_task(const std::string& path, const std::string& task_name) {
  auto doc = scene::load_scene(path);
  if (!doc) return doc.status();
  auto cs = scene::compile<S>(*doc, std::filesystem::path(path).parent_path().string());
  if (!cs) return Status::error(path + ": " + cs.status().message());
  for (const std::string& w : cs->warnings) std::fprintf(stderr, "%s: warning: %s\n", path.c_str(), w.c_str());
  const scene::Task* task = doc->find_task(task_name);
  if (!task) {
    std::string m = path + ": ";
    if (task_name.empty()) m += "the scene has no task";
    else (m += "no task named \"") += task_name + "\"";
    return Status::error(m);
  }
  SceneTask<S> out{std::move(*doc), std::move(*cs), *task};
  return out;
}

template Result<SceneTask<float>> load_scene_task(const std::string&, const std::string&);
template Result<SceneTask<double>> load_scene_task(const std::string&, const std::string&);

}  // namespace adj::app
