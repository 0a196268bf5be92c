#include "app/viewer.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "app/image_io.h"
#include "app/sim_session.h"
#include "app/system_info.h"
#include "app/ui.h"
#include "render/background.h"
#include "render/context.h"
#include "render/frame_loop.h"
#include "render/imgui_vulkan.h"
#include "render/scene_renderer.h"
#include "render/swapchain.h"
#include "render/target.h"
#include "render/vk_check.h"

namespace adj::app {

namespace {

// GLFW: the library, one window and its Vulkan surface, released in reverse order
struct Window {
  GLFWwindow* handle = nullptr;
  bool glfw = false;

  ~Window() {
    if (handle) glfwDestroyWindow(handle);
    if (glfw) glfwTerminate();
  }
  VkExtent2D framebuffer_extent() const {
    int w = 0, h = 0;
    glfwGetFramebufferSize(handle, &w, &h);
    return {uint32_t(w), uint32_t(h)};
  }
};

// the window's Vulkan surface; must go before the instance does
struct Surface {
  VkInstance instance = VK_NULL_HANDLE;
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  ~Surface() {
    if (surface) vkDestroySurfaceKHR(instance, surface, nullptr);
  }
};

void glfw_error(int code, const char* message) {
  std::fprintf(stderr, "adjoint: GLFW error %d: %s\n", code, message);
}

// ImGui with its own ini-less context; destroyed last
struct ImGuiContextGuard {
  ImGuiContextGuard() {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini next to the user's files
    ImGui::StyleColorsDark();
    ImGuiStyle& st = ImGui::GetStyle();
    st.WindowRounding = 4.0f;
    st.FrameRounding = 3.0f;
  }
  ~ImGuiContextGuard() { ImGui::DestroyContext(); }
};

// orbit (left drag), pan (right or middle drag), zoom (wheel), unless ImGui wants the mouse
void handle_viewport_input(render::Camera& camera, float viewport_height) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureMouse) return;
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Left))
    camera.orbit(-io.MouseDelta.x * 0.008f, io.MouseDelta.y * 0.008f);
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Right) || ImGui::IsMouseDragging(ImGuiMouseButton_Middle))
    camera.pan(io.MouseDelta.x, io.MouseDelta.y, viewport_height);
  if (io.MouseWheel != 0.0f) camera.zoom(io.MouseWheel > 0 ? 0.9f : 1.1f);
}

}  // namespace

int run_viewer(const ViewerOptions& opt) {
  std::unique_ptr<Window> window;
  render::ContextOptions copt;
  copt.validation = opt.validation;
  copt.sync_validation = opt.sync_validation;

  // window and the instance extensions it needs
  if (!opt.headless) {
    window = std::make_unique<Window>();
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
      std::fprintf(stderr, "adjoint: cannot open a window (no display?); try --headless\n");
      return 1;
    }
    window->glfw = true;
    if (!glfwVulkanSupported()) {
      std::fprintf(stderr, "adjoint: GLFW found no Vulkan loader\n");
      return 1;
    }
    uint32_t n = 0;
    const char** exts = glfwGetRequiredInstanceExtensions(&n);
    for (uint32_t i = 0; i < n; ++i) copt.instance_extensions.emplace_back(exts[i]);
  }

  try {
    render::Context ctx(copt);
    Surface surface{ctx.instance()};
    if (window) {
      glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
      window->handle = glfwCreateWindow(int(opt.width), int(opt.height), "Adjoint", nullptr, nullptr);
      if (!window->handle) {
        std::fprintf(stderr, "adjoint: cannot create a window\n");
        return 1;
      }
      ADJ_VK(glfwCreateWindowSurface(ctx.instance(), window->handle, nullptr, &surface.surface));
    }
    ctx.create_device(surface.surface);

    VkExtent2D extent = window ? window->framebuffer_extent() : VkExtent2D{opt.width, opt.height};
    render::RenderTarget target(ctx, extent, render::pick_msaa(ctx, 4));
    std::unique_ptr<render::Swapchain> swapchain;
    if (window) swapchain = std::make_unique<render::Swapchain>(ctx, surface.surface, extent, opt.vsync);
    render::FrameLoop loop(ctx, target, swapchain.get());
    render::Background background(ctx, target);
    render::SceneRenderer scene_renderer(ctx, target);

    ImGuiContextGuard imgui_context;
    if (window) ImGui_ImplGlfw_InitForVulkan(window->handle, true);
    std::optional<render::ImGuiVulkan> imgui;
    imgui.emplace(ctx, target, render::FrameLoop::k_frames_in_flight);

    AboutInfo about = make_about_info(ctx.info(), ctx.validation_enabled());
    UiState ui;
    ui.show_about = opt.show_about;
    SimSession sim;
    render::Camera camera;
    if (!opt.scene_path.empty()) {
      Status st = sim.load(opt.scene_path);
      if (st) {
        ui.scene_name = std::filesystem::path(opt.scene_path).filename().string();
        camera = sim.view().fit_camera(sim.state(), float(target.extent().width) / float(target.extent().height));
      } else {
        ui.status = st.message();
        std::fprintf(stderr, "adjoint: %s\n", st.message().c_str());
      }
    }
    bool playing = opt.play;
    if (window) {
      std::string title = "Adjoint" + (ui.scene_name.empty() ? "" : " - " + ui.scene_name);
      glfwSetWindowTitle(window->handle, title.c_str());
    }

    const float sky_top[3] = {0.36f, 0.45f, 0.56f};
    const float sky_bottom[3] = {0.80f, 0.83f, 0.86f};
    const float clear[4] = {0.1f, 0.1f, 0.12f, 1.0f};
    int frame = 0;
    while (true) {
      // events and window size
      if (window) {
        glfwPollEvents();
        if (glfwWindowShouldClose(window->handle)) break;
        VkExtent2D fb = window->framebuffer_extent();
        if (fb.width == 0 || fb.height == 0) {  // minimized
          glfwWaitEvents();
          continue;
        }
        if (loop.swapchain_out_of_date() || fb.width != target.extent().width ||
            fb.height != target.extent().height) {
          swapchain->recreate(fb);
          target.resize(swapchain->extent());
          loop.swapchain_recreated();
        }
      }
      if (ui.quit_requested) break;

      // ui
      imgui->new_frame();
      if (window) {
        ImGui_ImplGlfw_NewFrame();
      } else {
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(float(target.extent().width), float(target.extent().height));
        io.DeltaTime = 1.0f / 60.0f;
      }
      ImGui::NewFrame();
      draw_ui(ui, about);
      if (sim.loaded()) {
        handle_viewport_input(camera, float(target.extent().height));
        ImGuiIO& io = ImGui::GetIO();
        if (!io.WantCaptureKeyboard) {
          if (ImGui::IsKeyPressed(GLFW_KEY_SPACE)) playing = !playing;
          if (ImGui::IsKeyPressed(GLFW_KEY_BACKSPACE)) sim.reset();
        }
        bool step_once = !io.WantCaptureKeyboard && ImGui::IsKeyPressed(GLFW_KEY_RIGHT);
        if (playing || step_once) {
          if (Status st = sim.step(); !st) {
            playing = false;
            ui.status = st.message();
          }
        }
        ui.sim_line = "frame " + std::to_string(sim.frame()) + "  t = " + std::to_string(sim.time()).substr(0, 6) +
                      " s" + (playing ? "  (playing)" : "  (paused: Space plays)");
      }
      ImGui::Render();

      // draw
      VkCommandBuffer cmd = loop.begin_frame();
      if (!cmd) continue;  // swapchain out of date: recreated at the top
      if (sim.loaded()) {
        Overlays ov;
        const render::DrawList& list = sim.view().build(sim.state(), &sim.contacts(), nullptr, ov);
        scene_renderer.prepare(cmd, list, camera, loop.frame_index());
      }
      target.begin(cmd, clear);
      background.draw(cmd, sky_top, sky_bottom);
      if (sim.loaded()) scene_renderer.draw(cmd);
      imgui->draw(ImGui::GetDrawData(), cmd);
      target.end(cmd);
      ++frame;
      bool last = opt.frames > 0 && frame >= opt.frames;
      loop.end_frame(last && !opt.screenshot.empty());
      if (last) break;
    }

    // the last frame to a file
    if (!opt.screenshot.empty()) {
      auto cap = loop.take_capture();
      if (!cap) {
        std::fprintf(stderr, "adjoint: no frame was rendered, nothing written to %s\n",
                     opt.screenshot.c_str());
        return 1;
      }
      std::string err;
      if (!write_png(opt.screenshot, cap->width, cap->height, cap->rgba, &err)) {
        std::fprintf(stderr, "adjoint: %s\n", err.c_str());
        return 1;
      }
      std::printf("adjoint: wrote %s (%ux%u)\n", opt.screenshot.c_str(), cap->width, cap->height);
    }
    loop.wait_idle();
    imgui.reset();
    if (window) ImGui_ImplGlfw_Shutdown();

    if (ctx.validation_errors() > 0) {
      std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", ctx.validation_errors());
      return 3;
    }
    return 0;
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

}  // namespace adj::app
