#include "engine/optim/shac_task.h"

#include <memory>

#include "engine/optim/policy_env.h"
#include "engine/optim/task.h"

namespace adj::optim {

Result<BatchShacTrainerT<float>> make_shac_trainer(const scene::CompiledScene& cs, const scene::Task& task,
                                                   const ShacTaskSettings& settings) {
  if (Status st = supports(cs, task, Method::shac); !st) return st;
  // copies start from random joint angles and rates around the task's start
  auto env =
      RigidPolicyEnvT<float>::create(cs, task, {.env_count = settings.envs, .q_range = 3.14159, .qd_range = 0.5});
  if (!env) return Status::error("task '" + task.name + "': " + env.status().message());
  auto eval = RigidPolicyEnvT<float>::create(cs, task);
  if (!eval) return Status::error("task '" + task.name + "': " + eval.status().message());
  BatchShacOptions so;  // the defaults: the cartpole swing-up's settings (seeds 0-9 swing up)
  so.lr_decay_windows = settings.windows;
  so.seed = settings.seed;
  so.thread_count = settings.thread_count;
  auto shac = BatchShacTrainerT<float>::create(std::move(*env), std::move(*eval), so);
  if (!shac) return Status::error("task '" + task.name + "': " + shac.status().message());
  return shac;
}

}  // namespace adj::optim
