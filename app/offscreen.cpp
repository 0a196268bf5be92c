#include "app/offscreen.h"

#include <imgui.h>

#include "render/background.h"
#include "render/context.h"
#include "render/imgui_vulkan.h"
#include "render/scene_renderer.h"
#include "render/target.h"

namespace adj::app {

struct Offscreen::Impl {
  render::Context ctx;
  std::unique_ptr<render::RenderTarget> target;
  std::unique_ptr<render::FrameLoop> loop;
  std::unique_ptr<render::Background> background;
  std::unique_ptr<render::SceneRenderer> scene;
  ImGuiContext* imgui_context = nullptr;
  std::unique_ptr<render::ImGuiVulkan> imgui;

  static render::ContextOptions options(bool validation) {
    render::ContextOptions o;
    o.validation = validation;
    return o;
  }
  explicit Impl(bool validation) : ctx(options(validation)) {}
};

Offscreen::Offscreen(uint32_t width, uint32_t height, bool validation, bool with_ui)
    : impl_(std::make_unique<Impl>(validation)) {
  Impl& m = *impl_;
  m.ctx.create_device(VK_NULL_HANDLE);
  m.target = std::make_unique<render::RenderTarget>(m.ctx, VkExtent2D{width, height}, render::pick_msaa(m.ctx, 4));
  m.loop = std::make_unique<render::FrameLoop>(m.ctx, *m.target, nullptr);
  m.background = std::make_unique<render::Background>(m.ctx, *m.target);
  m.scene = std::make_unique<render::SceneRenderer>(m.ctx, *m.target);
  if (with_ui) {
    m.imgui_context = ImGui::CreateContext();
    ImGui::SetCurrentContext(m.imgui_context);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(float(width), float(height));
    ImGui::StyleColorsDark();
    m.imgui = std::make_unique<render::ImGuiVulkan>(m.ctx, *m.target, render::FrameLoop::k_frames_in_flight);
  }
}

Offscreen::~Offscreen() {
  Impl& m = *impl_;
  m.loop->wait_idle();
  if (m.imgui) {
    ImGui::SetCurrentContext(m.imgui_context);
    m.imgui.reset();
    ImGui::DestroyContext(m.imgui_context);
  }
}

void Offscreen::frame(const render::DrawList& list, const render::Camera& camera, const std::function<void()>& ui) {
  frame([&](uint64_t) -> const render::DrawList& { return list; }, camera, ui);
}

void Offscreen::frame(const std::function<const render::DrawList&(uint64_t frame)>& list_for,
                      const render::Camera& camera, const std::function<void()>& ui) {
  Impl& m = *impl_;
  if (m.imgui) {
    ImGui::SetCurrentContext(m.imgui_context);
    m.imgui->new_frame();
    ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
    ImGui::NewFrame();
    if (ui) ui();
    ImGui::Render();
  }
  const float top[3] = {0.36f, 0.45f, 0.56f}, bottom[3] = {0.80f, 0.83f, 0.86f};
  const float clear[4] = {0, 0, 0, 1};
  VkCommandBuffer cmd = m.loop->begin_frame();
  const render::DrawList& list = list_for(m.loop->frame_index());
  m.scene->prepare(cmd, list, camera, m.loop->frame_index());
  m.target->begin(cmd, clear);
  m.background->draw(cmd, top, bottom);
  m.scene->draw(cmd);
  if (m.imgui) m.imgui->draw(ImGui::GetDrawData(), cmd);
  m.target->end(cmd);
  m.loop->end_frame(true);
}

bool Offscreen::pop_capture(render::Capture& out) { return impl_->loop->pop_capture(out); }
void Offscreen::finish_captures() { impl_->loop->finish_captures(); }
std::optional<render::Capture> Offscreen::take_capture() { return impl_->loop->take_capture(); }
render::Context& Offscreen::context() { return impl_->ctx; }
render::FrameLoop& Offscreen::loop() { return *impl_->loop; }
int Offscreen::validation_errors() const { return impl_->ctx.validation_errors(); }
float Offscreen::aspect() const {
  VkExtent2D e = impl_->target->extent();
  return float(e.width) / float(e.height);
}

}  // namespace adj::app
