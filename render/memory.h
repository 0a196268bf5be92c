#pragma once
// Buffers and images with their own memory: small, explicit, enough for the renderer.
#include <vulkan/vulkan.h>

#include <cstddef>

namespace adj::render {

class Context;

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host pointer when created host-visible, else null
};

enum class BufferMemory { host_mapped, device_local };

Buffer create_buffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                     BufferMemory memory);
void destroy(const Context& ctx, Buffer& b);

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
  VkExtent2D extent{};
};

Image create_image(const Context& ctx, VkExtent2D extent, VkFormat format, VkImageUsageFlags usage,
                   VkImageAspectFlags aspect, VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT);
void destroy(const Context& ctx, Image& img);

// one image layout transition with a full pipeline barrier for the given stages/accesses
void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageAspectFlags aspect,
                   VkImageLayout old_layout, VkImageLayout new_layout,
                   VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                   VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

}  // namespace adj::render
