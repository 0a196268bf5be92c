#pragma once
// The offscreen image every frame is drawn into, windowed or headless: color (RGBA8),
// depth, optional MSAA with a resolve. The window gets it by a blit; captures read it back.
//
// Two passes draw into it: the scene pass (begin/end: clear, depth, MSAA) and the overlay
// pass (begin_overlay/end: single-sample, no depth, loads what is there: the UI). Between
// them the scene can be kept (save_scene) and put back on a later frame (restore_scene)
// instead of being drawn again, when nothing in it changed:
//
//   if (unchanged && target.scene_saved()) target.restore_scene(cmd);
//   else { target.begin(cmd, clear); ...scene...; target.end(cmd); target.save_scene(cmd); }
//   target.begin_overlay(cmd); ...ui...; target.end(cmd);
//
// The scene pass can draw at a reduced resolution (set_scene_scale: a CPU rasterizer such as
// lavapipe pays for every pixel): it then draws into images of scene_extent() and end()
// stretches them over the color image with a linear filter, so the overlay pass, saves,
// captures and the window always see the full-size image.
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
  VkSampleCountFlagBits samples() const { return samples_; }
  // the single-sample color image, in TRANSFER_SRC_OPTIMAL layout after a frame
  VkImage color_image() const { return color_.image; }

  // the overlay pass: one single-sample color attachment, loaded (pipelines for the UI)
  VkRenderPass overlay_pass() const { return overlay_pass_; }

  // the scene pass's resolution as a fraction of extent() per axis, in (0, 1] (1: full
  // size); the reduced images are made on first use and kept until resize
  void set_scene_scale(float scale);
  float scene_scale() const { return scene_scale_; }
  // the size the scene pass draws at: extent() times the scale, at least 1x1
  VkExtent2D scene_extent() const;
  // the columns [x0, x1) of the full image that a reduced scene pass is stretched over (the
  // rest, under opaque panels, keeps what the last frame left there); default: all of it
  void set_scene_columns(uint32_t x0, uint32_t x1);

  // begin the scene pass, clearing color and depth; viewport and scissor cover scene_extent()
  void begin(VkCommandBuffer cmd, const float clear_rgba[4]);
  // begin the overlay pass over the color image as the last pass (or restore) left it
  void begin_overlay(VkCommandBuffer cmd);
  // end either pass; a reduced scene pass is then stretched over the color image
  void end(VkCommandBuffer cmd);

  // after the scene pass: copy its color image aside; restore_scene copies it back (the
  // color image is then as the scene pass left it). Forgotten on resize.
  void save_scene(VkCommandBuffer cmd);
  void restore_scene(VkCommandBuffer cmd);
  bool scene_saved() const { return scene_saved_; }

 private:
  // the images and framebuffer one scene resolution draws into
  struct ScenePass {
    Image color, msaa, depth;  // color: the resolved (or only) image; unused at full size
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
  };
  void create_images();
  void destroy_images();
  void create_scene_pass(ScenePass& p, VkExtent2D extent, bool own_color);
  void destroy_scene_pass(ScenePass& p);
  void stretch_scene(VkCommandBuffer cmd) const;

  const Context& ctx_;
  VkSampleCountFlagBits samples_;
  Image color_;        // resolved (or only) color, full size
  ScenePass full_;     // the scene pass at full size: into color_
  ScenePass reduced_;  // at scene_extent(), when the scale is below 1
  Image saved_;        // the scene as the last save_scene left it
  bool scene_saved_ = false;
  float scene_scale_ = 1.0f;
  uint32_t scene_x0_ = 0, scene_x1_ = ~0u;
  bool color_written_ = false;  // color_ holds a frame (in TRANSFER_SRC_OPTIMAL) since resize
  bool in_scene_pass_ = false;  // end() closes the scene pass (else the overlay's)
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkRenderPass overlay_pass_ = VK_NULL_HANDLE;
  VkFramebuffer overlay_framebuffer_ = VK_NULL_HANDLE;
};

// the largest of {4, 1} samples that the device supports for color and depth
VkSampleCountFlagBits pick_msaa(const Context& ctx, int wanted);

}  // namespace adj::render
