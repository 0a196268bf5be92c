#include "render/scene_passes.h"

#include <cstring>

#include "render/context.h"
#include "render/vk_check.h"

namespace adj::render {

// shadow map ---------------------------------------------------------------------------

ShadowMap::ShadowMap(Context& ctx, uint32_t size) : ctx_(ctx), size_(size) {
  image_ = create_image(ctx, {size, size}, k_format,
                        VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                        VK_IMAGE_ASPECT_DEPTH_BIT);

  VkAttachmentDescription att{};
  att.format = k_format;
  att.samples = VK_SAMPLE_COUNT_1_BIT;
  att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att.finalLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.pDepthStencilAttachment = &ref;

  // in: earlier frames sampled it (write after read); out: this frame's fragment shaders
  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
  deps[0].srcAccessMask = 0;
  deps[0].dstStageMask =
      VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[0].dstAccessMask =
      VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask =
      VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[1].srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
  deps[1].dstAccessMask = VK_ACCESS_SHADER_READ_BIT;

  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = 1;
  rp.pAttachments = &att;
  rp.subpassCount = 1;
  rp.pSubpasses = &sub;
  rp.dependencyCount = 2;
  rp.pDependencies = deps;
  ADJ_VK(vkCreateRenderPass(ctx.device(), &rp, nullptr, &pass_));

  VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fb.renderPass = pass_;
  fb.attachmentCount = 1;
  fb.pAttachments = &image_.view;
  fb.width = fb.height = size;
  fb.layers = 1;
  ADJ_VK(vkCreateFramebuffer(ctx.device(), &fb, nullptr, &framebuffer_));

  VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  si.magFilter = si.minFilter = VK_FILTER_LINEAR;
  si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  si.addressModeU = si.addressModeV = si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER;
  si.borderColor = VK_BORDER_COLOR_FLOAT_OPAQUE_WHITE;
  si.compareEnable = VK_TRUE;
  si.compareOp = VK_COMPARE_OP_LESS_OR_EQUAL;
  si.maxLod = 0.0f;
  ADJ_VK(vkCreateSampler(ctx.device(), &si, nullptr, &sampler_));

  // sampled before the first shadow pass (shadows off): give it its sampling layout now
  ctx.run_once([&](VkCommandBuffer cmd) {
    image_barrier(cmd, image_.image, VK_IMAGE_ASPECT_DEPTH_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0,
                  VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  });
}

ShadowMap::~ShadowMap() {
  vkDestroySampler(ctx_.device(), sampler_, nullptr);
  vkDestroyFramebuffer(ctx_.device(), framebuffer_, nullptr);
  vkDestroyRenderPass(ctx_.device(), pass_, nullptr);
  destroy(ctx_, image_);
}

void ShadowMap::begin(VkCommandBuffer cmd) const {
  VkClearValue clear{};
  clear.depthStencil = {1.0f, 0};
  VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  bi.renderPass = pass_;
  bi.framebuffer = framebuffer_;
  bi.renderArea = {{0, 0}, {size_, size_}};
  bi.clearValueCount = 1;
  bi.pClearValues = &clear;
  vkCmdBeginRenderPass(cmd, &bi, VK_SUBPASS_CONTENTS_INLINE);
  VkViewport vp{0, 0, float(size_), float(size_), 0, 1};
  VkRect2D sc{{0, 0}, {size_, size_}};
  vkCmdSetViewport(cmd, 0, 1, &vp);
  vkCmdSetScissor(cmd, 0, 1, &sc);
}

// id target ----------------------------------------------------------------------------

IdTarget::IdTarget(Context& ctx) : ctx_(ctx) {
  VkAttachmentDescription att[2]{};
  att[0].format = k_format;
  att[0].samples = VK_SAMPLE_COUNT_1_BIT;
  att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[0].finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  att[1] = att[0];
  att[1].format = VK_FORMAT_D32_SFLOAT;
  att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
  VkAttachmentReference color_ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkAttachmentReference depth_ref{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &color_ref;
  sub.pDepthStencilAttachment = &depth_ref;

  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[0].srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                         VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                         VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;

  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = 2;
  rp.pAttachments = att;
  rp.subpassCount = 1;
  rp.pSubpasses = &sub;
  rp.dependencyCount = 2;
  rp.pDependencies = deps;
  ADJ_VK(vkCreateRenderPass(ctx.device(), &rp, nullptr, &pass_));
  readback_ = create_buffer(ctx, 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT, BufferMemory::host_mapped);
}

IdTarget::~IdTarget() {
  destroy_images();
  destroy(ctx_, readback_);
  vkDestroyRenderPass(ctx_.device(), pass_, nullptr);
}

void IdTarget::destroy_images() {
  if (framebuffer_) vkDestroyFramebuffer(ctx_.device(), framebuffer_, nullptr);
  framebuffer_ = VK_NULL_HANDLE;
  destroy(ctx_, color_);
  destroy(ctx_, depth_);
}

void IdTarget::resize(VkExtent2D extent) {
  if (framebuffer_ && extent.width == extent_.width && extent.height == extent_.height) return;
  destroy_images();
  extent_ = extent;
  color_ = create_image(ctx_, extent, k_format,
                        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                        VK_IMAGE_ASPECT_COLOR_BIT);
  depth_ = create_image(ctx_, extent, VK_FORMAT_D32_SFLOAT,
                        VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, VK_IMAGE_ASPECT_DEPTH_BIT);
  VkImageView views[2] = {color_.view, depth_.view};
  VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fb.renderPass = pass_;
  fb.attachmentCount = 2;
  fb.pAttachments = views;
  fb.width = extent.width;
  fb.height = extent.height;
  fb.layers = 1;
  ADJ_VK(vkCreateFramebuffer(ctx_.device(), &fb, nullptr, &framebuffer_));
}

void IdTarget::begin(VkCommandBuffer cmd, uint32_t x, uint32_t y) const {
  VkClearValue clears[2]{};
  clears[1].depthStencil = {1.0f, 0};
  VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  bi.renderPass = pass_;
  bi.framebuffer = framebuffer_;
  bi.renderArea = {{0, 0}, extent_};
  bi.clearValueCount = 2;
  bi.pClearValues = clears;
  vkCmdBeginRenderPass(cmd, &bi, VK_SUBPASS_CONTENTS_INLINE);
  VkViewport vp{0, 0, float(extent_.width), float(extent_.height), 0, 1};
  VkRect2D sc{{int32_t(x), int32_t(y)}, {1, 1}};
  vkCmdSetViewport(cmd, 0, 1, &vp);
  vkCmdSetScissor(cmd, 0, 1, &sc);
}

void IdTarget::end_and_copy(VkCommandBuffer cmd, uint32_t x, uint32_t y) const {
  vkCmdEndRenderPass(cmd);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageOffset = {int32_t(x), int32_t(y), 0};
  region.imageExtent = {1, 1, 1};
  vkCmdCopyImageToBuffer(cmd, color_.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback_.buffer,
                         1, &region);
  VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  bb.buffer = readback_.buffer;
  bb.size = VK_WHOLE_SIZE;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
                       nullptr, 1, &bb, 0, nullptr);
}

// upload arena -------------------------------------------------------------------------

UploadArena::~UploadArena() { destroy(ctx_, buffer_); }

void UploadArena::reset(VkDeviceSize bytes) {
  used_ = 0;
  if (buffer_.size >= bytes && buffer_.buffer) return;
  destroy(ctx_, buffer_);
  ++generation_;
  VkDeviceSize size = 1 << 16;
  while (size < bytes) size *= 2;
  buffer_ = create_buffer(ctx_, size,
                          VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDEX_BUFFER_BIT |
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                          BufferMemory::host_mapped);
}

VkDeviceSize UploadArena::reserve(size_t bytes, void** host) {
  VkDeviceSize at = (used_ + k_align - 1) / k_align * k_align;
  if (at + bytes > buffer_.size)
    throw Error("UploadArena: frame needs more than was reserved (a bug in the size pass)");
  used_ = at + bytes;
  *host = static_cast<char*>(buffer_.mapped) + at;
  return at;
}

VkDeviceSize UploadArena::push(const void* data, size_t bytes) {
  void* dst = nullptr;
  VkDeviceSize at = reserve(bytes, &dst);
  if (bytes) std::memcpy(dst, data, bytes);
  return at;
}

}  // namespace adj::render
