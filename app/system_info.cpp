#include "app/system_info.h"

#include "engine/cuda/cuda_info.h"

namespace adj::app {

std::string cuda_status() {
  CudaInfo info = cuda_info();
  if (info.available) return "available: " + info.device_name;
  return "not available: " + info.reason;
}

AboutInfo make_about_info(const render::DeviceInfo& device, bool validation) {
  AboutInfo a;
  a.version = ADJ_VERSION;
  a.device = device.name + " (" + device.type + ")";
  a.driver = device.driver;
  a.vulkan_api = device.api_version;
  a.cuda = cuda_status();
  a.validation = validation;
  return a;
}

}  // namespace adj::app
