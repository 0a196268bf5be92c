// The validation wiring that every Vulkan test relies on: with validation on, an invalid
// call is counted (so a test can fail on it) and a valid program counts none.
#include <catch2/catch.hpp>

#include "render/context.h"
#include "render/memory.h"

using namespace adj::render;

TEST_CASE("validation errors are counted, and a clean run counts none", "[render][validation]") {
  ContextOptions o;
  o.validation = true;
  Context ctx(o);
  ctx.create_device(VK_NULL_HANDLE);
  REQUIRE(ctx.validation_enabled());

  // a valid buffer: no error
  Buffer b = create_buffer(ctx, 256, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, BufferMemory::host_mapped);
  destroy(ctx, b);
  CHECK(ctx.validation_errors() == 0);

  // size 0 is invalid (VUID-VkBufferCreateInfo-size-00912): the layer must report it
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = 0;
  ci.usage = VK_BUFFER_USAGE_VERTEX_BUFFER_BIT;
  VkBuffer bad = VK_NULL_HANDLE;
  VkResult r = vkCreateBuffer(ctx.device(), &ci, nullptr, &bad);
  if (r == VK_SUCCESS && bad) vkDestroyBuffer(ctx.device(), bad, nullptr);
  CHECK(ctx.validation_errors() >= 1);
}
