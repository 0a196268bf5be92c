#pragma once
// Robots in the editor's simulation: the rigid model of the compiled scene
// (CompiledScene::rigid) stepped frame by frame beside the particle model, with the contacts
// and joint forces of the newest frame for drawing. The worker owns one.
//
// While the editor plays, PD actuators hold the initial pose (each target is its joint's
// initial coordinate, the pose set with the inspector's joint sliders); torque and thrust
// actuators are off. `adjoint run` steps with zero inputs instead (PD targets 0); the
// optimizer uses its own per-step inputs.
#include <memory>

#include "engine/core/status.h"
#include "engine/rigid/coupled_rollout.h"
#include "engine/rigid/rigid_solver.h"
#include "engine/scene/compile.h"

namespace adj::editor {

// the actuator inputs that hold `initial`: PD targets at the initial revolute/prismatic
// coordinates, everything else zero
RigidControl robot_hold_control(const RigidModel& model, const RigidState& initial);

class RobotSim {
 public:
  // back to the compiled initial state (nothing to step when the scene has no robots)
  void reset(const scene::CompiledScene& cs);
  void clear();
  bool active() const { return solver_ != nullptr; }
  // one frame (cs.frame_dt in cs.substeps substeps); on failure the state stays
  Status step(const scene::CompiledScene& cs);
  // one frame of robots and particles together, with two-way body-particle contact
  // (engine/rigid/coupled_rollout.h): particles -> particles_next under particle_control
  Status step_coupled(const scene::CompiledScene& cs, const State& particles, State& particles_next,
                      const Control& particle_control, int thread_count);
  const RigidState& state() const { return cur_; }
  const RigidContactsT<float>& contacts() const { return contacts_; }  // of state()
  size_t state_bytes() const { return (cur_.joint_q.size() + cur_.joint_qd.size()) * sizeof(float); }

 private:
  std::unique_ptr<RigidSolver> solver_;
  std::unique_ptr<CoupledSolverT<float>> coupled_;
  CoupledStateT<float> in_, out_;
  CoupledControlT<float> coupled_control_;
  RigidState cur_, next_;
  RigidControl control_;
  RigidContactsT<float> contacts_;
};

}  // namespace adj::editor
