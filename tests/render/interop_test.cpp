// render/interop.h on lavapipe: an exported allocation re-imported into Vulkan aliases the
// same bytes; timeline-semaphore export is refused with a clear message where unsupported.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "render/context.h"
#include "render/interop.h"
#include "render/vk_check.h"

using namespace adj::render;


TEST_CASE("an exported buffer's fd re-imported into Vulkan aliases the same bytes", "[render][interop]") {
  ContextOptions o;
  o.validation = true;
  Context ctx(o);
  ctx.create_device(VK_NULL_HANDLE);
  if (!ctx.info().external_memory_fd) {
    WARN("device has no VK_KHR_external_memory_fd; nothing to test");
    return;
  }
  const VkDeviceSize size = 4096;
  Buffer a = create_buffer(ctx, size, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                           BufferMemory::device_exportable);
  int fd = export_memory_fd(ctx, a);
  REQUIRE(fd >= 0);
  Buffer b = import_memory_fd(ctx, fd, size, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
  REQUIRE(b.mapped != nullptr);  // lavapipe's one memory type is host-visible

  // write through the exporter's mapping, read through the importer's
  void* pa = nullptr;
  REQUIRE(vkMapMemory(ctx.device(), a.memory, 0, VK_WHOLE_SIZE, 0, &pa) == VK_SUCCESS);
  std::vector<uint32_t> pattern(size / 4);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint32_t(i * 2654435761u);
  std::memcpy(pa, pattern.data(), size);
  CHECK(std::memcmp(b.mapped, pattern.data(), size) == 0);
  // and back the other way
  static_cast<uint32_t*>(b.mapped)[7] = 0xdeadbeef;
  CHECK(static_cast<uint32_t*>(pa)[7] == 0xdeadbeef);
  vkUnmapMemory(ctx.device(), a.memory);

  destroy(ctx, b);
  destroy(ctx, a);
  CHECK(ctx.validation_errors() == 0);
}

TEST_CASE("timeline semaphores export where the device can, and say why not where it cannot",
          "[render][interop]") {
  ContextOptions o;
  o.validation = true;
  Context ctx(o);
  ctx.create_device(VK_NULL_HANDLE);
  if (ctx.info().external_semaphore_fd) {
    ExportableSemaphore s = create_exportable_timeline(ctx, 0);
    int fd = export_semaphore_fd(ctx, s);
    CHECK(fd >= 0);
    destroy(ctx, s);
  } else {
    try {
      create_exportable_timeline(ctx);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("staging copy") != std::string::npos);
    }
  }
  CHECK(ctx.validation_errors() == 0);
  CHECK(std::string(to_string(SharePath::cuda_interop)).find("zero-copy") != std::string::npos);
}
