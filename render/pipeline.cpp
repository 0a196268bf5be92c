#include "render/pipeline.h"

#include "render/context.h"
#include "render/vk_check.h"
#include "shaders/shader_registry.h"

namespace adj::render {

VkShaderModule create_shader_module(const Context& ctx, const std::string& name) {
  auto words = shaders::spirv(name);
  if (words.empty()) throw Error("no embedded shader named '" + name + "' (see shaders/CMakeLists.txt)");
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = words.size() * sizeof(uint32_t);
  ci.pCode = words.data();
  VkShaderModule m;
  ADJ_VK(vkCreateShaderModule(ctx.device(), &ci, nullptr, &m));
  return m;
}

Pipeline create_pipeline(const Context& ctx, const PipelineDesc& d, VkRenderPass pass,
                         VkSampleCountFlagBits samples) {
  Pipeline p;
  VkPushConstantRange pc{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                         d.push_constant_bytes};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = static_cast<uint32_t>(d.set_layouts.size());
  lci.pSetLayouts = d.set_layouts.data();
  lci.pushConstantRangeCount = d.push_constant_bytes ? 1 : 0;
  lci.pPushConstantRanges = &pc;
  ADJ_VK(vkCreatePipelineLayout(ctx.device(), &lci, nullptr, &p.layout));

  VkShaderModule vs = create_shader_module(ctx, d.vertex_shader);
  VkShaderModule fs = d.fragment_shader.empty() ? VK_NULL_HANDLE
                                                : create_shader_module(ctx, d.fragment_shader);
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
               VK_SHADER_STAGE_VERTEX_BIT, vs, "main", nullptr};
  stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
               VK_SHADER_STAGE_FRAGMENT_BIT, fs, "main", nullptr};

  VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  vi.vertexBindingDescriptionCount = static_cast<uint32_t>(d.bindings.size());
  vi.pVertexBindingDescriptions = d.bindings.data();
  vi.vertexAttributeDescriptionCount = static_cast<uint32_t>(d.attributes.size());
  vi.pVertexAttributeDescriptions = d.attributes.data();

  VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = d.topology;

  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;

  VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = d.polygon_mode;
  rs.cullMode = d.cull;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  if (d.depth_bias_constant != 0.0f || d.depth_bias_slope != 0.0f) {
    rs.depthBiasEnable = VK_TRUE;
    rs.depthBiasConstantFactor = d.depth_bias_constant;
    rs.depthBiasSlopeFactor = d.depth_bias_slope;
  }

  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = samples;

  VkPipelineDepthStencilStateCreateInfo ds{VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  ds.depthTestEnable = d.depth_test;
  ds.depthWriteEnable = d.depth_write;
  ds.depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL;

  VkPipelineColorBlendAttachmentState blend{};
  blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                         VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  if (d.alpha_blend) {
    blend.blendEnable = VK_TRUE;
    blend.srcColorBlendFactor = VK_BLEND_FACTOR_SRC_ALPHA;
    blend.dstColorBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
    blend.colorBlendOp = VK_BLEND_OP_ADD;
    blend.srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
    blend.dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
    blend.alphaBlendOp = VK_BLEND_OP_ADD;
  }
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = d.color_attachment_count;
  cb.pAttachments = d.color_attachment_count ? &blend : nullptr;

  VkDynamicState dyn[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR,
                          VK_DYNAMIC_STATE_LINE_WIDTH};
  VkPipelineDynamicStateCreateInfo dy{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dy.dynamicStateCount = 3;
  dy.pDynamicStates = dyn;

  VkGraphicsPipelineCreateInfo ci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  ci.stageCount = fs ? 2 : 1;
  ci.pStages = stages;
  ci.pVertexInputState = &vi;
  ci.pInputAssemblyState = &ia;
  ci.pViewportState = &vp;
  ci.pRasterizationState = &rs;
  ci.pMultisampleState = &ms;
  ci.pDepthStencilState = &ds;
  ci.pColorBlendState = &cb;
  ci.pDynamicState = &dy;
  ci.layout = p.layout;
  ci.renderPass = pass;
  ci.subpass = 0;
  VkResult r = vkCreateGraphicsPipelines(ctx.device(), VK_NULL_HANDLE, 1, &ci, nullptr, &p.pipeline);
  vkDestroyShaderModule(ctx.device(), vs, nullptr);
  if (fs) vkDestroyShaderModule(ctx.device(), fs, nullptr);
  if (r != VK_SUCCESS) throw_vk(r, "vkCreateGraphicsPipelines", __FILE__, __LINE__);
  return p;
}

void destroy(const Context& ctx, Pipeline& p) {
  if (p.pipeline) vkDestroyPipeline(ctx.device(), p.pipeline, nullptr);
  if (p.layout) vkDestroyPipelineLayout(ctx.device(), p.layout, nullptr);
  p = Pipeline{};
}

}  // namespace adj::render
