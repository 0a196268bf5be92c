// Optimized parameters back into the scene document, where the document can hold them:
// particle positions and velocities, spring rest lengths and stiffnesses, contact
// parameters. What it cannot hold (per-particle cloth velocities, per-step controls,
// policy weights) is summarized in the returned notes (the CLI's log keeps all values).
#pragma once

#include <string>
#include <vector>

#include "engine/optim/parameters.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

// theta laid out by blocks (ParametersT::blocks()); returns notes for the user
std::vector<std::string> write_back(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                    const scene::CompiledScene& compiled, scene::Scene& doc);

// the same for a robot task (RigidParametersT blocks):
//   joint_q, joint_qd      -> the robot's "initial" entries (per body)
//   actuator_kp, kd        -> listed actuators; a URDF robot's default actuators share one
//                             default_actuator, which gets their mean (a note says so when they differ)
//   body_mass              -> listed bodies: the given mass (and inertia, scaled with it) or, for
//                             bodies whose mass comes from their shapes, the shapes' densities scaled
//                             to it; URDF masses stay in the file (a note)
//   contact_ke / kd / mu   -> settings.robot_contact
//   actuator_control, policy: not part of the document (a note)
std::vector<std::string> write_back_robot(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                          const scene::CompiledScene& compiled, scene::Scene& doc);

}  // namespace adj::optim
