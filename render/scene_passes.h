#pragma once
// The scene renderer's own passes and per-frame memory: the shadow map (depth only), the
// object-ID target for picking (R32G32_UINT), and a linear upload buffer per frame slot.
// Internal to render/ (scene_renderer.cpp).
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "render/memory.h"

namespace adj::render {

class Context;

// depth-only render pass into a square D32 image, left SHADER_READ_ONLY for sampling
class ShadowMap {
 public:
  static constexpr VkFormat k_format = VK_FORMAT_D32_SFLOAT;
  ShadowMap(Context& ctx, uint32_t size);
  ~ShadowMap();
  ShadowMap(const ShadowMap&) = delete;
  ShadowMap& operator=(const ShadowMap&) = delete;

  uint32_t size() const { return size_; }
  VkRenderPass render_pass() const { return pass_; }
  VkImageView view() const { return image_.view; }
  VkSampler sampler() const { return sampler_; }  // comparison sampler, white border
  void begin(VkCommandBuffer cmd) const;          // clears to depth 1, sets viewport/scissor
  void end(VkCommandBuffer cmd) const { vkCmdEndRenderPass(cmd); }

 private:
  Context& ctx_;
  uint32_t size_;
  Image image_;
  VkRenderPass pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
  VkSampler sampler_ = VK_NULL_HANDLE;
};

// object ids: (object id, element) per pixel, cleared to 0; one pixel is read back
class IdTarget {
 public:
  static constexpr VkFormat k_format = VK_FORMAT_R32G32_UINT;
  explicit IdTarget(Context& ctx);
  ~IdTarget();
  IdTarget(const IdTarget&) = delete;
  IdTarget& operator=(const IdTarget&) = delete;

  VkRenderPass render_pass() const { return pass_; }
  void resize(VkExtent2D extent);  // (re)creates the images when the extent changes
  // begin the pass with the scissor on one pixel: only it is shaded
  void begin(VkCommandBuffer cmd, uint32_t x, uint32_t y) const;
  // end the pass and copy pixel (x, y) to the host buffer
  void end_and_copy(VkCommandBuffer cmd, uint32_t x, uint32_t y) const;
  const uint32_t* pixel() const { return static_cast<const uint32_t*>(readback_.mapped); }

 private:
  void destroy_images();
  Context& ctx_;
  VkExtent2D extent_{};
  Image color_, depth_;
  Buffer readback_;
  VkRenderPass pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
};

// a host-mapped buffer filled front to back during one frame (vertex, index, storage data)
class UploadArena {
 public:
  explicit UploadArena(const Context& ctx) : ctx_(ctx) {}
  ~UploadArena();
  UploadArena(const UploadArena&) = delete;
  UploadArena& operator=(const UploadArena&) = delete;

  // start a frame that needs up to `bytes`; grows (reallocates) only between frames
  void reset(VkDeviceSize bytes);
  // copy and return the byte offset of the copy (16-byte aligned)
  VkDeviceSize push(const void* data, size_t bytes);
  // reserve uninitialized space; returns its offset and a host pointer to fill
  VkDeviceSize reserve(size_t bytes, void** host);
  VkBuffer buffer() const { return buffer_.buffer; }
  VkDeviceSize size() const { return buffer_.size; }
  // bumped by every reallocation: descriptors of the old buffer are stale (a new buffer
  // may reuse the old handle's value, so compare generations, not handles)
  uint64_t generation() const { return generation_; }

  static constexpr VkDeviceSize k_align = 16;

 private:
  const Context& ctx_;
  Buffer buffer_;
  VkDeviceSize used_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace adj::render
