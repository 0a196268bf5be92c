#pragma once
// Headless rendering for the command line: a Vulkan context, an offscreen target, the
// scene renderer and (optionally) an ImGui layer for captions and plots, frames captured
// through the non-stalling read-back ring.
#include <functional>
#include <memory>
#include <optional>

#include "render/camera.h"
#include "render/draw_list.h"
#include "render/frame_loop.h"

namespace adj::render {
class Context;
}

namespace adj::app {

class Offscreen {
 public:
  // throws render::Error when no Vulkan device can be had
  Offscreen(uint32_t width, uint32_t height, bool validation, bool with_ui);
  ~Offscreen();

  // one frame: the scene, then whatever `ui` draws with ImGui (with_ui only); captured
  void frame(const render::DrawList& list, const render::Camera& camera, const std::function<void()>& ui = {});
  // the same, with the list built once the frame's slot is free (after FrameLoop::begin_frame):
  // a list over per-frame buffers (app/gpu_view.h) fills them in `list_for(frame_index)`
  void frame(const std::function<const render::DrawList&(uint64_t frame)>& list_for, const render::Camera& camera,
             const std::function<void()>& ui = {});

  render::Context& context();
  render::FrameLoop& loop();

  bool pop_capture(render::Capture& out);     // finished frames, in order, never waiting
  void finish_captures();                     // wait for the frames in flight
  std::optional<render::Capture> take_capture();  // the newest, waiting

  int validation_errors() const;
  float aspect() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adj::app
