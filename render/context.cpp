#include "render/context.h"

#include <cstdio>
#include <cstring>

#if defined(ADJ_SANITIZE)
#include <dlfcn.h>
#endif

#include "render/vk_check.h"

namespace adj::render {

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_SUBOPTIMAL_KHR: return "VK_SUBOPTIMAL_KHR";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_SURFACE_LOST_KHR: return "VK_ERROR_SURFACE_LOST_KHR";
    case VK_ERROR_OUT_OF_DATE_KHR: return "VK_ERROR_OUT_OF_DATE_KHR";
    default: return "VkResult(other)";
  }
}

void throw_vk(VkResult r, const char* call, const char* file, int line) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "Vulkan call failed: %s returned %s (%d) at %s:%d", call,
                result_name(r), static_cast<int>(r), file, line);
  throw Error(buf);
}

namespace {

constexpr const char* k_validation_layer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void* user) {
  static_cast<Context*>(user)->on_validation_message(static_cast<int>(severity), data->pMessage);
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_device_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

int type_score(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

}  // namespace

Context::Context(const ContextOptions& options) : options_(options) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "Adjoint";
  app.applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
  app.pEngineName = "Adjoint";
  app.apiVersion = VK_API_VERSION_1_2;

  std::vector<const char*> exts;
  for (const auto& e : options.instance_extensions) exts.push_back(e.c_str());
  std::vector<const char*> layers;
  if (options.validation) {
    if (!has_layer(k_validation_layer))
      throw Error("validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                  "(Debian package vulkan-validationlayers)");
    layers.push_back(k_validation_layer);
    exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
#if defined(ADJ_SANITIZE)
    // sanitizer builds: keep the layer loaded after vkDestroyInstance, so LeakSanitizer can
    // name the layer's own leftovers (tests/lsan.supp) instead of an "<unknown module>"
    dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_NODELETE);
#endif
  }

  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  // (performance hints left out: shared vertex shaders write outputs some passes ignore)
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  dbg.pfnUserCallback = debug_callback;
  dbg.pUserData = this;

  VkValidationFeatureEnableEXT sync_feature =
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_feature;
  if (options.validation && options.sync_validation) dbg.pNext = &features;

  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  if (options.validation) ci.pNext = &dbg;  // also catches messages of create/destroy
  ADJ_VK(vkCreateInstance(&ci, nullptr, &instance_));

  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    dbg.pNext = nullptr;
    if (create) ADJ_VK(create(instance_, &dbg, nullptr, &messenger_));
  }
}

Context::~Context() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

void Context::on_validation_message(int severity, const char* message) {
  bool error = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (error) validation_errors_.fetch_add(1);
  std::fprintf(stderr, "[vulkan %s] %s\n", error ? "error" : "warning", message);
}

void Context::create_device(VkSurfaceKHR surface) {
  uint32_t n = 0;
  ADJ_VK(vkEnumeratePhysicalDevices(instance_, &n, nullptr));
  std::vector<VkPhysicalDevice> devices(n);
  ADJ_VK(vkEnumeratePhysicalDevices(instance_, &n, devices.data()));
  if (devices.empty())
    throw Error("no Vulkan device found (install mesa-vulkan-drivers for lavapipe, or set "
                "VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json)");

  // score every device that has a graphics queue (that can present, with a surface)
  int best_score = -1;
  for (VkPhysicalDevice pd : devices) {
    uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qf(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf.data());
    int family = -1;
    for (uint32_t i = 0; i < qn && family < 0; ++i) {
      if (!(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
      VkBool32 present = VK_TRUE;
      if (surface) vkGetPhysicalDeviceSurfaceSupportKHR(pd, i, surface, &present);
      if (present) family = static_cast<int>(i);
    }
    if (family < 0) continue;
    if (surface && !has_device_extension(pd, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) continue;

    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    int score = type_score(p2.properties.deviceType);
    if (options_.device_uuid && std::memcmp(id.deviceUUID, options_.device_uuid->data(), 16) == 0)
      score += 100;
    if (score > best_score) {
      best_score = score;
      physical_ = pd;
      queue_family_ = static_cast<uint32_t>(family);
    }
  }
  if (!physical_)
    throw Error(surface ? "no Vulkan device can present to this window"
                        : "no Vulkan device with a graphics queue");

  // what the chosen device is
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &driver};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
  vkGetPhysicalDeviceProperties2(physical_, &p2);
  props_ = p2.properties;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem_props_);
  info_.name = props_.deviceName;
  info_.type = type_name(props_.deviceType);
  info_.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  info_.api_version = version_string(props_.apiVersion);
  std::memcpy(info_.uuid.data(), id.deviceUUID, 16);
  info_.external_memory_fd = has_device_extension(physical_, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(physical_, &f2);
  const bool timeline = f12.timelineSemaphore == VK_TRUE;
  info_.external_semaphore_fd =
      timeline && has_device_extension(physical_, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  // features the renderer uses when present
  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(physical_, &supported);
  VkPhysicalDeviceFeatures enabled{};
  enabled.fillModeNonSolid = supported.fillModeNonSolid;
  enabled.wideLines = supported.wideLines;
  enabled.largePoints = supported.largePoints;
  enabled.samplerAnisotropy = supported.samplerAnisotropy;
  enabled.geometryShader = supported.geometryShader;
  info_.geometry_shader = supported.geometryShader;

  std::vector<const char*> exts;
  if (surface) exts.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (info_.external_semaphore_fd) exts.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  if (info_.external_memory_fd) {
    exts.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  }

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  dci.pEnabledFeatures = &enabled;
  // timeline semaphores order CUDA writes and Vulkan reads (render/interop.h)
  VkPhysicalDeviceVulkan12Features enabled12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enabled12.timelineSemaphore = timeline ? VK_TRUE : VK_FALSE;
  dci.pNext = &enabled12;
  ADJ_VK(vkCreateDevice(physical_, &dci, nullptr, &device_));
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  ADJ_VK(vkCreateCommandPool(device_, &pci, nullptr, &pool_));
}

uint32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags props) const {
  for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (mem_props_.memoryTypes[i].propertyFlags & props) == props)
      return i;
  throw Error("no Vulkan memory type with the needed properties");
}

VkCommandBuffer Context::begin_once() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  ADJ_VK(vkAllocateCommandBuffers(device_, &ai, &cmd));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  ADJ_VK(vkBeginCommandBuffer(cmd, &bi));
  return cmd;
}

void Context::end_once(VkCommandBuffer cmd) {
  ADJ_VK(vkEndCommandBuffer(cmd));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  ADJ_VK(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE));
  ADJ_VK(vkQueueWaitIdle(queue_));
  vkFreeCommandBuffers(device_, pool_, 1, &cmd);
}

}  // namespace adj::render
