#include "render/cuda_interop.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "render/vk_check.h"

namespace adj::render {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace

std::optional<std::array<uint8_t, 16>> cuda_device_uuid(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  std::array<uint8_t, 16> id{};
  std::memcpy(id.data(), prop.uuid.bytes, 16);
  return id;
}

CudaBuffer cuda_import_buffer(int fd, size_t allocation_size, size_t buffer_size, bool dedicated) {
  cudaExternalMemoryHandleDesc desc{};
  desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
  desc.handle.fd = fd;
  desc.size = allocation_size;
  desc.flags = dedicated ? cudaExternalMemoryDedicated : 0;
  cudaExternalMemory_t mem = nullptr;
  check(cudaImportExternalMemory(&mem, &desc), "cudaImportExternalMemory");
  cudaExternalMemoryBufferDesc bd{};
  bd.offset = 0;  // our buffers are bound at offset 0 of a dedicated allocation
  bd.size = buffer_size;
  void* ptr = nullptr;
  cudaError_t e = cudaExternalMemoryGetMappedBuffer(&ptr, mem, &bd);
  if (e != cudaSuccess) {
    cudaDestroyExternalMemory(mem);
    check(e, "cudaExternalMemoryGetMappedBuffer");
  }
  return {mem, ptr, buffer_size};
}

void cuda_release(CudaBuffer& b) {
  if (b.pointer) cudaFree(b.pointer);  // a mapped buffer is freed with cudaFree
  if (b.memory) cudaDestroyExternalMemory(static_cast<cudaExternalMemory_t>(b.memory));
  b = CudaBuffer{};
}

CudaSemaphore cuda_import_timeline(int fd) {
  cudaExternalSemaphoreHandleDesc desc{};
  desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
  desc.handle.fd = fd;
  cudaExternalSemaphore_t s = nullptr;
  check(cudaImportExternalSemaphore(&s, &desc), "cudaImportExternalSemaphore");
  return {s};
}

void cuda_wait(const CudaSemaphore& s, uint64_t value, void* stream) {
  cudaExternalSemaphoreWaitParams p{};
  p.params.fence.value = value;
  auto sem = static_cast<cudaExternalSemaphore_t>(s.semaphore);
  check(cudaWaitExternalSemaphoresAsync(&sem, &p, 1, static_cast<cudaStream_t>(stream)),
        "cudaWaitExternalSemaphoresAsync");
}

void cuda_signal(const CudaSemaphore& s, uint64_t value, void* stream) {
  cudaExternalSemaphoreSignalParams p{};
  p.params.fence.value = value;
  auto sem = static_cast<cudaExternalSemaphore_t>(s.semaphore);
  check(cudaSignalExternalSemaphoresAsync(&sem, &p, 1, static_cast<cudaStream_t>(stream)),
        "cudaSignalExternalSemaphoresAsync");
}

void cuda_release(CudaSemaphore& s) {
  if (s.semaphore) cudaDestroyExternalSemaphore(static_cast<cudaExternalSemaphore_t>(s.semaphore));
  s = CudaSemaphore{};
}

}  // namespace adj::render
