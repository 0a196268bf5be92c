// Receding-horizon control (model-predictive control) of a robot task, as Warp's drone
// example does it: at every replanning frame, optimize the actuator inputs over a short
// window from the state the robot is really in (a few gradient steps through the simulator,
// warm-started from the previous plan shifted in time), apply the first frames of the plan,
// step the real system, repeat. The task's loss terms are re-aimed at each window: a term
// for frame s counts in the window that contains s; past the window only the next term
// still ahead counts, at the window's end (the robot heads for the next waypoint).
//
//   auto task = optim::make_task(cs, spec).value();  // plans and frames: task->restart(state, ...)
//   auto mpc = optim::RecedingHorizonT<float>::create(*task, {.window = 30, .iterations = 8});
//   auto report = mpc->run([](int frame, State& s) { /* optional disturbance */ });
//   report->loss;    // the whole task's loss on the trajectory that was really flown
//
// Needs actuator_control parameters (the plan); other parameter kinds are not re-planned.
#pragma once

#include <functional>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/task.h"

namespace adj::optim {

struct RecedingHorizonOptions {
  int window = 30;     // frames each plan looks ahead
  int iterations = 8;  // optimizer steps per replan (Adam, the task's learning rate)
  int execute = 1;     // frames of each plan applied before replanning
};

template <class S>
struct RecedingHorizonReport {
  std::vector<StateT<S>> states;  // the real trajectory, frames 0..horizon
  std::vector<S> theta;           // the inputs applied, as the whole task's parameters (from its theta())
  double loss = 0;                     // the whole task's loss on that trajectory
  int replans = 0;
  double ms = 0;                       // wall time of the run
};

template <class S>
class RecedingHorizonT {
 public:
  // errors name the task (no actuator_control parameter, a policy task, bad options); the
  // task must outlive the controller
  static Result<RecedingHorizonT> create(const TaskT<S>& task, RecedingHorizonOptions options);

  // the whole horizon; disturb (optional) may change the real state before each frame is
  // stepped (a push, a gust): the plans only ever see the state as it is
  Result<RecedingHorizonReport<S>> run(const std::function<void(int frame, StateT<S>& state)>& disturb = {});

  const RecedingHorizonOptions& options() const { return options_; }

 private:
  // the task for the `frames` frames from frame `frame` (at most to the horizon)
  scene::Task window_task(int frame, int frames) const;

  const TaskT<S>* full_ = nullptr;
  scene::Task task_;
  RecedingHorizonOptions options_;
};

using RecedingHorizon = RecedingHorizonT<float>;

}  // namespace adj::optim
