// a policy task trained as SHAC (or AHAC, ahac.h) does it (shac.h BatchShacTrainerT: windows of frames over many
// randomized copies, a learned critic for each window's end), with the settings that
// `adjoint optimize --method shac` and the editor's SHAC method share: the task's SHAC block
// (scene "shac": window, learning rates, networks, std, ...) over the trainer's defaults
#pragma once

#include <cstdint>

#include "engine/optim/shac.h"
#include "engine/optim/task.h"

namespace adj::optim {

struct ShacTaskSettings {
  int envs = 32;                       // randomized copies trained together (0: the task's shac.envs, else 32)
  int windows = 300;                   // windows the learning rates decay over
  std::uint64_t seed = 0;              // policy and critic initialization, resets, noise
  int thread_count = 0;                // 0: OpenMP's default
  dist::Communicator* comm = nullptr;  // the ranks that share the copies (null: this process)
  int fingerprint_every = 10;          // with ranks: windows between parameter comparisons
  bool ahac = false;                   // AHAC (ahac.h): the task's AHAC block on top of its SHAC block
};

// the actor's and the critic's activation, LayerNorm and init: the task's SHAC block
// (activation, layer_norm, init) over MlpForm's defaults (tanh, none, Glorot)
MlpForm shac_network_form(const scene::Task& task);
// a SHAC or AHAC checkpoint's networks (its header's actor_network, network_form_json) set on
// the task's SHAC block (activation, layer_norm, init), so that the trainer made from the task
// loads it whatever the scene now says; a checkpoint without them leaves the task as it is.
// Errors name the file and the key
Status use_checkpoint_networks(const Checkpoint& ck, scene::Task& task);
// the task's SHAC block (scene::ShacSpec) over BatchShacOptions' defaults, the learning rates
// decaying over `windows` unless the block turns the decay off
BatchShacOptions shac_options(const scene::Task& task, int windows);
// the task's AHAC block (scene::AhacSpec) over AhacOptions' defaults, switched on
AhacOptions ahac_options(const scene::Task& task);
// the copies a run trains: `envs` when > 0, else the task's shac.envs, else 32
int shac_envs(const scene::Task& task, int envs);

// the trainer for `task` (a policy task whose world has a policy env); errors name the task
Result<BatchShacTrainerT<float>> make_shac_trainer(const TaskT<float>& task, const ShacTaskSettings& settings);

}  // namespace adj::optim
