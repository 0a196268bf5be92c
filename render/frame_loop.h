#pragma once
// Frames in flight: command buffers, fences, the blit to the window (when there is one)
// and read-back of finished frames into host memory (screenshots, video).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "render/memory.h"

namespace adj::render {

class Context;
class RenderTarget;
class Swapchain;

struct Capture {
  uint64_t frame = 0;  // FrameLoop::frame_index() of the frame
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

  // the newest captured frame, waiting for the GPU to finish it (older ready captures
  // are dropped); empty if none was asked
  std::optional<Capture> take_capture();

  // video: captured frames in order, as soon as the GPU has finished them, never waiting.
  // A slot's capture is also collected when the slot is reused, so none is lost: a reader
  // that calls pop_capture() every frame gets every frame, one or two frames late.
  bool pop_capture(Capture& out);
  // wait for every capture still in flight (end of a recording); then pop_capture() them
  void finish_captures();

  // interop (render/interop.h): the next end_frame's submit also waits for `timeline` to
  // reach `value` before `stage` (CUDA has written the buffers) and sets another value when
  // done (Vulkan has read them); both apply to one submit only
  void add_timeline_wait(VkSemaphore timeline, uint64_t value, VkPipelineStageFlags stage);
  void add_timeline_signal(VkSemaphore timeline, uint64_t value);

  uint64_t frame_index() const { return frame_; }
  void wait_idle();

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkSemaphore acquired = VK_NULL_HANDLE;
    Buffer readback;
    bool capture_pending = false;
    uint64_t capture_frame = 0;
    VkExtent2D capture_extent{};
  };

  // move a finished slot's capture into ready_
  void collect(Slot& s);

  const Context& ctx_;
  RenderTarget& target_;
  Swapchain* swapchain_;
  std::vector<Slot> slots_;
  uint64_t frame_ = 0;
  uint32_t image_index_ = 0;
  bool out_of_date_ = false;
  std::deque<Capture> ready_;  // finished captures, oldest first
  struct TimelineOp {
    VkSemaphore semaphore;
    uint64_t value;
    VkPipelineStageFlags stage;
  };
  std::vector<TimelineOp> timeline_waits_, timeline_signals_;  // for the next submit
};

}  // namespace adj::render
