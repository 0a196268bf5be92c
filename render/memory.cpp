#include "render/memory.h"

#include "render/context.h"
#include "render/vk_check.h"

namespace adj::render {

Buffer create_buffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                     BufferMemory memory) {
  Buffer b;
  b.size = size;
  const bool exportable = memory == BufferMemory::device_exportable;
  if (exportable && !ctx.info().external_memory_fd)
    throw Error("exportable buffer requested, but the device has no VK_KHR_external_memory_fd");
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.pNext = exportable ? &ext : nullptr;
  ci.size = size;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ADJ_VK(vkCreateBuffer(ctx.device(), &ci, nullptr, &b.buffer));

  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer, &req);
  VkMemoryPropertyFlags props = memory == BufferMemory::host_mapped
                                    ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = b.buffer;
  VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  export_info.pNext = &dedicated;
  export_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = exportable ? &export_info : nullptr;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = ctx.memory_type(req.memoryTypeBits, props);
  ADJ_VK(vkAllocateMemory(ctx.device(), &ai, nullptr, &b.memory));
  ADJ_VK(vkBindBufferMemory(ctx.device(), b.buffer, b.memory, 0));
  if (memory == BufferMemory::host_mapped)
    ADJ_VK(vkMapMemory(ctx.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

int export_memory_fd(const Context& ctx, const Buffer& b) {
  auto get_fd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(
      vkGetDeviceProcAddr(ctx.device(), "vkGetMemoryFdKHR"));
  if (!get_fd || !ctx.info().external_memory_fd)
    throw Error("cannot export memory: VK_KHR_external_memory_fd is not enabled");
  VkMemoryGetFdInfoKHR gi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
  gi.memory = b.memory;
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  ADJ_VK(get_fd(ctx.device(), &gi, &fd));
  return fd;
}

VkDeviceSize allocation_size(const Context& ctx, const Buffer& b) {
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer, &req);
  return req.size;
}

void destroy(const Context& ctx, Buffer& b) {
  if (b.buffer) vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
  if (b.memory) vkFreeMemory(ctx.device(), b.memory, nullptr);  // unmaps implicitly
  b = Buffer{};
}

Image create_image(const Context& ctx, VkExtent2D extent, VkFormat format, VkImageUsageFlags usage,
                   VkImageAspectFlags aspect, VkSampleCountFlagBits samples) {
  Image img;
  img.format = format;
  img.extent = extent;
  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = VK_IMAGE_TYPE_2D;
  ci.format = format;
  ci.extent = {extent.width, extent.height, 1};
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = samples;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = usage;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  ADJ_VK(vkCreateImage(ctx.device(), &ci, nullptr, &img.image));

  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(ctx.device(), img.image, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  ADJ_VK(vkAllocateMemory(ctx.device(), &ai, nullptr, &img.memory));
  ADJ_VK(vkBindImageMemory(ctx.device(), img.image, img.memory, 0));

  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = img.image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = format;
  vi.subresourceRange = {aspect, 0, 1, 0, 1};
  ADJ_VK(vkCreateImageView(ctx.device(), &vi, nullptr, &img.view));
  return img;
}

void destroy(const Context& ctx, Image& img) {
  if (img.view) vkDestroyImageView(ctx.device(), img.view, nullptr);
  if (img.image) vkDestroyImage(ctx.device(), img.image, nullptr);
  if (img.memory) vkFreeMemory(ctx.device(), img.memory, nullptr);
  img = Image{};
}

void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageAspectFlags aspect,
                   VkImageLayout old_layout, VkImageLayout new_layout,
                   VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                   VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.oldLayout = old_layout;
  b.newLayout = new_layout;
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, nullptr, 0, nullptr, 1, &b);
}

}  // namespace adj::render
