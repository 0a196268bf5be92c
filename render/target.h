#pragma once
// The offscreen image every frame is drawn into, windowed or headless: color (RGBA8),
// depth, optional MSAA with a resolve. The window gets it by a blit; captures read it back.
#include <vulkan/vulkan.h>

#include "render/memory.h"

namespace adj::render {

class Context;

class RenderTarget {
 public:
  static constexpr VkFormat k_color_format = VK_FORMAT_R8G8B8A8_UNORM;
  static constexpr VkFormat k_depth_format = VK_FORMAT_D32_SFLOAT;

  RenderTarget(const Context& ctx, VkExtent2D extent, VkSampleCountFlagBits samples);
  ~RenderTarget();
  RenderTarget(const RenderTarget&) = delete;
  RenderTarget& operator=(const RenderTarget&) = delete;

  // new size; the render pass stays (pipelines made against it remain valid)
  void resize(VkExtent2D extent);

  VkExtent2D extent() const { return color_.extent; }
  VkRenderPass render_pass() const { return render_pass_; }
  VkFramebuffer framebuffer() const { return framebuffer_; }
  VkSampleCountFlagBits samples() const { return samples_; }
  // the single-sample color image, in TRANSFER_SRC_OPTIMAL layout after a frame
  VkImage color_image() const { return color_.image; }

  // begin the render pass, clearing color and depth; viewport and scissor cover the target
  void begin(VkCommandBuffer cmd, const float clear_rgba[4]) const;
  void end(VkCommandBuffer cmd) const;

 private:
  void create_images();
  void destroy_images();

  const Context& ctx_;
  VkSampleCountFlagBits samples_;
  Image color_;   // resolved (or only) color
  Image msaa_;    // multisampled color, when samples_ > 1
  Image depth_;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
};

// the largest of {4, 1} samples that the device supports for color and depth
VkSampleCountFlagBits pick_msaa(const Context& ctx, int wanted);

}  // namespace adj::render
