#pragma once
// What the About window and `adjoint info` report: version, Vulkan device, CUDA.
#include <string>

#include "app/ui.h"
#include "render/context.h"

namespace adj::app {

// "available: <device>" or "not available: <reason>"
std::string cuda_status();

AboutInfo make_about_info(const render::DeviceInfo& device, bool validation);

}  // namespace adj::app
