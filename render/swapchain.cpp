#include "render/swapchain.h"

#include <algorithm>

#include "render/context.h"
#include "render/vk_check.h"

namespace adj::render {

Swapchain::Swapchain(const Context& ctx, VkSurfaceKHR surface, VkExtent2D wanted, bool vsync)
    : ctx_(ctx), surface_(surface), vsync_(vsync) {
  create(wanted, VK_NULL_HANDLE);
}

Swapchain::~Swapchain() {
  destroy_semaphores();
  if (swapchain_) vkDestroySwapchainKHR(ctx_.device(), swapchain_, nullptr);
}

void Swapchain::recreate(VkExtent2D wanted) {
  vkDeviceWaitIdle(ctx_.device());
  destroy_semaphores();
  VkSwapchainKHR old = swapchain_;
  create(wanted, old);
  vkDestroySwapchainKHR(ctx_.device(), old, nullptr);
}

void Swapchain::destroy_semaphores() {
  for (VkSemaphore s : finished_) vkDestroySemaphore(ctx_.device(), s, nullptr);
  finished_.clear();
}

void Swapchain::create(VkExtent2D wanted, VkSwapchainKHR old) {
  VkPhysicalDevice pd = ctx_.physical_device();
  VkSurfaceCapabilitiesKHR caps;
  ADJ_VK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(pd, surface_, &caps));

  // a UNORM format: ImGui and our shaders write display-ready colors
  uint32_t n = 0;
  ADJ_VK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface_, &n, nullptr));
  std::vector<VkSurfaceFormatKHR> formats(n);
  ADJ_VK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface_, &n, formats.data()));
  VkSurfaceFormatKHR chosen = formats.at(0);
  for (const auto& f : formats)
    if ((f.format == VK_FORMAT_B8G8R8A8_UNORM || f.format == VK_FORMAT_R8G8B8A8_UNORM) &&
        f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) {
      chosen = f;
      break;
    }
  format_ = chosen.format;

  // FIFO with vsync; otherwise MAILBOX or IMMEDIATE when offered
  ADJ_VK(vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface_, &n, nullptr));
  std::vector<VkPresentModeKHR> modes(n);
  ADJ_VK(vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface_, &n, modes.data()));
  VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR;
  if (!vsync_) {
    for (VkPresentModeKHR m : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR})
      if (std::find(modes.begin(), modes.end(), m) != modes.end()) {
        mode = m;
        break;
      }
  }

  if (caps.currentExtent.width != UINT32_MAX) {
    extent_ = caps.currentExtent;
  } else {
    extent_.width = std::clamp(wanted.width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent_.height =
        std::clamp(wanted.height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  uint32_t count = std::max(caps.minImageCount + 1, 3u);
  if (caps.maxImageCount > 0) count = std::min(count, caps.maxImageCount);

  if (!(caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT))
    throw Error("the window's swapchain does not accept transfers (blits) on this device");

  VkSwapchainCreateInfoKHR ci{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  ci.surface = surface_;
  ci.minImageCount = count;
  ci.imageFormat = chosen.format;
  ci.imageColorSpace = chosen.colorSpace;
  ci.imageExtent = extent_;
  ci.imageArrayLayers = 1;
  ci.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  ci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.preTransform = caps.currentTransform;
  ci.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  ci.presentMode = mode;
  ci.clipped = VK_TRUE;
  ci.oldSwapchain = old;
  ADJ_VK(vkCreateSwapchainKHR(ctx_.device(), &ci, nullptr, &swapchain_));

  ADJ_VK(vkGetSwapchainImagesKHR(ctx_.device(), swapchain_, &n, nullptr));
  images_.resize(n);
  ADJ_VK(vkGetSwapchainImagesKHR(ctx_.device(), swapchain_, &n, images_.data()));
  finished_.resize(n);
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  for (auto& s : finished_) ADJ_VK(vkCreateSemaphore(ctx_.device(), &si, nullptr, &s));
}

}  // namespace adj::render
