// Parameters of a robot task: theta made of named blocks (as ParametersT does for particle
// scenes), each a view into the rigid model (PD gains, body masses, robot contact), the
// initial rigid state (joint coordinates and velocities) or the per-frame actuator inputs.
//   joint_q            the robot's revolute/prismatic coordinates (quaternions and free-base
//                      positions are left alone)
//   joint_qd           every dof of the robot
//   actuator_control   one entry per frame and actuator (torque actuators: input * gear,
//                      from 0; PD: the target, from the joint's initial coordinate)
//   the robot side's model fields of engine/model/field_table.h:
//   actuator_kp / kd   the robot's PD actuators' gains
//   body_mass          the robot's bodies with mass (inertia scales with the mass)
//   joint_damping      every dof of the robot: its viscous damping (bounded below by 0)
//   joint_armature     every dof of the robot: its armature (bounded below by 0)
//   contact_ke/kd/mu   the robots' ground contact (scene-wide)
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_model.h"
#include "engine/optim/parameters.h"
#include "engine/scene/compile.h"

namespace adj::optim {

template <class S>
class RigidParametersT {
 public:
  // errors name the task and the parameter; a policy block (policy_size weights, last in
  // theta) is left alone by apply() and gather(): the runner owns it
  static Result<RigidParametersT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                         int policy_size = 0);
  const ParamBlock* policy_block() const {
    return !blocks_.empty() && blocks_.back().kind == scene::ParamKind::policy ? &blocks_.back() : nullptr;
  }

  int size() const { return size_; }
  int horizon() const { return horizon_; }
  const std::vector<ParamBlock>& blocks() const { return blocks_; }
  bool has_controls() const { return has_controls_; }
  bool has_model_params() const { return has_model_; }

  std::vector<S> initial(const scene::CompiledSceneT<S>& cs) const;
  void clamp(std::vector<S>& theta) const;
  // write theta into `model` (its bodies; base: the compiled bodies, for the inertia scale),
  // the initial state and `horizon` controls (left empty without actuator_control blocks)
  void apply(const std::vector<S>& theta, const RigidModelT<S>& base, ModelT<S>& model, StateT<S>& initial,
             std::vector<ControlT<S>>& controls) const;
  // dLoss/dtheta from the rollout's gradients (grad resized and overwritten; grad_model.rigid read)
  void gather(const StateT<S>& grad_initial, const std::vector<ControlT<S>>& grad_controls,
              const ModelGradT<S>& grad_model, std::vector<S>& grad) const;

  const ParamBlock& block_of(int i) const;
  // "joint_q[cartpole][pole]", "actuator_control[arm][t=3][1]", "contact_ke"
  std::string entry_name(int i) const;

 private:
  std::vector<ParamBlock> blocks_;
  std::vector<std::vector<std::string>> names_;
  int size_ = 0;
  int horizon_ = 1;
  bool has_controls_ = false, has_model_ = false;
};

}  // namespace adj::optim
