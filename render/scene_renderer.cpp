#include "render/scene_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/packing.hpp>
#include <string>

#include "render/context.h"
#include "render/scene_gpu.h"
#include "render/scene_passes.h"
#include "render/target.h"
#include "render/unit_meshes.h"
#include "render/vk_check.h"

namespace adj::render {

struct SceneRenderer::Cmd {
  Kind kind = k_mesh;
  VkBuffer vb[4]{};
  VkDeviceSize vo[4]{};
  uint32_t vb_count = 0;
  VkBuffer ib = VK_NULL_HANDLE;  // null: not indexed
  VkDeviceSize io = 0;
  uint32_t count = 0;  // indices, or vertices when not indexed
  uint32_t first_index = 0;
  uint32_t instances = 1;
  gpu::Draw push;
  float line_width = 1.0f;
  bool cast_shadow = false;

  void bind(VkBuffer b, VkDeviceSize o) {
    vb[vb_count] = b;
    vo[vb_count++] = o;
  }
};

struct SceneRenderer::Slot {
  Buffer ubo;
  VkDescriptorSet set = VK_NULL_HANDLE;
  UploadArena arena;
  uint64_t bound_generation = ~0ull;  // the arena generation binding 2 of set points at
  explicit Slot(const Context& ctx) : arena(ctx) {}
};

struct SceneRenderer::Ranges {
  MeshRange box, capsule, plane, ring, arrow, disc;
};

namespace {

struct Resolved {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
};

template <class T>
Resolved resolve(const ArrayRef<T>& a, UploadArena& arena) {
  if (a.buffer) return {a.buffer, a.offset};
  return {arena.buffer(), arena.push(a.host, a.bytes())};
}

template <class T>
VkDeviceSize host_bytes(const ArrayRef<T>& a) {
  return a.buffer ? 0 : a.bytes() + UploadArena::k_align;
}

// a programmer error in a draw list: say which item and which array
template <class T>
void check_count(const ArrayRef<T>& a, size_t want, const char* item, size_t i, const char* name) {
  if (a.empty() || a.count == want) return;
  throw Error(std::string("DrawList: ") + item + "[" + std::to_string(i) + "]." + name + " has " +
              std::to_string(a.count) + " elements, expected " + std::to_string(want));
}

float inv_range(const ColorScale& s) {
  float d = s.max - s.min;
  return std::abs(d) > 0.0f ? 1.0f / d : 0.0f;
}

uint32_t cmap_bits(const ColorScale& s) { return gpu::k_scalars | (uint32_t(s.map) << gpu::k_cmap_shift); }

glm::vec3 srgb_to_linear(glm::vec3 c) { return glm::pow(glm::max(c, glm::vec3(0.0f)), glm::vec3(2.2f)); }

}  // namespace

SceneRenderer::SceneRenderer(Context& ctx, const RenderTarget& target, const SceneRendererOptions& options)
    : ctx_(ctx), target_(target), options_(options) {
  shadow_ = std::make_unique<ShadowMap>(ctx, options.shadow_map_size);
  max_storage_range_ = ctx.properties().limits.maxStorageBufferRange;

  // unit meshes: vertices, then indices, in one buffer
  UnitMeshes m = make_unit_meshes();
  VkDeviceSize vbytes = m.vertices.size() * sizeof(UnitVertex);
  VkDeviceSize ibytes = m.indices.size() * sizeof(uint32_t);
  unit_ = create_buffer(
      ctx, vbytes + ibytes,
      VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
      BufferMemory::host_mapped);
  std::memcpy(unit_.mapped, m.vertices.data(), vbytes);
  std::memcpy(static_cast<char*>(unit_.mapped) + vbytes, m.indices.data(), ibytes);
  unit_index_offset_ = vbytes;
  ranges_ = std::make_unique<Ranges>(Ranges{m.box, m.capsule, m.plane, m.ring, m.arrow, m.disc});

  // set 0: the frame's uniforms, the shadow map, the frame's upload buffer (pulled vertices)
  VkDescriptorSetLayoutBinding b[4]{};
  b[0] = {0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  b[1] = {1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  b[2] = {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT, nullptr};
  b[3] = {3, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 4;
  li.pBindings = b;
  ADJ_VK(vkCreateDescriptorSetLayout(ctx.device(), &li, nullptr, &set_layout_));

  const uint32_t slot_count = options.frames_in_flight + 1;  // + picking
  VkDescriptorPoolSize sizes[3] = {{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, slot_count},
                                   {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, slot_count},
                                   {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * slot_count}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = slot_count;
  pi.poolSizeCount = 3;
  pi.pPoolSizes = sizes;
  ADJ_VK(vkCreateDescriptorPool(ctx.device(), &pi, nullptr, &pool_));

  for (uint32_t i = 0; i < slot_count; ++i) {
    auto s = std::make_unique<Slot>(ctx);
    s->ubo = create_buffer(ctx, sizeof(gpu::Frame), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, BufferMemory::host_mapped);
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout_;
    ADJ_VK(vkAllocateDescriptorSets(ctx.device(), &ai, &s->set));
    VkDescriptorBufferInfo bi{s->ubo.buffer, 0, sizeof(gpu::Frame)};
    VkDescriptorImageInfo ii{shadow_->sampler(), shadow_->view(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkDescriptorBufferInfo ui{unit_.buffer, 0, unit_.size};
    VkWriteDescriptorSet w[3]{};
    w[0] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, s->set, 0,      0, 1,
            VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,      nullptr, &bi,    nullptr};
    w[1] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,    nullptr, s->set,  1,      0, 1,
            VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, &ii,     nullptr, nullptr};
    w[2] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, s->set, 3,      0, 1,
            VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,      nullptr, &ui,    nullptr};
    vkUpdateDescriptorSets(ctx.device(), 3, w, 0, nullptr);
    s->arena.reset(1);
    slots_.push_back(std::move(s));
    bind_upload(*slots_.back());
  }

  VkPhysicalDeviceFeatures features;
  vkGetPhysicalDeviceFeatures(ctx.physical_device(), &features);  // context enables wideLines
  line_width_max_ = features.wideLines ? ctx.properties().limits.lineWidthRange[1] : 1.0f;

  create_pipelines();
}

SceneRenderer::~SceneRenderer() {
  vkDeviceWaitIdle(ctx_.device());
  for (uint32_t k = 0; k < k_kind_count; ++k) {
    destroy(ctx_, main_pipes_[k]);
    destroy(ctx_, shadow_pipes_[k]);
    destroy(ctx_, id_pipes_[k]);
  }
  for (auto& s : slots_) destroy(ctx_, s->ubo);
  slots_.clear();
  destroy(ctx_, unit_);
  destroy(ctx_, quad_indices_);
  vkDestroyDescriptorPool(ctx_.device(), pool_, nullptr);
  vkDestroyDescriptorSetLayout(ctx_.device(), set_layout_, nullptr);
}

void SceneRenderer::build(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  // size pass: every host array once, plus generated line indices
  VkDeviceSize bytes = 0;
  for (const MeshDraw& d : list.meshes)
    bytes += host_bytes(d.positions) + host_bytes(d.normals) + host_bytes(d.indices) + host_bytes(d.scalars);
  for (const SphereDraw& d : list.spheres)
    bytes += host_bytes(d.spheres) + host_bytes(d.scalars) + host_bytes(d.colors);
  for (const ShapeDraw& d : list.shapes) bytes += host_bytes(d.instances);
  for (const ArrowDraw& d : list.arrows) bytes += host_bytes(d.origins) + host_bytes(d.vectors) + host_bytes(d.scalars);
  for (const DiscDraw& d : list.discs) bytes += host_bytes(d.positions) + host_bytes(d.normals);
  for (const LineDraw& d : list.lines)
    bytes += host_bytes(d.positions) + host_bytes(d.colors) + host_bytes(d.indices) +
             (d.indices.empty() ? d.positions.count * 8 + UploadArena::k_align : 0);
  arena.reset(bytes);
  out.clear();

  build_meshes(list, arena, out);
  build_shapes(list, arena, out);
  build_spheres(list, arena, out);
  build_glyphs(list, arena, out);
  if (list.ground.visible) {
    Cmd c;
    c.kind = k_ground;
    c.count = 4;
    out.push_back(c);
  }
  build_lines(list, arena, out);
}

// the triangle meshes (and their wireframes), colored by a scalar when they carry one
void SceneRenderer::build_meshes(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  for (size_t i = 0; i < list.meshes.size(); ++i) {
    const MeshDraw& d = list.meshes[i];
    if (d.positions.empty() || d.indices.count < 3) continue;
    check_count(d.normals, d.positions.count, "meshes", i, "normals");
    check_count(d.scalars, d.positions.count, "meshes", i, "scalars");
    Cmd c;
    c.kind = k_mesh;
    Resolved p = resolve(d.positions, arena);
    Resolved n = d.normals.empty() ? p : resolve(d.normals, arena);
    Resolved s = d.scalars.empty() ? p : resolve(d.scalars, arena);
    Resolved ix = resolve(d.indices, arena);
    c.bind(p.buffer, p.offset);
    c.bind(n.buffer, n.offset);
    c.bind(s.buffer, s.offset);
    c.ib = ix.buffer;
    c.io = ix.offset;
    c.count = uint32_t(d.indices.count / 3 * 3);
    for (int k = 0; k < 4; ++k) c.push.data[k] = d.transform[k];
    c.push.color = d.color;
    c.push.params = {d.scale.min, inv_range(d.scale), 0.0f, 0.0f};
    uint32_t bits = (d.normals.empty() ? 0u : gpu::k_normals) | (d.scalars.empty() ? 0u : cmap_bits(d.scale));
    uint32_t back = d.back_color.a > 0.0f ? pack_rgba8(glm::vec4(glm::vec3(d.back_color), 1.0f)) : 0u;
    c.push.flags = {0u, d.id, bits, back};
    c.cast_shadow = d.cast_shadow;
    out.push_back(c);
    if (d.wireframe) {
      c.kind = k_wire;
      c.push.color = d.wire_color;
      c.cast_shadow = false;
      out.push_back(c);
    }
  }
}

// the instanced unit shapes (boxes, spheres, capsules...)
void SceneRenderer::build_shapes(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  const VkBuffer unit = unit_.buffer;
  for (size_t i = 0; i < list.shapes.size(); ++i) {
    const ShapeDraw& d = list.shapes[i];
    if (d.instances.empty()) continue;
    const MeshRange* r = &ranges_->box;
    switch (d.kind) {
      case ShapeKind::box:
        r = &ranges_->box;
        break;
      case ShapeKind::capsule:
      case ShapeKind::sphere:
        r = &ranges_->capsule;
        break;
      case ShapeKind::plane:
        r = &ranges_->plane;
        break;
      case ShapeKind::ring:
        r = &ranges_->ring;
        break;
    }
    Cmd c;
    c.kind = k_shape;
    Resolved inst = resolve(d.instances, arena);
    c.bind(unit, 0);
    c.bind(inst.buffer, inst.offset);
    c.ib = unit;
    c.io = unit_index_offset_;
    c.first_index = r->first_index;
    c.count = r->index_count;
    c.instances = uint32_t(d.instances.count);
    c.push.flags = {0u, d.id, 0u, uint32_t(d.kind)};
    c.cast_shadow = d.cast_shadow;
    out.push_back(c);
  }
}

// the particle spheres
void SceneRenderer::build_spheres(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  for (size_t i = 0; i < list.spheres.size(); ++i) {
    const SphereDraw& d = list.spheres[i];
    if (d.spheres.empty()) continue;
    check_count(d.scalars, d.spheres.count, "spheres", i, "scalars");
    check_count(d.colors, d.spheres.count, "spheres", i, "colors");
    Cmd c;
    Resolved sp = resolve(d.spheres, arena);
    Resolved s = d.scalars.empty() ? sp : resolve(d.scalars, arena);
    Resolved col = d.colors.empty() ? sp : resolve(d.colors, arena);
    bool pulled = sp.buffer == arena.buffer() && s.buffer == arena.buffer() && col.buffer == arena.buffer() &&
                  arena.size() <= max_storage_range_ && d.spheres.count <= quad_capacity_;
    if (pulled) {  // 6 vertices per sphere read from the upload buffer (sphere_pulled.vert)
      c.kind = k_sphere_pulled;
      glm::uvec4 words(uint32_t(sp.offset / 4), uint32_t(s.offset / 4), uint32_t(col.offset / 4), 0u);
      c.push.data[0] = glm::uintBitsToFloat(words);
      c.ib = quad_indices_.buffer;
      c.io = 0;
      c.count = uint32_t(6 * d.spheres.count);
    } else {  // arrays in other buffers: instanced quads with per-instance attributes
      c.kind = k_sphere;
      c.bind(sp.buffer, sp.offset);
      c.bind(s.buffer, s.offset);
      c.bind(col.buffer, col.offset);
      c.count = 4;
      c.instances = uint32_t(d.spheres.count);
    }
    c.push.color = d.color;
    c.push.params = {d.scale.min, inv_range(d.scale), 0.0f, 0.0f};
    uint32_t bits = !d.scalars.empty() ? cmap_bits(d.scale) : !d.colors.empty() ? gpu::k_colors : 0u;
    c.push.flags = {0u, d.id, bits, 0u};
    c.cast_shadow = d.cast_shadow;
    out.push_back(c);
  }
}

// the arrows and the contact discs: instanced unit meshes, or one pulled draw reading the arena
void SceneRenderer::build_glyphs(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  const VkBuffer unit = unit_.buffer;
  auto arrow_cmd = [&](Resolved o, Resolved v, Resolved s, size_t n, const MeshRange& mesh) {
    Cmd c;
    if (o.buffer == arena.buffer() && v.buffer == arena.buffer() && s.buffer == arena.buffer() &&
        arena.size() <= max_storage_range_) {
      // non-instanced: mesh indices x arrows vertices reading both buffers (arrow_pulled.vert)
      c.kind = k_arrow_pulled;
      glm::uvec4 at(uint32_t(o.offset / 4), uint32_t(v.offset / 4), uint32_t(s.offset / 4), 0u);
      glm::uvec4 m(uint32_t(unit_index_offset_ / 4) + mesh.first_index, mesh.index_count, 0u, 0u);
      c.push.data[2] = glm::uintBitsToFloat(at);
      c.push.data[3] = glm::uintBitsToFloat(m);
      c.count = uint32_t(n * mesh.index_count);
      return c;
    }
    c.kind = k_arrow;
    c.bind(unit, 0);
    c.bind(o.buffer, o.offset);
    c.bind(v.buffer, v.offset);
    c.bind(s.buffer, s.offset);
    c.ib = unit;
    c.io = unit_index_offset_;
    c.first_index = mesh.first_index;
    c.count = mesh.index_count;
    c.instances = uint32_t(n);
    return c;
  };
  for (size_t i = 0; i < list.arrows.size(); ++i) {
    const ArrowDraw& d = list.arrows[i];
    if (d.origins.empty()) continue;
    check_count(d.vectors, d.origins.count, "arrows", i, "vectors");
    check_count(d.scalars, d.origins.count, "arrows", i, "scalars");
    if (d.vectors.empty()) continue;
    Resolved o = resolve(d.origins, arena);
    Resolved v = resolve(d.vectors, arena);
    Resolved s = d.scalars.empty() ? o : resolve(d.scalars, arena);
    Cmd c = arrow_cmd(o, v, s, d.origins.count, ranges_->arrow);
    c.push.data[0] = {d.radius, 2.5f * d.radius, d.max_length, d.length == ArrowLength::log ? 1.0f : 0.0f};
    c.push.params = {d.scale.min, inv_range(d.scale), d.length_scale, std::max(d.reference, 1e-30f)};
    c.push.flags = {0u, d.id, cmap_bits(d.scale) | (d.scalars.empty() ? 0u : gpu::k_colors), 0u};
    c.cast_shadow = d.cast_shadow;
    out.push_back(c);
  }

  for (size_t i = 0; i < list.discs.size(); ++i) {
    const DiscDraw& d = list.discs[i];
    if (d.positions.empty()) continue;
    check_count(d.normals, d.positions.count, "discs", i, "normals");
    if (d.normals.empty()) continue;
    Resolved p = resolve(d.positions, arena);
    Resolved n = resolve(d.normals, arena);
    Cmd c = arrow_cmd(p, n, p, d.positions.count, ranges_->disc);
    c.push.data[0] = {d.radius, 0.0f, 1e30f, 0.0f};
    c.push.data[1] = {0.15f * d.radius, 0.0f, 0.0f, 0.0f};
    c.push.color = d.color;
    c.push.params = {0.0f, 0.0f, 1.0f, 1.0f};
    c.push.flags = {0u, d.id, 0u, 0u};
    out.push_back(c);
  }
}

// the line lists and strips (a strip's segment indices generated into the arena)
void SceneRenderer::build_lines(const DrawList& list, UploadArena& arena, std::vector<Cmd>& out) const {
  for (size_t i = 0; i < list.lines.size(); ++i) {
    const LineDraw& d = list.lines[i];
    if (d.positions.count < 2) continue;
    check_count(d.colors, d.positions.count, "lines", i, "colors");
    Cmd c;
    c.kind = d.depth_test ? k_line : k_line_overlay;
    Resolved p = resolve(d.positions, arena);
    Resolved col = d.colors.empty() ? p : resolve(d.colors, arena);
    c.bind(p.buffer, p.offset);
    c.bind(col.buffer, col.offset);
    if (!d.indices.empty()) {
      Resolved ix = resolve(d.indices, arena);
      c.ib = ix.buffer;
      c.io = ix.offset;
      c.count = uint32_t(d.indices.count / 2 * 2);
    } else {  // one strip: segment pairs generated here
      uint32_t segments = uint32_t(d.positions.count - 1);
      void* host = nullptr;
      c.ib = arena.buffer();
      c.io = arena.reserve(segments * 8, &host);
      auto* idx = static_cast<uint32_t*>(host);
      for (uint32_t k = 0; k < segments; ++k) {
        idx[2 * k] = k;
        idx[2 * k + 1] = k + 1;
      }
      c.count = segments * 2;
    }
    c.push.color = d.color;
    c.push.flags = {0u, d.id, d.colors.empty() ? 0u : gpu::k_colors, 0u};
    c.line_width = std::clamp(d.width, 1.0f, line_width_max_);
    out.push_back(c);
  }
}

void SceneRenderer::write_frame(void* ubo, const DrawList& list, const Camera& camera, VkExtent2D extent,
                                float pixel_scale) const {
  auto& f = *static_cast<gpu::Frame*>(ubo);
  const float w = float(extent.width), h = float(extent.height);
  f.views[0].view_proj = camera.view_projection(w / h);
  f.views[0].eye = glm::vec4(camera.eye(), camera.orthographic ? 1.0f : 0.0f);
  f.views[0].forward = glm::vec4(camera.forward(), 0.0f);
  f.views[0].viewport = {w, h, pixel_scale, 0.0f};

  // the region to shadow: the list's bounds, else around the camera's target
  glm::vec3 lo = list.bounds_lo, hi = list.bounds_hi;
  glm::vec3 center = camera.target;
  float radius = camera.distance * 0.75f;
  if (lo.x <= hi.x && lo.y <= hi.y && lo.z <= hi.z) {
    center = 0.5f * (lo + hi);
    radius = std::max(0.5f * glm::length(hi - lo), 1e-3f);
  }
  radius *= 1.1f;
  const Lighting& L = list.lighting;
  glm::vec3 l = glm::length(L.direction) > 0.0f ? glm::normalize(L.direction) : glm::vec3(0, 1, 0);
  glm::vec3 leye = center + l * (3.0f * radius);
  glm::vec3 up = std::abs(l.y) > 0.99f ? glm::vec3(1, 0, 0) : glm::vec3(0, 1, 0);
  glm::mat4 lproj = glm::orthoRH_ZO(-radius, radius, -radius, radius, 0.0f, 6.0f * radius);
  lproj[1][1] = -lproj[1][1];
  const float sm = float(shadow_->size());
  f.views[1].view_proj = lproj * glm::lookAtRH(leye, center, up);
  f.views[1].eye = glm::vec4(leye, 1.0f);
  f.views[1].forward = glm::vec4(-l, 0.0f);
  f.views[1].viewport = {sm, sm, 1.0f, 0.0f};

  f.light_dir = glm::vec4(l, L.intensity);
  f.light_color = glm::vec4(L.color, L.shadows ? 1.0f : 0.0f);
  f.sky_ambient = glm::vec4(L.sky * L.ambient, 0.0f);
  f.ground_ambient = glm::vec4(L.ground * L.ambient, 0.0f);
  // depth bias: about one texel of depth; the normal offset does the rest
  f.shadow = {2.0f * radius / sm, 1.0f / sm, 1.0f / sm, options_.shadow_taps == 1 ? 1.0f : 0.0f};

  const Ground& g = list.ground;
  float extent_m = g.extent > 0.0f ? g.extent : std::max(8.0f * radius, 4.0f * camera.distance);
  f.ground = {g.height, std::max(g.cell, 1e-6f), extent_m, g.z_up ? 1.0f : 0.0f};
  f.ground_color = glm::vec4(srgb_to_linear(glm::vec3(g.color)), 1.0f);
  f.ground_center =
      g.z_up ? glm::vec4(center.x, center.y, g.height, 0.0f) : glm::vec4(center.x, g.height, center.z, 0.0f);

  for (int m = 0; m < k_colormap_count; ++m)
    for (int i = 0; i < k_colormap_lut_size; ++i)
      f.colormaps[m * k_colormap_lut_size + i] =
          glm::vec4(colormap_srgb(Colormap(m), float(i) / float(k_colormap_lut_size - 1)), 1.0f);
}

void SceneRenderer::record(VkCommandBuffer cmd, const std::vector<Cmd>& cmds, const Pipeline* pipes, uint32_t view,
                           bool shadow_casters_only, float pixel_scale) const {
  VkPipeline bound = VK_NULL_HANDLE;
  for (const Cmd& c : cmds) {
    if (shadow_casters_only && !c.cast_shadow) continue;
    const Pipeline& p = pipes[c.kind];
    if (!p.pipeline) continue;
    if (p.pipeline != bound) {
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, p.pipeline);
      bound = p.pipeline;
    }
    gpu::Draw push = c.push;
    push.flags.x = view;
    vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof push, &push);
    if (c.vb_count) vkCmdBindVertexBuffers(cmd, 0, c.vb_count, c.vb, c.vo);
    if (c.kind == k_line || c.kind == k_line_overlay || c.kind == k_wire)
      vkCmdSetLineWidth(cmd, std::max(1.0f, c.line_width * pixel_scale));  // wire: polygon mode LINE too
    if (c.ib) {
      vkCmdBindIndexBuffer(cmd, c.ib, c.io, VK_INDEX_TYPE_UINT32);
      vkCmdDrawIndexed(cmd, c.count, c.instances, c.first_index, 0, 0);
    } else {
      vkCmdDraw(cmd, c.count, c.instances, 0, 0);
    }
  }
}

void SceneRenderer::prepare(VkCommandBuffer cmd, const DrawList& list, const Camera& camera, uint64_t frame_index) {
  current_slot_ = uint32_t(frame_index % options_.frames_in_flight);
  Slot& s = *slots_[current_slot_];
  ensure_quad_indices(list);
  build(list, s.arena, cmds_);
  bind_upload(s);
  // a reduced scene pass (RenderTarget::set_scene_scale) draws lines and the grid as wide, in
  // the full image's pixels, as a full-size one
  pixel_scale_ = target_.scene_scale();
  write_frame(s.ubo.mapped, list, camera, target_.extent(), pixel_scale_);
  shadows_ = list.lighting.shadows;
  if (!shadows_) return;
  shadow_->begin(cmd);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, main_pipes_[k_mesh].layout, 0, 1, &s.set, 0, nullptr);
  record(cmd, cmds_, shadow_pipes_, 1, true, 1.0f);
  shadow_->end(cmd);
}

void SceneRenderer::bind_upload(Slot& s) const {
  if (s.bound_generation == s.arena.generation()) return;
  VkDescriptorBufferInfo bi{s.arena.buffer(), 0, std::min<VkDeviceSize>(s.arena.size(), max_storage_range_)};
  VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, s.set, 2,      0, 1,
                         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,      nullptr, &bi,   nullptr};
  vkUpdateDescriptorSets(ctx_.device(), 1, &w, 0, nullptr);
  s.bound_generation = s.arena.generation();
}

void SceneRenderer::ensure_quad_indices(const DrawList& list) {
  size_t need = 0;
  for (const SphereDraw& d : list.spheres) need = std::max(need, d.spheres.count);
  if (need <= quad_capacity_) return;
  size_t capacity = std::max<size_t>(quad_capacity_ * 2, std::max<size_t>(need, 4096));
  if (capacity * 6 > size_t(UINT32_MAX)) return;  // too many: the instanced path draws them
  vkDeviceWaitIdle(ctx_.device());                // frames in flight may still read it
  destroy(ctx_, quad_indices_);
  quad_indices_ =
      create_buffer(ctx_, capacity * 6 * sizeof(uint32_t), VK_BUFFER_USAGE_INDEX_BUFFER_BIT, BufferMemory::host_mapped);
  auto* idx = static_cast<uint32_t*>(quad_indices_.mapped);
  for (size_t i = 0; i < capacity; ++i) {
    const uint32_t q = uint32_t(4 * i);
    const uint32_t k[6] = {q, q + 1, q + 2, q + 2, q + 1, q + 3};
    std::memcpy(idx + 6 * i, k, sizeof k);
  }
  quad_capacity_ = capacity;
}

size_t SceneRenderer::draw_count() const { return cmds_.size(); }

void SceneRenderer::draw(VkCommandBuffer cmd) const {
  const Slot& s = *slots_[current_slot_];
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, main_pipes_[k_mesh].layout, 0, 1, &s.set, 0, nullptr);
  record(cmd, cmds_, main_pipes_, 0, false, pixel_scale_);
}

std::optional<PickResult> SceneRenderer::pick(const DrawList& list, const Camera& camera, VkExtent2D extent, uint32_t x,
                                              uint32_t y) {
  if (x >= extent.width || y >= extent.height) return std::nullopt;
  if (!ids_) {
    ids_ = std::make_unique<IdTarget>(ctx_);
    create_id_pipelines();
  }
  ids_->resize(extent);
  Slot& s = *slots_.back();
  std::vector<Cmd> cmds;
  ensure_quad_indices(list);
  build(list, s.arena, cmds);
  // items without an id (overlays: centre-of-mass crosses, ghosts, arrows) are not pickable
  // and must not hide what is under them
  std::erase_if(cmds, [](const Cmd& c) { return c.push.flags.y == 0; });
  bind_upload(s);
  write_frame(s.ubo.mapped, list, camera, extent, 1.0f);
  ctx_.run_once([&](VkCommandBuffer cmd) {
    ids_->begin(cmd, x, y);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, main_pipes_[k_mesh].layout, 0, 1, &s.set, 0, nullptr);
    record(cmd, cmds, id_pipes_, 0, false, 1.0f);
    ids_->end_and_copy(cmd, x, y);
  });
  const uint32_t* px = ids_->pixel();
  if (px[0] == 0) return std::nullopt;
  return PickResult{px[0], px[1]};
}

}  // namespace adj::render
