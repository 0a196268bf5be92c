// Optimized parameters back into the scene document: particle positions and velocities
// (particles objects per particle; cloth and soft bodies in their particle_positions /
// particle_velocities) and every model field through its row's writer in
// engine/model/field_table.h (the doc column: spring values per spring, a cloth's or soft
// body's material and masses as the mean of the per-element values, lift/drag into every
// cloth, gravity and contact into the settings, robot gains and masses), robot initial joints.
// Per-frame inputs and policy weights go into the task (store_values), and a runner made from
// that task starts from them (restore_values). What the document cannot hold is summarized in
// the returned notes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/optim/parameters.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

// theta laid out by blocks (ParametersT::blocks()); returns notes for the user
std::vector<std::string> write_back(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                    const scene::CompiledScene& compiled, scene::Scene& doc);

// the same for a robot task (ParametersT blocks on the bodies' side):
//   joint_q, joint_qd      -> the robot's "initial" entries (per body)
//   model fields           -> their rows' writers (write_back.cpp's DocWriter): actuator_kp/kd into
//                             the listed actuators (a URDF robot's default actuators share one
//                             default_actuator, which gets their mean, with a note when they differ);
//                             body_mass into the listed bodies (the given mass and inertia scaled with
//                             it, or the shapes' densities; URDF masses stay in the file, a note);
//                             contact_ke/kd/mu into settings.robot_contact
//   actuator_control, policy: the task keeps them (store_values)
std::vector<std::string> write_back_robot(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                          const scene::CompiledScene& compiled, scene::Scene& doc);

// any task's blocks (optim::TaskT::blocks()), each through the writer of its side: a robot
// object's block, or a scene-wide model field bound to the robots' side (their contact), goes
// to write_back_robot; the rest to write_back
std::vector<std::string> write_back_task(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                         const scene::CompiledScene& compiled, scene::Scene& doc);

// per-frame inputs (control_force, spring/tet_activation, actuator_control) and policy weights
// of theta into task.values, replacing what was stored for the same parameter; returns how
// many blocks were stored. A block with knots is stored per frame (its interpolated frames)
int store_values(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta, scene::Task& task);

// the task's stored values into theta (a runner's initial theta, then set_theta): a runner
// made from a saved task starts where the optimization that was applied ended (a block with
// knots: its knots at the stored values of their frames). Values whose
// size no longer fits (the horizon or the policy's layers changed) are skipped with a note.
template <class S>
std::vector<std::string> restore_values(const std::vector<ParamBlock>& blocks, const scene::Task& task,
                                        std::vector<S>& theta);

// a runner (TaskRunnerT, or a TaskT) started from its task's
// stored values; returns restore_values' notes
template <class Runner>
std::vector<std::string> start_from_stored(Runner& runner, const std::vector<ParamBlock>& blocks,
                                           const scene::Task& task) {
  if (task.values.empty()) return {};
  auto theta = runner.theta();
  std::vector<std::string> notes = restore_values(blocks, task, theta);
  runner.set_theta(std::move(theta));
  return notes;
}

}  // namespace adj::optim
