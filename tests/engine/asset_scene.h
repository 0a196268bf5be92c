// the engine tests' way to a reference scene of assets/scenes (ADJ_ASSET_SCENES): a Result
// that must hold (the failure's message in the report), and a scene loaded and compiled with
// one of its tasks
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "engine/core/status.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::test {

template <class T>
T ok(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

// assets/scenes/FILE compiled in S, with its task TASK_NAME (empty: the first), its horizon
// cut to `horizon` frames when > 0
template <class S>
struct AssetScene {
  scene::Scene doc;
  scene::CompiledSceneT<S> cs;
  scene::Task task;
  AssetScene(const std::string& file, const std::string& task_name = "", int horizon = 0) {
    const std::string dir = ADJ_ASSET_SCENES;
    doc = ok(scene::load_scene(dir + "/" + file));
    const std::string path = dir + "/" + file;
    cs = ok(scene::compile<S>(doc, path.substr(0, path.find_last_of('/'))));
    const scene::Task* t = doc.find_task(task_name);
    INFO(file << " has no task \"" << task_name << "\"");
    REQUIRE(t);
    task = *t;
    if (horizon > 0) task.horizon = horizon;
  }
};

}  // namespace adj::test
