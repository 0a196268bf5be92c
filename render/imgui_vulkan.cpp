#include "render/imgui_vulkan.h"

#include <imgui.h>
#include <imgui_impl_vulkan.h>

#include "render/context.h"
#include "render/target.h"
#include "render/vk_check.h"

namespace adj::render {

namespace {
void check_result(VkResult r) {
  if (r != VK_SUCCESS) throw_vk(r, "ImGui Vulkan backend", __FILE__, __LINE__);
}
}  // namespace

ImGuiVulkan::ImGuiVulkan(Context& ctx, const RenderTarget& target, uint32_t image_count, bool overlay)
    : ctx_(ctx) {
  IM_ASSERT(ImGui::GetCurrentContext() != nullptr);  // create the ImGui context first

  VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 16}};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pci.maxSets = 16;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = sizes;
  ADJ_VK(vkCreateDescriptorPool(ctx.device(), &pci, nullptr, &pool_));

  ImGui_ImplVulkan_InitInfo info{};
  info.Instance = ctx.instance();
  info.PhysicalDevice = ctx.physical_device();
  info.Device = ctx.device();
  info.QueueFamily = ctx.queue_family();
  info.Queue = ctx.queue();
  info.DescriptorPool = pool_;
  info.Subpass = 0;
  info.MinImageCount = image_count < 2 ? 2 : image_count;
  info.ImageCount = image_count < 2 ? 2 : image_count;
  info.MSAASamples = overlay ? VK_SAMPLE_COUNT_1_BIT : target.samples();
  info.CheckVkResultFn = check_result;
  if (!ImGui_ImplVulkan_Init(&info, overlay ? target.overlay_pass() : target.render_pass()))
    throw Error("ImGui_ImplVulkan_Init failed");

  ctx.run_once([](VkCommandBuffer cmd) { ImGui_ImplVulkan_CreateFontsTexture(cmd); });
  ImGui_ImplVulkan_DestroyFontUploadObjects();
}

ImGuiVulkan::~ImGuiVulkan() {
  vkDeviceWaitIdle(ctx_.device());
  ImGui_ImplVulkan_Shutdown();
  vkDestroyDescriptorPool(ctx_.device(), pool_, nullptr);
}

void ImGuiVulkan::new_frame() { ImGui_ImplVulkan_NewFrame(); }

void ImGuiVulkan::draw(ImDrawData* data, VkCommandBuffer cmd) {
  if (data) ImGui_ImplVulkan_RenderDrawData(data, cmd);
}

}  // namespace adj::render
