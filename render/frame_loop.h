#pragma once
// Frames in flight: command buffers, fences, the blit to the window (when there is one)
// and read-back of finished frames into host memory (screenshots, video).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "render/memory.h"

namespace adj::render {

class Context;
class RenderTarget;
class Swapchain;

struct Capture {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgba;  // width*height*4 bytes, top row first
};

class FrameLoop {
 public:
  static constexpr uint32_t k_frames_in_flight = 2;  // <= swapchain images, as ImGui 1.86 needs

  // swapchain may be null: headless, frames stay offscreen
  FrameLoop(const Context& ctx, RenderTarget& target, Swapchain* swapchain);
  ~FrameLoop();
  FrameLoop(const FrameLoop&) = delete;
  FrameLoop& operator=(const FrameLoop&) = delete;

  // wait for the frame slot, acquire a window image; null when the swapchain must be
  // recreated first (window resized): call swapchain_out_of_date() and try again
  VkCommandBuffer begin_frame();
  // blit to the window and present; with capture, copy the frame to a host buffer
  void end_frame(bool capture);

  bool swapchain_out_of_date() const { return out_of_date_; }
  void swapchain_recreated() { out_of_date_ = false; }

  // the newest captured frame, waiting for the GPU to finish it; empty if none was asked
  std::optional<Capture> take_capture();

  uint64_t frame_index() const { return frame_; }
  void wait_idle();

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkSemaphore acquired = VK_NULL_HANDLE;
    Buffer readback;
    bool capture_pending = false;
    VkExtent2D capture_extent{};
  };

  const Context& ctx_;
  RenderTarget& target_;
  Swapchain* swapchain_;
  std::vector<Slot> slots_;
  uint64_t frame_ = 0;
  uint32_t image_index_ = 0;
  bool out_of_date_ = false;
  int last_capture_slot_ = -1;
};

}  // namespace adj::render
