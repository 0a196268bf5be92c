#include "render/target.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "render/context.h"
#include "render/memory.h"
#include "render/vk_check.h"

namespace adj::render {

VkSampleCountFlagBits pick_msaa(const Context& ctx, int wanted) {
  const auto& limits = ctx.properties().limits;
  VkSampleCountFlags ok = limits.framebufferColorSampleCounts & limits.framebufferDepthSampleCounts;
  if (wanted >= 4 && (ok & VK_SAMPLE_COUNT_4_BIT)) return VK_SAMPLE_COUNT_4_BIT;
  return VK_SAMPLE_COUNT_1_BIT;
}

RenderTarget::RenderTarget(const Context& ctx, VkExtent2D extent, VkSampleCountFlagBits samples)
    : ctx_(ctx), samples_(samples) {
  const bool msaa = samples_ != VK_SAMPLE_COUNT_1_BIT;

  // attachments: 0 color (msaa or final), 1 depth, 2 resolve (msaa only)
  std::vector<VkAttachmentDescription> att(msaa ? 3 : 2);
  att[0].format = k_color_format;
  att[0].samples = samples_;
  att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[0].storeOp = msaa ? VK_ATTACHMENT_STORE_OP_DONT_CARE : VK_ATTACHMENT_STORE_OP_STORE;
  att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[0].finalLayout = msaa ? VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
                            : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  att[1] = att[0];
  att[1].format = k_depth_format;
  att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
  if (msaa) {
    att[2] = att[0];
    att[2].samples = VK_SAMPLE_COUNT_1_BIT;
    att[2].loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att[2].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att[2].finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  }
  VkAttachmentReference color_ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkAttachmentReference depth_ref{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkAttachmentReference resolve_ref{2, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};

  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &color_ref;
  sub.pDepthStencilAttachment = &depth_ref;
  if (msaa) sub.pResolveAttachments = &resolve_ref;

  // in: the previous frame's blit/readback and depth writes; out: this frame's transfer
  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT |
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                         VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[0].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                         VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                         VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
                          VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;

  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = static_cast<uint32_t>(att.size());
  rp.pAttachments = att.data();
  rp.subpassCount = 1;
  rp.pSubpasses = &sub;
  rp.dependencyCount = 2;
  rp.pDependencies = deps;
  ADJ_VK(vkCreateRenderPass(ctx_.device(), &rp, nullptr, &render_pass_));

  // the overlay pass: the single-sample color image, loaded and stored; before it, the scene
  // pass's resolve or restore_scene's copy wrote that image
  VkAttachmentDescription over = att[0];
  over.samples = VK_SAMPLE_COUNT_1_BIT;
  over.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
  over.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  over.initialLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  over.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  VkSubpassDescription over_sub{};
  over_sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  over_sub.colorAttachmentCount = 1;
  over_sub.pColorAttachments = &color_ref;
  VkSubpassDependency over_deps[2] = {deps[0], deps[1]};
  over_deps[0].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  over_deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  over_deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT;
  over_deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  rp.attachmentCount = 1;
  rp.pAttachments = &over;
  rp.pSubpasses = &over_sub;
  rp.pDependencies = over_deps;
  ADJ_VK(vkCreateRenderPass(ctx_.device(), &rp, nullptr, &overlay_pass_));

  color_.extent = extent;
  create_images();
}

RenderTarget::~RenderTarget() {
  destroy_images();
  if (render_pass_) vkDestroyRenderPass(ctx_.device(), render_pass_, nullptr);
  if (overlay_pass_) vkDestroyRenderPass(ctx_.device(), overlay_pass_, nullptr);
}

void RenderTarget::resize(VkExtent2D extent) {
  if (extent.width == color_.extent.width && extent.height == color_.extent.height) return;
  vkDeviceWaitIdle(ctx_.device());
  destroy_images();
  color_.extent = extent;
  create_images();
}

void RenderTarget::create_scene_pass(ScenePass& p, VkExtent2D extent, bool own_color) {
  const bool msaa = samples_ != VK_SAMPLE_COUNT_1_BIT;
  if (own_color)
    p.color =
        create_image(ctx_, extent, k_color_format,
                     VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                     VK_IMAGE_ASPECT_COLOR_BIT);
  if (msaa)
    p.msaa = create_image(ctx_, extent, k_color_format,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT,
                          VK_IMAGE_ASPECT_COLOR_BIT, samples_);
  p.depth = create_image(ctx_, extent, k_depth_format, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                         VK_IMAGE_ASPECT_DEPTH_BIT, samples_);
  VkImageView color = own_color ? p.color.view : color_.view;
  VkImageView views[3] = {msaa ? p.msaa.view : color, p.depth.view, color};
  VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fb.renderPass = render_pass_;
  fb.attachmentCount = msaa ? 3 : 2;
  fb.pAttachments = views;
  fb.width = extent.width;
  fb.height = extent.height;
  fb.layers = 1;
  ADJ_VK(vkCreateFramebuffer(ctx_.device(), &fb, nullptr, &p.framebuffer));
}

void RenderTarget::destroy_scene_pass(ScenePass& p) {
  if (p.framebuffer) vkDestroyFramebuffer(ctx_.device(), p.framebuffer, nullptr);
  p.framebuffer = VK_NULL_HANDLE;
  destroy(ctx_, p.color);
  destroy(ctx_, p.msaa);
  destroy(ctx_, p.depth);
}

void RenderTarget::create_images() {
  VkExtent2D extent = color_.extent;
  color_ = create_image(ctx_, extent, k_color_format,
                        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                            VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                        VK_IMAGE_ASPECT_COLOR_BIT);
  create_scene_pass(full_, extent, /*own_color=*/false);
  VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fb.renderPass = overlay_pass_;
  fb.attachmentCount = 1;
  fb.pAttachments = &color_.view;
  fb.width = extent.width;
  fb.height = extent.height;
  fb.layers = 1;
  ADJ_VK(vkCreateFramebuffer(ctx_.device(), &fb, nullptr, &overlay_framebuffer_));
  saved_ = create_image(ctx_, extent, k_color_format,
                        VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                            VK_IMAGE_USAGE_SAMPLED_BIT,  // SAMPLED: create_image makes a view
                        VK_IMAGE_ASPECT_COLOR_BIT);
}

void RenderTarget::destroy_images() {
  destroy_scene_pass(full_);
  destroy_scene_pass(reduced_);
  if (overlay_framebuffer_) vkDestroyFramebuffer(ctx_.device(), overlay_framebuffer_, nullptr);
  overlay_framebuffer_ = VK_NULL_HANDLE;
  destroy(ctx_, saved_);
  scene_saved_ = false;
  color_written_ = false;
  VkExtent2D extent = color_.extent;
  destroy(ctx_, color_);
  color_.extent = extent;
}

void RenderTarget::set_scene_scale(float scale) {
  scale = scale > 0.0f && scale < 1.0f ? scale : 1.0f;
  if (scale == scene_scale_) return;
  scene_scale_ = scale;
  if (reduced_.framebuffer) {  // another reduced size: made again on the next begin()
    vkDeviceWaitIdle(ctx_.device());
    destroy_scene_pass(reduced_);
  }
}

void RenderTarget::set_scene_columns(uint32_t x0, uint32_t x1) {
  scene_x0_ = x0;
  scene_x1_ = x1;
}

VkExtent2D RenderTarget::scene_extent() const {
  if (scene_scale_ >= 1.0f) return color_.extent;
  auto scaled = [&](uint32_t n) { return std::max(1u, uint32_t(float(n) * scene_scale_ + 0.5f)); };
  return {scaled(color_.extent.width), scaled(color_.extent.height)};
}

void RenderTarget::begin(VkCommandBuffer cmd, const float clear_rgba[4]) {
  const VkExtent2D extent = scene_extent();
  const bool reduced = scene_scale_ < 1.0f;
  if (reduced && !reduced_.framebuffer) create_scene_pass(reduced_, extent, /*own_color=*/true);
  VkClearValue clears[3]{};
  for (int i = 0; i < 4; ++i) clears[0].color.float32[i] = clear_rgba[i];
  clears[1].depthStencil = {1.0f, 0};
  clears[2] = clears[0];
  VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  bi.renderPass = render_pass_;
  bi.framebuffer = reduced ? reduced_.framebuffer : full_.framebuffer;
  bi.renderArea = {{0, 0}, extent};
  bi.clearValueCount = samples_ != VK_SAMPLE_COUNT_1_BIT ? 3 : 2;
  bi.pClearValues = clears;
  vkCmdBeginRenderPass(cmd, &bi, VK_SUBPASS_CONTENTS_INLINE);
  in_scene_pass_ = true;

  VkViewport vp{0, 0, float(extent.width), float(extent.height), 0, 1};
  VkRect2D sc{{0, 0}, extent};
  vkCmdSetViewport(cmd, 0, 1, &vp);
  vkCmdSetScissor(cmd, 0, 1, &sc);
}

void RenderTarget::begin_overlay(VkCommandBuffer cmd) {
  in_scene_pass_ = false;
  VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  bi.renderPass = overlay_pass_;
  bi.framebuffer = overlay_framebuffer_;
  bi.renderArea = {{0, 0}, color_.extent};
  vkCmdBeginRenderPass(cmd, &bi, VK_SUBPASS_CONTENTS_INLINE);
  VkViewport vp{0, 0, float(color_.extent.width), float(color_.extent.height), 0, 1};
  VkRect2D sc{{0, 0}, color_.extent};
  vkCmdSetViewport(cmd, 0, 1, &vp);
  vkCmdSetScissor(cmd, 0, 1, &sc);
}

void RenderTarget::end(VkCommandBuffer cmd) {
  vkCmdEndRenderPass(cmd);
  if (std::exchange(in_scene_pass_, false) && scene_scale_ < 1.0f) stretch_scene(cmd);
  color_written_ = true;  // every pass leaves color_ in TRANSFER_SRC_OPTIMAL
}

void RenderTarget::stretch_scene(VkCommandBuffer cmd) const {
  // the color image's earlier users: the last frame's overlay pass, blit and read-back; the
  // scene pass's dependency made the reduced image's writes visible to transfer reads. Only
  // the given columns are stretched over: the rest keeps the last frame (after a resize there
  // is none, and all columns are)
  const bool keep = color_written_;
  image_barrier(cmd, color_.image, VK_IMAGE_ASPECT_COLOR_BIT,
                keep ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL : VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  const VkExtent2D from = scene_extent(), to = color_.extent;
  const uint32_t x1 = keep ? std::min(scene_x1_, to.width) : to.width, x0 = keep ? std::min(scene_x0_, x1) : 0;
  const float sx = float(from.width) / float(to.width);
  VkImageBlit b{};
  b.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  b.dstSubresource = b.srcSubresource;
  b.srcOffsets[0] = {int32_t(float(x0) * sx + 0.5f), 0, 0};
  b.srcOffsets[1] = {std::max(b.srcOffsets[0].x + 1, int32_t(float(x1) * sx + 0.5f)), int32_t(from.height), 1};
  b.dstOffsets[0] = {int32_t(x0), 0, 0};
  b.dstOffsets[1] = {int32_t(x1), int32_t(to.height), 1};
  vkCmdBlitImage(cmd, reduced_.color.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, color_.image,
                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &b, VK_FILTER_LINEAR);
  image_barrier(
      cmd, color_.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
}

namespace {

void copy_color(VkCommandBuffer cmd, VkImage from, VkImage to, VkExtent2D e) {
  VkImageCopy c{};
  c.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  c.dstSubresource = c.srcSubresource;
  c.extent = {e.width, e.height, 1};
  vkCmdCopyImage(cmd, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &c);
}

}  // namespace

void RenderTarget::save_scene(VkCommandBuffer cmd) {
  // the scene pass's dependency made its color writes visible to transfer reads; the saved
  // image's earlier readers (restore_scene) are transfers too
  image_barrier(cmd, saved_.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  copy_color(cmd, color_.image, saved_.image, color_.extent);
  image_barrier(cmd, saved_.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  scene_saved_ = true;
}

void RenderTarget::restore_scene(VkCommandBuffer cmd) {
  color_written_ = true;
  // the color image's earlier users: the last frame's overlay pass, blit and read-back
  image_barrier(cmd, color_.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_WRITE_BIT);
  copy_color(cmd, saved_.image, color_.image, color_.extent);
  image_barrier(cmd, color_.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                    VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
}

}  // namespace adj::render
