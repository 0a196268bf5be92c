#pragma once
// The sky gradient drawn behind every scene.
#include <vulkan/vulkan.h>

#include "render/pipeline.h"

namespace adj::render {

class Context;
class RenderTarget;

class Background {
 public:
  Background(const Context& ctx, const RenderTarget& target);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // colors are display-ready RGB in 0..1
  void draw(VkCommandBuffer cmd, const float top[3], const float bottom[3]) const;

 private:
  const Context& ctx_;
  Pipeline pipeline_;
};

}  // namespace adj::render
