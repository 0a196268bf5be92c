#pragma once
// The window's swapchain. Frames are drawn offscreen and blitted into its images.
#include <vulkan/vulkan.h>

#include <vector>

namespace adj::render {

class Context;

class Swapchain {
 public:
  Swapchain(const Context& ctx, VkSurfaceKHR surface, VkExtent2D wanted, bool vsync);
  ~Swapchain();
  Swapchain(const Swapchain&) = delete;
  Swapchain& operator=(const Swapchain&) = delete;

  // rebuild for a new window size (waits for the device to go idle)
  void recreate(VkExtent2D wanted);

  VkSwapchainKHR handle() const { return swapchain_; }
  VkExtent2D extent() const { return extent_; }
  VkFormat format() const { return format_; }
  uint32_t image_count() const { return static_cast<uint32_t>(images_.size()); }
  VkImage image(uint32_t i) const { return images_[i]; }
  // signalled when image i may be presented (one per image, so reuse is ordered)
  VkSemaphore render_finished(uint32_t i) const { return finished_[i]; }

 private:
  void create(VkExtent2D wanted, VkSwapchainKHR old);
  void destroy_semaphores();

  const Context& ctx_;
  VkSurfaceKHR surface_;
  bool vsync_;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkExtent2D extent_{};
  VkFormat format_ = VK_FORMAT_UNDEFINED;
  std::vector<VkImage> images_;
  std::vector<VkSemaphore> finished_;
};

}  // namespace adj::render
