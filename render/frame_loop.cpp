#include "render/frame_loop.h"

#include <cstring>

#include "render/context.h"
#include "render/swapchain.h"
#include "render/target.h"
#include "render/vk_check.h"

namespace adj::render {

FrameLoop::FrameLoop(const Context& ctx, RenderTarget& target, Swapchain* swapchain)
    : ctx_(ctx), target_(target), swapchain_(swapchain), slots_(k_frames_in_flight) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = ctx_.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  for (Slot& s : slots_) {
    ADJ_VK(vkAllocateCommandBuffers(ctx_.device(), &ai, &s.cmd));
    ADJ_VK(vkCreateFence(ctx_.device(), &fi, nullptr, &s.fence));
    ADJ_VK(vkCreateSemaphore(ctx_.device(), &si, nullptr, &s.acquired));
  }
}

FrameLoop::~FrameLoop() {
  wait_idle();
  for (Slot& s : slots_) {
    vkFreeCommandBuffers(ctx_.device(), ctx_.command_pool(), 1, &s.cmd);
    vkDestroyFence(ctx_.device(), s.fence, nullptr);
    vkDestroySemaphore(ctx_.device(), s.acquired, nullptr);
    destroy(ctx_, s.readback);
  }
}

void FrameLoop::wait_idle() { vkDeviceWaitIdle(ctx_.device()); }

VkCommandBuffer FrameLoop::begin_frame() {
  Slot& s = slots_[frame_ % slots_.size()];
  ADJ_VK(vkWaitForFences(ctx_.device(), 1, &s.fence, VK_TRUE, UINT64_MAX));
  collect(s);  // its read-back buffer is about to be reused

  if (swapchain_) {
    VkResult r = vkAcquireNextImageKHR(ctx_.device(), swapchain_->handle(), UINT64_MAX,
                                       s.acquired, VK_NULL_HANDLE, &image_index_);
    if (r == VK_ERROR_OUT_OF_DATE_KHR) {
      out_of_date_ = true;
      return VK_NULL_HANDLE;
    }
    if (r != VK_SUCCESS && r != VK_SUBOPTIMAL_KHR) throw_vk(r, "vkAcquireNextImageKHR", __FILE__, __LINE__);
  }
  ADJ_VK(vkResetFences(ctx_.device(), 1, &s.fence));
  ADJ_VK(vkResetCommandBuffer(s.cmd, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  ADJ_VK(vkBeginCommandBuffer(s.cmd, &bi));
  return s.cmd;
}

void FrameLoop::end_frame(bool capture) {
  Slot& s = slots_[frame_ % slots_.size()];
  VkCommandBuffer cmd = s.cmd;
  VkExtent2D src = target_.extent();

  // read back: the target is in TRANSFER_SRC_OPTIMAL after its render pass
  s.capture_pending = capture;
  if (capture) {
    VkDeviceSize bytes = VkDeviceSize(src.width) * src.height * 4;
    if (s.readback.size < bytes) {
      destroy(ctx_, s.readback);
      s.readback = create_buffer(ctx_, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 BufferMemory::host_mapped);
    }
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {src.width, src.height, 1};
    vkCmdCopyImageToBuffer(cmd, target_.color_image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           s.readback.buffer, 1, &region);
    VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    bb.buffer = s.readback.buffer;
    bb.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
                         nullptr, 1, &bb, 0, nullptr);
    s.capture_extent = src;
    s.capture_frame = frame_;
  }

  // blit to the window image
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSemaphore finished = VK_NULL_HANDLE;
  if (swapchain_) {
    VkImage dst = swapchain_->image(image_index_);
    VkExtent2D de = swapchain_->extent();
    image_barrier(cmd, dst, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    // same size: texel for texel (nearest is exact there, and far cheaper on a CPU driver)
    const bool same_size = src.width == de.width && src.height == de.height;
    VkImageBlit blit{};
    blit.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    blit.srcOffsets[1] = {int32_t(src.width), int32_t(src.height), 1};
    blit.dstSubresource = blit.srcSubresource;
    blit.dstOffsets[1] = {int32_t(de.width), int32_t(de.height), 1};
    vkCmdBlitImage(cmd, target_.color_image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst,
                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &blit,
                   same_size ? VK_FILTER_NEAREST : VK_FILTER_LINEAR);
    image_barrier(cmd, dst, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0);
    finished = swapchain_->render_finished(image_index_);
  }
  ADJ_VK(vkEndCommandBuffer(cmd));

  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  if (swapchain_) {
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &s.acquired;
    si.pWaitDstStageMask = &wait_stage;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &finished;
  }
  // interop timelines beside the binary semaphores (whose values are ignored)
  std::vector<VkSemaphore> waits, signals;
  std::vector<VkPipelineStageFlags> stages;
  std::vector<uint64_t> wait_values, signal_values;
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  if (!timeline_waits_.empty() || !timeline_signals_.empty()) {
    if (swapchain_) {
      waits.push_back(s.acquired);
      stages.push_back(wait_stage);
      wait_values.push_back(0);
      signals.push_back(finished);
      signal_values.push_back(0);
    }
    for (const TimelineOp& w : timeline_waits_) {
      waits.push_back(w.semaphore);
      stages.push_back(w.stage);
      wait_values.push_back(w.value);
    }
    for (const TimelineOp& g : timeline_signals_) {
      signals.push_back(g.semaphore);
      signal_values.push_back(g.value);
    }
    si.waitSemaphoreCount = uint32_t(waits.size());
    si.pWaitSemaphores = waits.data();
    si.pWaitDstStageMask = stages.data();
    si.signalSemaphoreCount = uint32_t(signals.size());
    si.pSignalSemaphores = signals.data();
    ti.waitSemaphoreValueCount = uint32_t(wait_values.size());
    ti.pWaitSemaphoreValues = wait_values.data();
    ti.signalSemaphoreValueCount = uint32_t(signal_values.size());
    ti.pSignalSemaphoreValues = signal_values.data();
    si.pNext = &ti;
  }
  ADJ_VK(vkQueueSubmit(ctx_.queue(), 1, &si, s.fence));
  timeline_waits_.clear();
  timeline_signals_.clear();

  if (swapchain_) {
    VkSwapchainKHR sc = swapchain_->handle();
    VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    pi.waitSemaphoreCount = 1;
    pi.pWaitSemaphores = &finished;
    pi.swapchainCount = 1;
    pi.pSwapchains = &sc;
    pi.pImageIndices = &image_index_;
    VkResult r = vkQueuePresentKHR(ctx_.queue(), &pi);
    if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
      out_of_date_ = true;
    else if (r != VK_SUCCESS)
      throw_vk(r, "vkQueuePresentKHR", __FILE__, __LINE__);
  }
  ++frame_;
}

void FrameLoop::collect(Slot& s) {
  if (!s.capture_pending) return;
  s.capture_pending = false;
  Capture c;
  c.frame = s.capture_frame;
  c.width = s.capture_extent.width;
  c.height = s.capture_extent.height;
  c.rgba.resize(size_t(c.width) * c.height * 4);
  std::memcpy(c.rgba.data(), s.readback.mapped, c.rgba.size());
  ready_.push_back(std::move(c));
}

bool FrameLoop::pop_capture(Capture& out) {
  // slots in frame order (oldest first): collect those the GPU has finished
  for (uint64_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[(frame_ + k) % slots_.size()];
    if (s.capture_pending && vkGetFenceStatus(ctx_.device(), s.fence) == VK_SUCCESS) collect(s);
    else if (s.capture_pending) break;  // keep the order: a later frame cannot finish first
  }
  if (ready_.empty()) return false;
  out = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

void FrameLoop::finish_captures() {
  for (uint64_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[(frame_ + k) % slots_.size()];
    if (!s.capture_pending) continue;
    ADJ_VK(vkWaitForFences(ctx_.device(), 1, &s.fence, VK_TRUE, UINT64_MAX));
    collect(s);
  }
}

std::optional<Capture> FrameLoop::take_capture() {
  finish_captures();
  if (ready_.empty()) return std::nullopt;
  Capture c = std::move(ready_.back());
  ready_.clear();
  return c;
}

void FrameLoop::add_timeline_wait(VkSemaphore timeline, uint64_t value, VkPipelineStageFlags stage) {
  timeline_waits_.push_back({timeline, value, stage});
}

void FrameLoop::add_timeline_signal(VkSemaphore timeline, uint64_t value) {
  timeline_signals_.push_back({timeline, value, 0});
}

}  // namespace adj::render
