#pragma once
// Vulkan call checking: a failed call throws render::Error naming the call and the result.
#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace adj::render {

// an environmental failure (no device, out of memory, lost device); the app reports it
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* result_name(VkResult r);

[[noreturn]] void throw_vk(VkResult r, const char* call, const char* file, int line);

}  // namespace adj::render

#define ADJ_VK(call)                                                         \
  do {                                                                       \
    VkResult adj_vk_result_ = (call);                                        \
    if (adj_vk_result_ != VK_SUCCESS)                                        \
      ::adj::render::throw_vk(adj_vk_result_, #call, __FILE__, __LINE__);    \
  } while (0)
