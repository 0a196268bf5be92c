#pragma once
// The scene renderer: draws a DrawList (render/draw_list.h) seen by a Camera into a
// RenderTarget: lit meshes, sphere impostors, instanced shapes and arrows, discs, lines,
// the ground grid, one shadowed directional light. Also answers picking queries.
//
// A frame, with FrameLoop:
//   VkCommandBuffer cmd = loop.begin_frame();
//   scene.prepare(cmd, list, camera, loop.frame_index());  // uploads, shadow map
//   target.begin(cmd, clear);
//   background.draw(cmd, top, bottom);
//   scene.draw(cmd);                                        // the scene itself
//   imgui.draw(...); target.end(cmd);
//   loop.end_frame(capture);
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "render/camera.h"
#include "render/draw_list.h"
#include "render/frame_loop.h"
#include "render/memory.h"
#include "render/pipeline.h"

namespace adj::render {

class Context;
class RenderTarget;
class ShadowMap;
class IdTarget;
class UploadArena;

struct SceneRendererOptions {
  uint32_t shadow_map_size = 2048;  // texels per side
  // shadow lookups per shaded pixel, each a 2x2 hardware PCF: 4 (soft edges) or 1 (a CPU
  // rasterizer pays for every lookup over the whole ground: a quarter of the cost)
  uint32_t shadow_taps = 4;
  uint32_t frames_in_flight = FrameLoop::k_frames_in_flight;  // upload slots, one per frame
};

struct PickResult {
  ObjectId object = 0;   // the item's id (never 0: nothing pickable there gives nullopt)
  uint32_t element = 0;  // triangle, instance or segment; ~0u when the device cannot say
};

class SceneRenderer {
 public:
  SceneRenderer(Context& ctx, const RenderTarget& target, const SceneRendererOptions& options = {});
  ~SceneRenderer();
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  // outside any render pass: copy the list's host arrays into this frame slot's upload
  // buffer and render the shadow map. frame_index picks the slot (FrameLoop::frame_index();
  // its fence has been waited for). The list's host memory may be reused afterwards.
  void prepare(VkCommandBuffer cmd, const DrawList& list, const Camera& camera, uint64_t frame_index);
  // inside the target's render pass: the prepared frame
  void draw(VkCommandBuffer cmd) const;

  // the object under pixel (x, y) (top-left origin) of a view of `extent`; renders an
  // object-ID image of the list and reads one pixel back, waiting for the GPU (a few ms)
  std::optional<PickResult> pick(const DrawList& list, const Camera& camera, VkExtent2D extent, uint32_t x, uint32_t y);

  // the draws of the last prepare(); for tests and statistics
  size_t draw_count() const;

  // one recorded draw with its buffers resolved (internal, public for scene_renderer.cpp)
  struct Cmd;
  enum Kind : uint32_t {
    k_mesh,
    k_wire,
    k_shape,
    k_sphere,
    k_sphere_pulled,
    k_arrow,
    k_arrow_pulled,
    k_line,
    k_line_overlay,
    k_ground,
    k_kind_count
  };

 private:
  struct Slot;
  void create_pipelines();
  void bind_upload(Slot& slot) const;
  void ensure_quad_indices(const DrawList& list);
  void create_id_pipelines();
  void build(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  // build()'s parts, a kind of draw each
  void build_meshes(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  void build_shapes(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  void build_spheres(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  void build_glyphs(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  void build_lines(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const;
  // pixel_scale: the pass's pixels per image pixel (RenderTarget::scene_scale)
  void write_frame(void* ubo, const DrawList& list, const Camera& camera, VkExtent2D extent, float pixel_scale) const;
  void record(VkCommandBuffer cmd, const std::vector<Cmd>& cmds, const Pipeline* pipes, uint32_t view,
              bool shadow_casters_only, float pixel_scale) const;

  Context& ctx_;
  const RenderTarget& target_;
  SceneRendererOptions options_;
  std::unique_ptr<ShadowMap> shadow_;
  std::unique_ptr<IdTarget> ids_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Slot>> slots_;  // frames in flight, then one for picking
  Pipeline main_pipes_[k_kind_count];
  Pipeline shadow_pipes_[k_kind_count];
  Pipeline id_pipes_[k_kind_count];
  Buffer unit_;  // unit meshes: vertices then indices
  VkDeviceSize unit_index_offset_ = 0;
  Buffer quad_indices_;       // 4 i + {0, 1, 2, 2, 1, 3}: pulled sphere quads
  size_t quad_capacity_ = 0;  // spheres it covers
  struct Ranges;
  std::unique_ptr<Ranges> ranges_;
  std::vector<Cmd> cmds_;  // the prepared frame
  uint32_t current_slot_ = 0;
  float pixel_scale_ = 1.0f;  // of the prepared frame
  bool shadows_ = false;
  float line_width_max_ = 1.0f;
  VkDeviceSize max_storage_range_ = 0;
};

}  // namespace adj::render
