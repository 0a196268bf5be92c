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

enum class BufferMemory {
  host_mapped,        // host-visible, coherent, mapped: the CPU backend writes it directly
  device_local,       // GPU memory, not mapped
  device_exportable,  // GPU memory exportable as an OPAQUE_FD (VK_KHR_external_memory_fd),
                      // dedicated allocation: CUDA imports it (see export_memory_fd)
};

Buffer create_buffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                     BufferMemory memory);
void destroy(const Context& ctx, Buffer& b);

// a new file descriptor of a device_exportable buffer's memory; the caller owns it (CUDA
// takes ownership on a successful cudaImportExternalMemory: size = allocation_size,
// cudaExternalMemoryDedicated). Throws render::Error when the device cannot export.
int export_memory_fd(const Context& ctx, const Buffer& b);
VkDeviceSize allocation_size(const Context& ctx, const Buffer& b);

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
