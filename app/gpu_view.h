#pragma once
// Where the particle arrays the renderer draws live and who fills them, for the three
// share paths of render/interop.h (DESIGN.md: "Render and app"):
//   cpu_mapped    the CPU backend: engine/vis writes into mapped host-visible Vulkan buffers
//   cuda_staging  CUDA without interop: device positions -> host -> the same mapped buffers
//   cuda_interop  CUDA writes straight into Vulkan buffers imported into CUDA, ordered by an
//                 exported timeline semaphore (frame k: CUDA waits 2k+1, writes, signals
//                 2k+2; the frame's submit waits 2k+2 and signals 2k+3)
// The buffers are drawn in place (render::ArrayRef::device). Host paths keep one buffer set
// per frame in flight (write after FrameLoop::begin_frame, whose fence frees the slot);
// interop keeps one set, the semaphore orders it.
#include <glm/glm.hpp>

#include <memory>
#include <string>

#include "engine/model/model.h"
#include "engine/vis/vis.h"
#include "render/draw_list.h"
#include "render/interop.h"

namespace adj::render {
class Context;
class FrameLoop;
}  // namespace adj::render

namespace adj::app {

// what the backend and the Vulkan device allow; `why` (optional) says why a lesser path
// was taken. cuda_device_matches: the Vulkan device's UUID is the CUDA device's.
struct ShareCaps {
  bool cuda_backend = false;
  bool cuda_device_matches = false;
  bool export_memory = false;      // VK_KHR_external_memory_fd
  bool export_semaphores = false;  // VK_KHR_external_semaphore_fd with timeline semaphores
};
render::SharePath choose_share_path(const ShareCaps& caps, std::string* why = nullptr);
ShareCaps share_caps(const render::Context& ctx, bool cuda_backend);

class GpuView {
 public:
  // the path to use; cuda_interop falls back to cuda_staging when an import fails (note())
  GpuView(render::Context& ctx, render::SharePath path);
  ~GpuView();
  GpuView(const GpuView&) = delete;
  GpuView& operator=(const GpuView&) = delete;

  render::SharePath path() const { return path_; }
  const std::string& note() const { return note_; }  // why the path differs from the one asked

  // what to fill: particles [begin, end) as spheres (radius from the model), and the
  // positions and normals of every particle for a surface's mesh (null: none)
  void set_layout(const Model& model, int begin, int end, const vis::Surface* surface);

  // host state (cpu_mapped, or cuda_staging after its download) into slot frame % 2
  void write(const State& state, uint64_t frame);
  // device positions (vec3<float>, particle_count) on the CUDA stream: interop writes the
  // buffers with kernels and adds the semaphore wait/signal to loop's next submit (which
  // must follow); staging downloads them, then write(). Throws render::Error on failure.
  void write_device(const vec3<float>* q, void* stream, render::FrameLoop& loop);

  // the buffers of frame `frame` as draw-list arrays
  render::ArrayRef<glm::vec4> spheres(uint64_t frame) const;
  render::ArrayRef<glm::vec3> positions(uint64_t frame) const;
  render::ArrayRef<glm::vec3> normals(uint64_t frame) const;

  double last_download_ms() const { return download_ms_; }  // staging: the device -> host copy
  uint64_t interop_frames() const { return interop_frame_; }

 private:
  struct Impl;
  render::Context& ctx_;
  render::SharePath path_;
  std::string note_;
  std::unique_ptr<Impl> impl_;
  uint64_t interop_frame_ = 0;
  double download_ms_ = 0;
};

}  // namespace adj::app
