#pragma once
// Dear ImGui's Vulkan backend (1.86) bound to our render target. The ImGui context itself
// belongs to the caller and must be current while this object lives.
#include <vulkan/vulkan.h>

struct ImDrawData;

namespace adj::render {

class Context;
class RenderTarget;

class ImGuiVulkan {
 public:
  // drawn in the target's scene pass, or (overlay) in its overlay pass
  ImGuiVulkan(Context& ctx, const RenderTarget& target, uint32_t image_count, bool overlay = false);
  ~ImGuiVulkan();
  ImGuiVulkan(const ImGuiVulkan&) = delete;
  ImGuiVulkan& operator=(const ImGuiVulkan&) = delete;

  void new_frame();
  void draw(ImDrawData* data, VkCommandBuffer cmd);

 private:
  Context& ctx_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

}  // namespace adj::render
