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

}  // namespace adj::optim
