#include "app/system_info.h"

#include "engine/cuda/cuda.h"
#include "render/interop.h"

namespace adj::app {

std::string cuda_status() {
  std::string reason;
  if (cuda_available(&reason)) return "available: " + reason;
  return "not available: " + reason;
}

AboutInfo make_about_info(const render::DeviceInfo& device, bool validation) {
  AboutInfo a;
  a.version = ADJ_VERSION;
  a.device = device.name + " (" + device.type + ")";
  a.driver = device.driver;
  a.vulkan_api = device.api_version;
  a.cuda = cuda_status();
  // the editor replaces it each frame with the path in use (Editor::data_path)
  a.data_path = render::to_string(render::SharePath::cpu_mapped);
  a.validation = validation;
  return a;
}

}  // namespace adj::app
