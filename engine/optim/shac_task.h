// a robot policy task trained as SHAC does it (shac.h BatchShacTrainerT: windows of 32 frames
// over many randomized copies, a learned critic for each window's end), with the settings
// that `adjoint optimize --shac` and the editor's SHAC method share
#pragma once

#include <cstdint>

#include "engine/optim/shac.h"
#include "engine/scene/compile.h"

namespace adj::optim {

struct ShacTaskSettings {
  int envs = 32;             // randomized copies trained together
  int windows = 300;         // windows the learning rates decay over
  std::uint64_t seed = 0;    // policy and critic initialization, resets, noise
  int thread_count = 0;      // 0: OpenMP's default
};

// the trainer for `task` (one that optim::supports(cs, task, Method::shac)); errors name the task
Result<BatchShacTrainerT<float>> make_shac_trainer(const scene::CompiledScene& cs, const scene::Task& task,
                                                   const ShacTaskSettings& settings);

}  // namespace adj::optim
