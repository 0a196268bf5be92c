#include "app/system_info.h"

#include "engine/cuda/cuda.h"

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
  a.data_path = "CPU backend, host arrays copied into the renderer's buffers";
  a.validation = validation;
  return a;
}

}  // namespace adj::app
