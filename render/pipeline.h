#pragma once
// Graphics pipelines from shaders/ by name, with the few knobs our passes vary.
#include <vulkan/vulkan.h>

#include <string>
#include <vector>

namespace adj::render {

class Context;

struct PipelineDesc {
  std::string vertex_shader;    // name in shaders/, e.g. "sky.vert"
  std::string fragment_shader;  // "sky.frag"; empty: no fragment stage (depth-only passes)
  std::vector<VkVertexInputBindingDescription> bindings;
  std::vector<VkVertexInputAttributeDescription> attributes;
  VkPrimitiveTopology topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPolygonMode polygon_mode = VK_POLYGON_MODE_FILL;
  VkCullModeFlags cull = VK_CULL_MODE_NONE;
  bool depth_test = true;
  bool depth_write = true;
  bool alpha_blend = false;
  uint32_t color_attachment_count = 1;  // 0 for depth-only render passes
  float depth_bias_constant = 0.0f;     // depth bias is on when either is nonzero
  float depth_bias_slope = 0.0f;
  uint32_t push_constant_bytes = 0;  // visible to vertex and fragment stages
  std::vector<VkDescriptorSetLayout> set_layouts;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
};

// a shader module from the embedded SPIR-V; throws render::Error for an unknown name
VkShaderModule create_shader_module(const Context& ctx, const std::string& name);

Pipeline create_pipeline(const Context& ctx, const PipelineDesc& desc, VkRenderPass pass,
                         VkSampleCountFlagBits samples);
void destroy(const Context& ctx, Pipeline& p);

}  // namespace adj::render
