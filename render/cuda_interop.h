#pragma once
// The CUDA half of render/interop.h (built with CUDA only: ADJ_RENDER_CUDA): an exported
// Vulkan allocation becomes a CUDA device pointer, an exported timeline semaphore a CUDA
// external semaphore. Teardown order (platform notes): synchronize the stream, release
// the CUDA imports, then destroy the Vulkan objects.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace adj::render {

// the 16-byte UUID of CUDA device `device` (Vulkan's deviceUUID of the same GPU matches)
std::optional<std::array<uint8_t, 16>> cuda_device_uuid(int device = 0);

struct CudaBuffer {
  void* memory = nullptr;  // cudaExternalMemory_t
  void* pointer = nullptr;  // device pointer to byte 0 of the buffer
  size_t size = 0;
};
// import an OPAQUE_FD of `allocation_size` bytes (the allocation's size, not the buffer's:
// a known mistake in public samples); CUDA owns the fd on success. Throws render::Error.
CudaBuffer cuda_import_buffer(int fd, size_t allocation_size, size_t buffer_size, bool dedicated);
void cuda_release(CudaBuffer& b);

struct CudaSemaphore {
  void* semaphore = nullptr;  // cudaExternalSemaphore_t
};
CudaSemaphore cuda_import_timeline(int fd);
// on `stream` (a cudaStream_t, null = default): wait until the timeline reaches value / set it
void cuda_wait(const CudaSemaphore& s, uint64_t value, void* stream);
void cuda_signal(const CudaSemaphore& s, uint64_t value, void* stream);
void cuda_release(CudaSemaphore& s);

}  // namespace adj::render
