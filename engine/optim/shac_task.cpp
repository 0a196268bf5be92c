#include "engine/optim/shac_task.h"

namespace adj::optim {

Result<BatchShacTrainerT<float>> make_shac_trainer(const TaskT<float>& task, const ShacTaskSettings& settings) {
  BatchShacOptions so;  // the defaults: the cartpole swing-up's settings (seeds 2-4 swing up)
  so.lr_decay_windows = settings.windows;
  so.seed = settings.seed;
  so.thread_count = settings.thread_count;
  so.comm = settings.comm;
  so.fingerprint_every = settings.fingerprint_every;
  // copies start from random joint angles and rates around the task's start
  PolicyEnvOptions env = training_starts(task.task(), settings.envs);
  env.world_seed = settings.seed;
  return BatchShacTrainerT<float>::create(task, so, env);
}

}  // namespace adj::optim
