#pragma once
// The Vulkan instance, the chosen physical device, the logical device and its queue.
// One per program; everything else in render/ borrows it.
#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace adj::render {

struct ContextOptions {
  bool validation = false;              // enable VK_LAYER_KHRONOS_validation, count its errors
  bool sync_validation = false;         // also synchronization validation (slower)
  std::vector<std::string> instance_extensions;  // e.g. what GLFW needs for a surface
  std::optional<std::array<uint8_t, 16>> device_uuid;  // pick this device (CUDA interop)
};

struct DeviceInfo {
  std::string name;            // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string type;            // "discrete", "integrated", "cpu", ...
  std::string driver;          // driver name and info: "llvmpipe Mesa 22.3.6"
  std::string api_version;     // "1.3.230"
  std::array<uint8_t, 16> uuid{};
  bool external_memory_fd = false;  // VK_KHR_external_memory_fd available
  bool external_semaphore_fd = false;  // VK_KHR_external_semaphore_fd available (with timeline semaphores)
  bool geometry_shader = false;     // enabled when present: gl_PrimitiveID in picking
};

class Context {
 public:
  explicit Context(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // choose the physical device and create the logical device; surface may be null
  void create_device(VkSurfaceKHR surface);

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return pool_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }

  // validation messages of severity error seen so far (0 when validation is off)
  int validation_errors() const { return validation_errors_.load(); }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }

  // memory type index with the given bits and properties; throws when none fits
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags props) const;

  // record and submit a one-time command buffer, wait until it has run
  template <class F>
  void run_once(F&& record) {
    VkCommandBuffer cmd = begin_once();
    record(cmd);
    end_once(cmd);
  }

  // called by the debug messenger
  void on_validation_message(int severity, const char* message);

 private:
  VkCommandBuffer begin_once();
  void end_once(VkCommandBuffer cmd);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_props_{};
  DeviceInfo info_;
  ContextOptions options_;
  std::atomic<int> validation_errors_{0};
};

}  // namespace adj::render
