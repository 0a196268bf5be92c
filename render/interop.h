#pragma once
// Vulkan <-> CUDA sharing (../shared/notes/platform-facts.md, "interop recipe"): memory
// and timeline semaphores exported as OPAQUE_FD file descriptors, imported on the other
// side. This half is plain Vulkan and works wherever VK_KHR_external_memory_fd does
// (lavapipe included); render/cuda_interop.h is the CUDA half.
#include <vulkan/vulkan.h>

#include "render/memory.h"

namespace adj::render {

class Context;

// import memory exported as an OPAQUE_FD (by Vulkan: the same bytes, aliased) into a new
// buffer of `size` bytes; Vulkan owns the fd on success. Host-visible memory is mapped.
Buffer import_memory_fd(const Context& ctx, int fd, VkDeviceSize size, VkBufferUsageFlags usage);

// a timeline semaphore whose payload can be exported (CUDA waits on and signals it)
struct ExportableSemaphore {
  VkSemaphore semaphore = VK_NULL_HANDLE;
};
// throws render::Error when the device has no VK_KHR_external_semaphore_fd or no timeline
// semaphores (lavapipe 22.3 has neither: the staging path is used there)
ExportableSemaphore create_exportable_timeline(const Context& ctx, uint64_t initial_value = 0);
int export_semaphore_fd(const Context& ctx, const ExportableSemaphore& s);
void destroy(const Context& ctx, ExportableSemaphore& s);

// which way simulation results reach the renderer's buffers, for Stats and About
enum class SharePath {
  cpu_mapped,     // CPU backend: engine/vis writes into mapped host-visible buffers
  cuda_staging,   // CUDA without interop: device -> host -> upload each frame
  cuda_interop,   // CUDA writes straight into exported Vulkan buffers (no host round trip)
};
const char* to_string(SharePath p);

}  // namespace adj::render
