// BPTT over many worlds (robust trajectory or parameter optimization under domain
// randomization): a task's loss averaged over N copies of its scene, world w with its
// parameters from settings.randomize drawn from (seed, w) (engine/model/randomize.h), the
// gradient the mean of the worlds' gradients. Over MPI ranks (dist::Communicator) each rank
// evaluates its contiguous block of worlds and every world's loss and gradient reach every
// rank, summed in world order: the same bits for any number of ranks, and world 0 alone is the
// task itself.
//
//   auto task = optim::make_worlds_task(compiled, spec, {.worlds = 16, .seed = 3, .comm = comm});
//   while ((*task)->iterations_left() > 0) (*task)->iterate();  // every rank takes the same step
#pragma once

#include <cstdint>
#include <memory>

#include "engine/dist/communicator.h"
#include "engine/optim/task.h"

namespace adj::optim {

struct WorldsTaskOptions {
  int worlds = 1;                      // copies of the scene the loss is averaged over
  std::uint64_t seed = 0;              // their randomized parameters' seed
  dist::Communicator* comm = nullptr;  // ranks sharing the worlds (null: this process alone)
  TaskOptions task;                    // each world's task
};

// errors: fewer worlds than ranks, and the task's own (make_task's, naming the task)
template <class S>
Result<std::unique_ptr<TaskT<S>>> make_worlds_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                   const WorldsTaskOptions& options);

}  // namespace adj::optim
