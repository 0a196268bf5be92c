// SceneRenderer's pipelines: vertex layouts per kind, and the main, shadow and ID variants.
#include <glm/glm.hpp>

#include "render/context.h"
#include "render/scene_gpu.h"
#include "render/scene_passes.h"
#include "render/scene_renderer.h"
#include "render/target.h"
#include "render/unit_meshes.h"

namespace adj::render {

namespace {

using Binding = VkVertexInputBindingDescription;
using Attribute = VkVertexInputAttributeDescription;
constexpr auto k_vertex = VK_VERTEX_INPUT_RATE_VERTEX;
constexpr auto k_instance = VK_VERTEX_INPUT_RATE_INSTANCE;
constexpr auto k_vec4 = VK_FORMAT_R32G32B32A32_SFLOAT;
constexpr auto k_vec3 = VK_FORMAT_R32G32B32_SFLOAT;
constexpr auto k_float = VK_FORMAT_R32_SFLOAT;
constexpr auto k_rgba8 = VK_FORMAT_R8G8B8A8_UNORM;

// per kind: shaders, vertex layout, topology, blending
PipelineDesc describe(SceneRenderer::Kind kind) {
  PipelineDesc d;
  d.push_constant_bytes = sizeof(gpu::Draw);
  switch (kind) {
    case SceneRenderer::k_mesh:
    case SceneRenderer::k_wire:
      d.vertex_shader = "mesh.vert";
      d.fragment_shader = kind == SceneRenderer::k_mesh ? "lit.frag" : "wire.frag";
      d.bindings = {Binding{0, 12, k_vertex}, Binding{1, 12, k_vertex}, Binding{2, 4, k_vertex}};
      d.attributes = {Attribute{0, 0, k_vec3, 0}, Attribute{1, 1, k_vec3, 0},
                      Attribute{2, 2, k_float, 0}};
      if (kind == SceneRenderer::k_wire) {
        d.polygon_mode = VK_POLYGON_MODE_LINE;
        d.alpha_blend = true;
        d.depth_write = false;
        d.depth_bias_constant = -1.0f;
        d.depth_bias_slope = -1.0f;
      }
      break;
    case SceneRenderer::k_shape:
      d.vertex_shader = "shape.vert";
      d.fragment_shader = "lit.frag";
      d.bindings = {Binding{0, sizeof(UnitVertex), k_vertex},
                    Binding{1, sizeof(ShapeInstance), k_instance}};
      d.attributes = {Attribute{0, 0, k_vec4, 0},  Attribute{1, 0, k_vec3, 16},
                      Attribute{2, 1, k_vec3, 0},  Attribute{3, 1, k_vec4, 16},
                      Attribute{4, 1, k_vec3, 32}, Attribute{5, 1, k_rgba8, 44}};
      break;
    case SceneRenderer::k_sphere:
      d.vertex_shader = "sphere.vert";
      d.fragment_shader = "sphere.frag";
      d.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP;
      d.bindings = {Binding{0, 16, k_instance}, Binding{1, 4, k_instance},
                    Binding{2, 4, k_instance}};
      d.attributes = {Attribute{0, 0, k_vec4, 0}, Attribute{1, 1, k_float, 0},
                      Attribute{2, 2, k_rgba8, 0}};
      break;
    case SceneRenderer::k_sphere_pulled:  // no vertex input: reads the upload buffer
      d.vertex_shader = "sphere_pulled.vert";
      d.fragment_shader = "sphere.frag";
      break;
    case SceneRenderer::k_arrow:
      d.cull = VK_CULL_MODE_BACK_BIT;  // closed meshes: half the triangles (a CPU rasterizer sets each up)
      d.vertex_shader = "arrow.vert";
      d.fragment_shader = "lit.frag";
      d.bindings = {Binding{0, sizeof(UnitVertex), k_vertex}, Binding{1, 12, k_instance},
                    Binding{2, 12, k_instance}, Binding{3, 4, k_instance}};
      d.attributes = {Attribute{0, 0, k_vec4, 0}, Attribute{1, 0, k_vec3, 16},
                      Attribute{2, 1, k_vec3, 0}, Attribute{3, 2, k_vec3, 0},
                      Attribute{4, 3, k_float, 0}};
      break;
    case SceneRenderer::k_arrow_pulled:  // no vertex input: reads the unit mesh and uploads
      d.cull = VK_CULL_MODE_BACK_BIT;
      d.vertex_shader = "arrow_pulled.vert";
      d.fragment_shader = "lit.frag";
      break;
    case SceneRenderer::k_line:
    case SceneRenderer::k_line_overlay:
      d.vertex_shader = "line.vert";
      d.fragment_shader = "line.frag";
      d.topology = VK_PRIMITIVE_TOPOLOGY_LINE_LIST;
      d.bindings = {Binding{0, 12, k_vertex}, Binding{1, 4, k_vertex}};
      d.attributes = {Attribute{0, 0, k_vec3, 0}, Attribute{1, 1, k_rgba8, 0}};
      d.alpha_blend = true;
      d.depth_write = false;
      d.depth_test = kind == SceneRenderer::k_line;
      break;
    case SceneRenderer::k_ground:
      d.vertex_shader = "ground.vert";
      d.fragment_shader = "ground.frag";
      d.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP;
      d.alpha_blend = true;
      break;
    case SceneRenderer::k_kind_count:
      break;
  }
  return d;
}

}  // namespace

void SceneRenderer::create_pipelines() {
  for (uint32_t k = 0; k < k_kind_count; ++k) {
    Kind kind = Kind(k);
    PipelineDesc d = describe(kind);
    d.set_layouts = {set_layout_};
    main_pipes_[k] = create_pipeline(ctx_, d, target_.render_pass(), target_.samples());

    // shadow casters: depth only (impostors still need their fragment shader)
    if (kind == k_mesh || kind == k_shape || kind == k_sphere || kind == k_sphere_pulled ||
        kind == k_arrow || kind == k_arrow_pulled) {
      PipelineDesc s = d;
      bool impostor = kind == k_sphere || kind == k_sphere_pulled;
      s.fragment_shader = impostor ? "sphere_depth.frag" : "";
      s.color_attachment_count = 0;
      s.alpha_blend = false;
      s.depth_bias_constant = 1.5f;
      s.depth_bias_slope = 2.0f;
      shadow_pipes_[k] = create_pipeline(ctx_, s, shadow_->render_pass(), VK_SAMPLE_COUNT_1_BIT);
    }
  }
}

void SceneRenderer::create_id_pipelines() {
  const char* id_frag = ctx_.info().geometry_shader ? "id.frag" : "id_noprim.frag";
  for (uint32_t k = 0; k < k_kind_count; ++k) {
    Kind kind = Kind(k);
    if (kind == k_wire || kind == k_ground) continue;  // not pickable
    PipelineDesc d = describe(kind);
    d.set_layouts = {set_layout_};
    d.fragment_shader = kind == k_sphere || kind == k_sphere_pulled ? "sphere_id.frag" : id_frag;
    d.alpha_blend = false;
    d.depth_write = true;
    id_pipes_[k] = create_pipeline(ctx_, d, ids_->render_pass(), VK_SAMPLE_COUNT_1_BIT);
  }
}

}  // namespace adj::render
