#include "render/background.h"

#include "render/target.h"

namespace adj::render {

Background::Background(const Context& ctx, const RenderTarget& target) : ctx_(ctx) {
  PipelineDesc d;
  d.vertex_shader = "sky.vert";
  d.fragment_shader = "sky.frag";
  d.depth_test = false;
  d.depth_write = false;
  d.push_constant_bytes = 32;
  pipeline_ = create_pipeline(ctx, d, target.render_pass(), target.samples());
}

Background::~Background() { destroy(ctx_, pipeline_); }

void Background::draw(VkCommandBuffer cmd, const float top[3], const float bottom[3]) const {
  float pc[8] = {top[0], top[1], top[2], 1, bottom[0], bottom[1], bottom[2], 1};
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_.pipeline);
  vkCmdPushConstants(cmd, pipeline_.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT,
                     0, sizeof pc, pc);
  vkCmdDraw(cmd, 3, 1, 0, 0);
}

}  // namespace adj::render
