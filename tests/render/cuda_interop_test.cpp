// CUDA writes into a Vulkan buffer through the interop (GPU only: exits 77 = skipped
// without a CUDA device). Then 1000 frames of the semaphore handshake without a
// validation error: Vulkan signals 2k+1, CUDA waits for it, writes, signals 2k+2.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "render/context.h"
#include "render/cuda_interop.h"
#include "render/interop.h"
#include "render/memory.h"
#include "render/vk_check.h"

using namespace adj::render;

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "cuda_interop_test: %s\n", what);
  return 1;
}

// copy a device buffer into a host-visible one and return its bytes
std::vector<uint8_t> read_back(Context& ctx, const Buffer& src, VkDeviceSize size) {
  Buffer host = create_buffer(ctx, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, BufferMemory::host_mapped);
  ctx.run_once([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, size};
    vkCmdCopyBuffer(cmd, src.buffer, host.buffer, 1, &region);
  });
  std::vector<uint8_t> bytes(size);
  std::memcpy(bytes.data(), host.mapped, size);
  destroy(ctx, host);
  return bytes;
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cuda_interop_test: no CUDA device: skipped\n");
    return 77;
  }
  try {
    // the Vulkan device that is the CUDA device (never by index: lavapipe is listed too)
    ContextOptions o;
    o.validation = true;
    o.device_uuid = cuda_device_uuid(0);
    Context ctx(o);
    ctx.create_device(VK_NULL_HANDLE);
    if (!o.device_uuid || std::memcmp(ctx.info().uuid.data(), o.device_uuid->data(), 16) != 0)
      return fail("no Vulkan device matches the CUDA device's UUID");

    const VkDeviceSize size = 1 << 20;
    Buffer vk = create_buffer(ctx, size, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                              BufferMemory::device_exportable);
    CudaBuffer cu = cuda_import_buffer(export_memory_fd(ctx, vk), allocation_size(ctx, vk), size, true);

    // a known pattern written by CUDA, read by Vulkan
    std::vector<uint8_t> pattern(size);
    for (size_t i = 0; i < size; ++i) pattern[i] = uint8_t(i * 7 + 3);
    if (cudaMemcpy(cu.pointer, pattern.data(), size, cudaMemcpyHostToDevice) != cudaSuccess) return fail("cudaMemcpy");
    cudaDeviceSynchronize();
    if (read_back(ctx, vk, size) != pattern) return fail("Vulkan does not see what CUDA wrote");

    // 1000 frames of the handshake when semaphores can be shared
    if (ctx.info().external_semaphore_fd) {
      ExportableSemaphore sem = create_exportable_timeline(ctx, 0);
      CudaSemaphore cs = cuda_import_timeline(export_semaphore_fd(ctx, sem));
      cudaStream_t stream;
      cudaStreamCreate(&stream);
      for (uint64_t k = 0; k < 1000; ++k) {
        VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        si.semaphore = sem.semaphore;
        si.value = 2 * k + 1;
        ADJ_VK(vkSignalSemaphore(ctx.device(), &si));
        cuda_wait(cs, 2 * k + 1, stream);
        cudaMemsetAsync(cu.pointer, int(k & 0xff), 4096, stream);
        cuda_signal(cs, 2 * k + 2, stream);
        uint64_t want = 2 * k + 2;
        VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &sem.semaphore;
        wi.pValues = &want;
        ADJ_VK(vkWaitSemaphores(ctx.device(), &wi, UINT64_MAX));
      }
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
      if (read_back(ctx, vk, 16)[0] != uint8_t(999 & 0xff)) return fail("last frame's write not visible");
      cuda_release(cs);
      destroy(ctx, sem);
    } else {
      std::printf("cuda_interop_test: device cannot share semaphores; handshake not tested\n");
    }

    // teardown: CUDA first, then Vulkan
    cudaDeviceSynchronize();
    cuda_release(cu);
    vkDeviceWaitIdle(ctx.device());
    destroy(ctx, vk);
    if (ctx.validation_errors() > 0) return fail("validation errors");
  } catch (const Error& e) {
    return fail(e.what());
  }
  std::printf("cuda_interop_test: ok\n");
  return 0;
}
