#include "render/interop.h"

#include <unistd.h>

#include "render/context.h"
#include "render/vk_check.h"

namespace adj::render {

Buffer import_memory_fd(const Context& ctx, int fd, VkDeviceSize size, VkBufferUsageFlags usage) {
  if (!ctx.info().external_memory_fd) throw Error("cannot import memory: no VK_KHR_external_memory_fd");
  Buffer b;
  b.size = size;
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.pNext = &ext;
  ci.size = size;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ADJ_VK(vkCreateBuffer(ctx.device(), &ci, nullptr, &b.buffer));

  // which memory types the fd may be imported as
  auto get_props = reinterpret_cast<PFN_vkGetMemoryFdPropertiesKHR>(
      vkGetDeviceProcAddr(ctx.device(), "vkGetMemoryFdPropertiesKHR"));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer, &req);
  uint32_t type_bits = req.memoryTypeBits;
  if (get_props) {
    VkMemoryFdPropertiesKHR fp{VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR};
    if (get_props(ctx.device(), VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, fd, &fp) == VK_SUCCESS &&
        fp.memoryTypeBits)
      type_bits &= fp.memoryTypeBits;
  }
  // prefer a host-visible type (lavapipe has only that one) so the bytes can be read
  uint32_t type = 0;
  try {
    type = ctx.memory_type(type_bits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  } catch (const Error&) {
    type = ctx.memory_type(type_bits, 0);
  }

  VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
  import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  import.fd = fd;
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = b.buffer;
  import.pNext = &dedicated;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &import;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(ctx.device(), &ai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
    throw_vk(r, "vkAllocateMemory (import OPAQUE_FD)", __FILE__, __LINE__);
  }
  ADJ_VK(vkBindBufferMemory(ctx.device(), b.buffer, b.memory, 0));
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(ctx.physical_device(), &mp);
  if (mp.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    ADJ_VK(vkMapMemory(ctx.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

ExportableSemaphore create_exportable_timeline(const Context& ctx, uint64_t initial_value) {
  if (!ctx.info().external_semaphore_fd)
    throw Error("this Vulkan device cannot export timeline semaphores (no VK_KHR_external_semaphore_fd "
                "or no timeline semaphores): CUDA interop falls back to the staging copy");
  VkExportSemaphoreCreateInfo ex{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
  ex.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.pNext = &ex;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = initial_value;
  VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  ci.pNext = &type;
  ExportableSemaphore s;
  ADJ_VK(vkCreateSemaphore(ctx.device(), &ci, nullptr, &s.semaphore));
  return s;
}

int export_semaphore_fd(const Context& ctx, const ExportableSemaphore& s) {
  auto get_fd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(ctx.device(), "vkGetSemaphoreFdKHR"));
  if (!get_fd) throw Error("cannot export a semaphore: VK_KHR_external_semaphore_fd is not enabled");
  VkSemaphoreGetFdInfoKHR gi{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
  gi.semaphore = s.semaphore;
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  ADJ_VK(get_fd(ctx.device(), &gi, &fd));
  return fd;
}

void destroy(const Context& ctx, ExportableSemaphore& s) {
  if (s.semaphore) vkDestroySemaphore(ctx.device(), s.semaphore, nullptr);
  s = ExportableSemaphore{};
}

const char* to_string(SharePath p) {
  switch (p) {
    case SharePath::cpu_mapped: return "CPU backend, mapped host-visible buffers";
    case SharePath::cuda_staging: return "CUDA backend, staging copy through the host";
    case SharePath::cuda_interop: return "CUDA backend, zero-copy Vulkan interop";
  }
  return "?";
}

}  // namespace adj::render
