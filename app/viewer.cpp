#include "app/viewer.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "app/editor/editor.h"
#include "app/editor/script.h"
#include "app/image_io.h"
#include "app/system_info.h"
#include "app/ui.h"
#include "render/background.h"
#include "render/context.h"
#include "render/frame_loop.h"
#include "render/imgui_vulkan.h"
#include "render/line_builder.h"
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

void glfw_error(int code, const char* message) { std::fprintf(stderr, "adjoint: GLFW error %d: %s\n", code, message); }

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
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) camera.orbit(-io.MouseDelta.x * 0.008f, io.MouseDelta.y * 0.008f);
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Right) || ImGui::IsMouseDragging(ImGuiMouseButton_Middle))
    camera.pan(io.MouseDelta.x, io.MouseDelta.y, viewport_height);
  if (io.MouseWheel != 0.0f) camera.zoom(io.MouseWheel > 0 ? 0.9f : 1.1f);
}

// a left click that did not drag, outside every ImGui window: its pixel
std::optional<std::pair<int, int>> viewport_click() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureMouse || !ImGui::IsMouseReleased(ImGuiMouseButton_Left)) return std::nullopt;
  if (io.MouseDragMaxDistanceSqr[0] > 9.0f) return std::nullopt;
  return std::make_pair(int(io.MousePos.x), int(io.MousePos.y));
}

// files dropped on the window, collected by GLFW's callback between frames
struct Drops {
  std::vector<std::string> paths;
};
void on_drop(GLFWwindow* w, int count, const char** paths) {
  auto* d = static_cast<Drops*>(glfwGetWindowUserPointer(w));
  for (int i = 0; i < count; ++i) d->paths.emplace_back(paths[i]);
}

// "adjoint-recording-20261129-221530.mp4" (or "adjoint-optimization-...") in `folder`
// (Editor::media_folder, created when missing)
std::string recording_name(const std::string& folder, bool optimization) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  char buf[64];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf,
                optimization ? "adjoint-optimization-%Y%m%d-%H%M%S.mp4" : "adjoint-recording-%Y%m%d-%H%M%S.mp4",
                std::localtime(&t));
  return (std::filesystem::path(folder) / buf).string();
}

// the caption bar of a recording without panels: time, frame, the optimizer's progress
void draw_caption(editor::Editor& ed) {
  ImGui::SetNextWindowPos(ImVec2(10, 10));
  ImGui::SetNextWindowBgAlpha(0.55f);
  ImGui::Begin("##caption", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoInputs |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing);
  // what the video shows, and nothing else: a replay names its iteration and loss; the live
  // simulation is the scene as it is (not an optimizer's result, whatever the optimizer did)
  if (ed.replay_ready()) {
    const double t = ed.replay.frame * double(ed.compiled()->frame_dt);
    const char* stage = ed.before_after == editor::Editor::BeforeAfter::before  ? "before:   "
                        : ed.before_after == editor::Editor::BeforeAfter::after ? "after:   "
                                                                                : "";
    ImGui::Text("%s%s   replay of iteration %d (loss %.5g)", stage, ed.snap.replay.task.c_str(),
                ed.snap.replay.iteration, ed.snap.replay.loss);
    ImGui::Text("%s   t = %.2f s   frame %d", ed.doc.scene().name.c_str(), t, ed.replay.frame);
  } else {
    ImGui::Text("%s   t = %.2f s   frame %d", ed.doc.scene().name.c_str(), ed.snap.time, ed.snap.frame);
  }
  ImGui::End();
}

// the frames still in flight go to the encoder, then the file is finalized
void finish_recording(render::FrameLoop& loop, editor::Editor& ed) {
  loop.finish_captures();
  render::Capture c;
  while (loop.pop_capture(c)) ed.recording.push(std::move(c));
  std::string path = std::filesystem::absolute(ed.recording.path()).string();
  Status st = ed.recording.stop(ed.worker);
  int frames = ed.recording.frames();  // after stop: the encoder's queue is flushed
  if (st)
    ed.message(editor::Severity::info, "recorded " + std::to_string(frames) + " frames to " + path);
  else
    ed.message(editor::Severity::error, st.message());
  std::printf("adjoint: %s\n",
              st ? ("recorded " + std::to_string(frames) + " frames to " + path).c_str() : st.message().c_str());
}

// "adjoint-20261129-221530.png" in `folder` (Editor::media_folder, created when missing)
std::string screenshot_name(const std::string& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "adjoint-%Y%m%d-%H%M%S.png", std::localtime(&t));
  return (std::filesystem::path(folder) / buf).string();
}

// a script's mouse, text and key into ImGui's input for this frame (its key is held one frame,
// released at the next call)
void feed_script_input(editor::Script* script, ImGuiIO& io, std::optional<editor::ScriptKey>& held_key) {
  if (held_key) {
    io.KeysDown[held_key->key] = false;
    io.KeyCtrl = io.KeyShift = false;
    held_key.reset();
  }
  if (!script) return;
  if (auto m = script->take_mouse()) {  // a script's drag, one position per frame
    io.MousePos = ImVec2(m->x, m->y);
    io.MouseDown[0] = m->down;
    io.KeyCtrl = m->ctrl;
  }
  if (auto text = script->take_text())
    for (char ch : *text) io.AddInputCharacter(static_cast<unsigned char>(ch));
  if (auto k = script->take_key()) {
    io.KeysDown[k->key] = true;
    io.KeyCtrl = k->ctrl;
    io.KeyShift = k->shift;
    held_key = k;
  }
}

// the viewport's caption lines: the frame, playing or paused, what the viewport shows, the frame
// rate (as MuJoCo's simulate shows it), and an overlay's hint
void update_status_lines(UiState& ui, editor::Editor& ed, bool recording_rollout) {
  ui.sim_line = "frame " + std::to_string(ed.snap.frame) + (ed.snap.playing ? "  playing" : "  paused (Space plays)") +
                (ed.timeline_frame >= 0 ? "  showing frame " + std::to_string(ed.timeline_frame) : "") +
                (ed.view_settings.show_optimized && ed.snap.has_opt_final_state && ed.opt_fits()
                     ? "  showing the end of iteration " + std::to_string(ed.snap.opt_final_iteration) +
                           (ed.snap.opt_final_iteration == ed.snap.best_iteration ? " (the best)" : " (the last)")
                     : "");
  ui.status = ed.overlay_hint();  // an overlay switched on that has nothing to show yet says why
  {                               // how smooth it is, as MuJoCo's simulate shows it
    char rate[64];
    std::snprintf(rate, sizeof rate, "   %.0f fps", ed.ui_frame_ms > 0 ? 1000.0 / ed.ui_frame_ms : 0.0);
    ui.sim_line += rate;
    if (ed.snap.playing) {
      std::snprintf(rate, sizeof rate, ", sim %.0f frames/s", ed.snap.steps_per_second);
      ui.sim_line += rate;
    }
  }
  if (ed.replay_ready())
    ui.sim_line = "replay of iteration " + std::to_string(ed.snap.replay.iteration) + ": frame " +
                  std::to_string(ed.replay.frame) + " of " + std::to_string(ed.snap.replay.frames - 1) +
                  (ed.replay.playing ? "  playing" : "  paused (Space plays)");
  if (recording_rollout) ui.sim_line = "recording the optimization: each iteration's rollout in turn";
}

// F11: fullscreen on the primary monitor, and back to the window as it was (windowed: its
// position and size, kept while fullscreen)
void toggle_fullscreen(GLFWwindow* h, int windowed[4]) {
  if (glfwGetWindowMonitor(h)) {
    glfwSetWindowMonitor(h, nullptr, windowed[0], windowed[1], windowed[2], windowed[3], 0);
  } else if (GLFWmonitor* m = glfwGetPrimaryMonitor()) {
    glfwGetWindowPos(h, &windowed[0], &windowed[1]);
    glfwGetWindowSize(h, &windowed[2], &windowed[3]);
    const GLFWvidmode* mode = glfwGetVideoMode(m);
    if (mode) glfwSetWindowMonitor(h, m, 0, 0, mode->width, mode->height, mode->refreshRate);
  }
}

// a recording asked to start or stop (Ctrl+R, the Record button, a script; Record before/after
// when its first replay is here): true when one started now (it captures from the next frame:
// this one was built with the panels)
bool start_or_stop_recording(render::FrameLoop& loop, VkExtent2D extent, editor::Editor& ed) {
  if (ed.before_after_record_pending && ed.replay_ready()) {  // Record before/after: the first replay is here
    ed.before_after_record_pending = false;
    ed.replay.frame = 0;
    ed.record_toggle_requested = true;
  }
  if (!std::exchange(ed.record_toggle_requested, false)) return false;
  if (ed.recording.active()) {
    finish_recording(loop, ed);
    ed.before_after = editor::Editor::BeforeAfter::off;
    return false;
  }
  if (!ed.has_scene()) return false;
  editor::RecordingOptions ro = ed.record_options;
  ro.optimization = std::exchange(ed.record_optimization_pending, false);
  if (ro.path.empty()) ro.path = recording_name(ed.media_folder(), ro.optimization);
  Status st = ed.recording.start(ro, extent.width, extent.height, double(ed.compiled()->frame_dt), ed.worker, ed.snap);
  if (!st) {
    ed.message(editor::Severity::error, st.message());
    return false;
  }
  // a replay is recorded whole, from its first frame, wherever it was scrubbed or played to
  if (ed.replay_ready()) ed.replay.frame = 0, ed.replay.playing = false;
  ed.message(editor::Severity::info,
             "recording to " + std::filesystem::absolute(ro.path).string() +
                 (ed.replay_ready() ? " (the replay, to its end; Ctrl+R stops)" : " (Ctrl+R stops)"));
  return true;
}

// ghost trajectories of earlier iterations, coloured by their loss, and PODS' copy 0 under
// the policy (white) and under the improved actions (cyan); points: their storage
void add_ghosts(const editor::Snapshot& snap, render::LineBuilder& ghosts,
                std::vector<std::vector<glm::vec3>>& ghost_points) {
  const size_t n = snap.ghost_paths.size(), pulls = snap.pull_paths.size();
  ghost_points.assign(n + pulls, {});
  std::vector<render::GhostTrajectory> g;
  for (size_t k = 0; k < n; ++k) {
    for (const auto& p : snap.ghost_paths[k]) ghost_points[k].emplace_back(p.x, p.y, p.z);
    g.push_back({ghost_points[k], snap.ghost_losses[k]});
  }
  auto [lo, hi] = std::minmax_element(snap.ghost_losses.begin(), snap.ghost_losses.end());
  render::add_ghost_trajectories(ghosts, g, {render::Colormap::viridis, *lo, *hi > *lo ? *hi : *lo + 1.0f});
  // PODS: copy 0 under the policy (white) and under the improved actions (cyan)
  for (size_t k = 0; k < pulls; ++k) {
    for (const auto& p : snap.pull_paths[k]) ghost_points[n + k].emplace_back(p.x, p.y, p.z);
    ghosts.add_strip(ghost_points[n + k], render::pack_rgba8(k == 0 ? glm::vec4(0.95f, 0.95f, 0.95f, 0.9f)
                                                                    : glm::vec4(0.2f, 0.9f, 1.0f, 1.0f)));
  }
}

// picking: the object (and a robot's body) under a click selected; under a Ctrl+click, the
// particle grabbed (waits for the GPU, a few ms)
void pick(render::SceneRenderer& renderer, const render::DrawList& list, VkExtent2D extent,
          const std::optional<std::pair<int, int>>& click, const std::optional<std::pair<int, int>>& pull_click,
          editor::Editor& ed) {
  if (click) {
    auto hit = renderer.pick(list, ed.camera, extent, uint32_t(click->first), uint32_t(click->second));
    int index = hit && hit->object > 0 ? int(hit->object) - 1 : -1;
    ed.select(index < int(ed.doc.scene().objects.size()) ? index : -1);
    if (ed.selected() >= 0 && ed.doc.scene().objects[size_t(ed.selected())].kind == scene::ObjectKind::robot)
      editor::robot_pick_body(ed, ed.selected(), {float(click->first), float(click->second)},
                              {float(extent.width), float(extent.height)});
  }
  if (pull_click) {  // Ctrl+click: grab the particle under the cursor
    auto hit = renderer.pick(list, ed.camera, extent, uint32_t(pull_click->first), uint32_t(pull_click->second));
    if (hit) ed.start_pull(list, hit->object, hit->element);
  }
}

// the frame just captured into a PNG (a screenshot: F12, the menu, a script's)
void write_screenshot(render::FrameLoop& loop, const std::string& path, editor::Editor& ed, editor::Script* script) {
  auto cap = loop.take_capture();
  std::string err;
  bool ok = cap && write_png(path, cap->width, cap->height, cap->rgba, &err);
  if (!cap) err = "no frame was captured";
  if (ok)
    ed.message(editor::Severity::info, "screenshot " + path);
  else
    ed.message(editor::Severity::error, path + ": " + err);
  if (script) script->screenshot_written(ok, err);
  std::printf("adjoint: %s %s\n", ok ? "wrote" : "could not write", path.c_str());
}

// a recorded frame: the replay or the simulation moves on, and the captures go to the encoder
void record_captured_frame(render::FrameLoop& loop, editor::Editor& ed, bool record_replay) {
  if (record_replay) {
    // the replay's last frame is in the video: the recording is complete (or, before/after,
    // goes on with the best iteration's replay)
    if (ed.replay.frame >= ed.snap.replay.frames - 1) {
      if (!ed.continue_before_after()) ed.record_toggle_requested = true;
    } else {
      ed.step_replay(ed.recording.steps_per_frame());
    }
  } else {
    ed.recording.advance(ed.worker, ed.snap);
  }
  render::Capture rc;
  while (loop.pop_capture(rc))
    if (!ed.recording.push(std::move(rc))) {
      finish_recording(loop, ed);
      break;
    }
}

// --screenshot: the last frame to a file; false (said why) when there is none or it cannot be written
bool write_last_frame(render::FrameLoop& loop, const std::string& path) {
  auto cap = loop.take_capture();
  if (!cap) {
    std::fprintf(stderr, "adjoint: no frame was rendered, nothing written to %s\n", path.c_str());
    return false;
  }
  std::string err;
  if (!write_png(path, cap->width, cap->height, cap->rgba, &err)) {
    std::fprintf(stderr, "adjoint: %s\n", err.c_str());
    return false;
  }
  std::printf("adjoint: wrote %s (%ux%u)\n", path.c_str(), cap->width, cap->height);
  return true;
}

// GLFW started for a window, and the instance extensions it needs added; null (said why) when
// there is no display or no Vulkan loader
std::unique_ptr<Window> start_glfw(render::ContextOptions& copt) {
  auto window = std::make_unique<Window>();
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "adjoint: cannot open a window (no display?); try --headless\n");
    return nullptr;
  }
  window->glfw = true;
  if (!glfwVulkanSupported()) {
    std::fprintf(stderr, "adjoint: GLFW found no Vulkan loader\n");
    return nullptr;
  }
  uint32_t n = 0;
  const char** exts = glfwGetRequiredInstanceExtensions(&n);
  for (uint32_t i = 0; i < n; ++i) copt.instance_extensions.emplace_back(exts[i]);
  return window;
}

// the viewport's mouse: a Ctrl+click's pull, the pull and transform tools, else the camera and a
// click to pick; then the camera's follow and fit
void viewport_input(editor::Editor& ed, VkExtent2D extent, std::optional<std::pair<int, int>>& click,
                    std::optional<std::pair<int, int>>& pull_click) {
  ImGuiIO& io = ImGui::GetIO();
  const float vw = float(extent.width), vh = float(extent.height);
  if (io.KeyCtrl && !io.WantCaptureMouse && ImGui::IsMouseClicked(ImGuiMouseButton_Left))
    pull_click = std::make_pair(int(io.MousePos.x), int(io.MousePos.y));
  // a bare recording has no editor overlays (gizmo, selection) unless asked for
  const bool bare_video = ed.recording.active() && !ed.recording.with_ui() && !ed.recording.overlays();
  bool tool = pull_click.has_value() || ed.update_pull(vw, vh) || (!bare_video && ed.transform_tools(vw, vh));
  if (!tool) {
    handle_viewport_input(ed.camera, vh);
    if (!click) click = viewport_click();
  }
  ed.follow_selection();  // View > Camera > Follow selection
  if (ed.camera_fit_pending) {
    ed.camera = ed.view()->fit_camera(ed.display_state(), ed.free_aspect(vw, vh));
    ed.camera_fit_pending = false;
  }
}

// the viewport's draw list: the view's, or an optimization video's rollout frame (without
// contacts or arrows), with the view toggles applied, hidden objects left out, the Simulation
// panel's other worlds in a grid beside world 0 and the ghost trajectories
const render::DrawList& build_draw_list(editor::Editor& ed, editor::RolloutVideo* rollout, bool cpu_device,
                                        render::LineBuilder& ghosts,
                                        std::vector<std::vector<glm::vec3>>& ghost_points) {
  app::Overlays ov = ed.view_settings.overlays;
  ov.max_marks = cpu_device ? 128 : 4096;  // a CPU rasterizer sets up every mark's triangles
  // while recording an optimization: its rollout's frame, without contacts or arrows
  const State& st = rollout ? rollout->state() : ed.display_state();
  const Array<vec3<float>>* field = rollout ? nullptr : ed.arrow_field(st);
  ov.vectors = field != nullptr;
  editor::robot_prepare_view(ed);    // robots: their drawn joint state, contacts, selected body
  app::SceneView* view = ed.view();  // (each ed.view() sets the view's selection again)
  if (ed.recording.active() && !ed.recording.with_ui() && !ed.recording.overlays()) {
    view->set_selected(0);  // no selection outline or tint in the video
    view->set_robot_highlight(-1);
  }
  if (rollout && rollout->rigid_state()) {  // an optimization's video: its robots, bare
    view->set_robot_state(*rollout->rigid_state());
    view->set_robot_contacts(nullptr);
  }
  const render::DrawList* list = &view->build(st, rollout ? nullptr : ed.display_contacts(), field, ov);
  auto& l = const_cast<render::DrawList&>(*list);  // the view's own list, adjusted for the view toggles
  l.ground.visible = l.ground.visible && ed.view_settings.grid;
  l.lighting.shadows = ed.view_settings.shadows;
  // hidden objects: not drawn
  const auto& objs = ed.doc.scene().objects;
  auto hidden = [&](render::ObjectId id) { return id > 0 && id <= objs.size() && !objs[id - 1].visible; };
  std::erase_if(l.meshes, [&](const render::MeshDraw& d) { return hidden(d.id); });
  std::erase_if(l.spheres, [&](const render::SphereDraw& d) { return hidden(d.id); });
  std::erase_if(l.lines, [&](const render::LineDraw& d) { return hidden(d.id); });
  std::erase_if(l.shapes, [&](const render::ShapeDraw& d) { return hidden(d.id); });
  // the Simulation panel's other worlds, in a grid beside world 0 (not in replays and videos)
  if (!rollout && !ed.replay_ready()) ed.add_world_copies(l, ov, hidden);
  // ghost trajectories of earlier iterations, coloured by their loss
  ghosts.clear();
  if (rollout) {
    rollout->ghosts(ghosts);
    if (!ghosts.positions.empty()) l.lines.push_back(ghosts.draw(3.0f));
  } else if (ed.view_settings.ghosts && !ed.snap.ghost_paths.empty() && !ed.opt_objects_differ()) {
    add_ghosts(ed.snap, ghosts, ghost_points);
    l.lines.push_back(ghosts.draw(3.0f));
  }
  return *list;
}

enum class Poll { frame, wait, close };

// the window's events and size: a closed window ends a run that ends by itself (a script,
// --frames: close), else asks the editor to quit; a minimized one waits for events (wait); a
// resized one recreates the swapchain; dropped files open
Poll poll_window(Window& window, bool ends_by_itself, Drops& drops, render::FrameLoop& loop,
                 render::Swapchain& swapchain, render::RenderTarget& target, editor::Editor& ed) {
  glfwPollEvents();
  if (glfwWindowShouldClose(window.handle)) {
    if (ends_by_itself) return Poll::close;
    glfwSetWindowShouldClose(window.handle, GLFW_FALSE);
    ed.request(editor::Editor::Pending::quit);
  }
  VkExtent2D fb = window.framebuffer_extent();
  if (fb.width == 0 || fb.height == 0) {  // minimized
    glfwWaitEvents();
    return Poll::wait;
  }
  if (loop.swapchain_out_of_date() || fb.width != target.extent().width || fb.height != target.extent().height) {
    swapchain.recreate(fb);
    target.resize(swapchain.extent());
    loop.swapchain_recreated();
  }
  for (const std::string& p : drops.paths) ed.drop_file(p);
  drops.paths.clear();
  return Poll::frame;
}

// what the saved scene image shows (content_hash of the draw list and the view), and whether
// it was drawn at the reduced size of a moving view
struct SavedScene {
  std::optional<uint64_t> key;
  bool reduced = false;
};

// the viewport's renderers
struct Viewport {
  render::RenderTarget& target;
  render::FrameLoop& loop;
  render::Background& background;
  render::SceneRenderer& scene;
  bool cpu_device;
};

// the scene between the side panels. It is drawn only when it would look different from the
// saved one (while an optimization runs, the viewport changes once per iteration; the panels
// every frame). A CPU rasterizer draws a moving view at a reduced size, and the same view once
// more at full size when it holds still; what is captured (screenshots, videos) is full size
void draw_viewport(VkCommandBuffer cmd, const Viewport& vp, const render::DrawList* list, editor::Editor& ed,
                   bool captured, SavedScene& saved) {
  constexpr float sky_top[3] = {0.36f, 0.45f, 0.56f}, sky_bottom[3] = {0.80f, 0.83f, 0.86f};
  constexpr float clear[4] = {0.1f, 0.1f, 0.12f, 1.0f};
  constexpr float k_moving_scale = 0.7f;
  render::RenderTarget& target = vp.target;
  const bool bare = ed.recording.active() && !ed.recording.with_ui();
  auto [free_x0, free_x1] =
      bare ? std::pair{0.0f, float(target.extent().width)} : ed.free_columns(float(target.extent().width));
  std::optional<uint64_t> scene_key = list ? render::content_hash(*list) : std::optional<uint64_t>(0);
  if (scene_key) {
    const float view[] = {ed.camera.target.x,
                          ed.camera.target.y,
                          ed.camera.target.z,
                          ed.camera.distance,
                          ed.camera.yaw,
                          ed.camera.pitch,
                          ed.camera.fov_y,
                          float(ed.camera.orthographic),
                          free_x0,
                          free_x1,
                          float(target.extent().width),
                          float(target.extent().height)};
    for (float v : view) *scene_key = (*scene_key ^ std::hash<float>{}(v)) * 1099511628211ull;
  }
  const bool unchanged = scene_key && saved.key == scene_key && target.scene_saved();
  if (unchanged && !saved.reduced) {
    target.restore_scene(cmd);
    return;
  }
  const bool reduce = vp.cpu_device && ed.view_settings.lower_res_moving && !captured && !unchanged;
  target.set_scene_scale(reduce ? k_moving_scale : 1.0f);
  saved.reduced = reduce;
  ed.drawn_scene_scale = target.scene_scale();
  target.set_scene_columns(uint32_t(free_x0), uint32_t(std::ceil(free_x1)));
  if (list) vp.scene.prepare(cmd, *list, ed.camera, vp.loop.frame_index());
  target.begin(cmd, clear);
  // the side panels are opaque: shade only the columns between them (on a CPU
  // rasterizer that is nearly half of a frame's cost)
  const float s = target.scene_scale();
  const VkExtent2D se = target.scene_extent();
  const auto x0 = uint32_t(free_x0 * s), x1 = std::min(se.width, uint32_t(std::ceil(free_x1 * s)));
  VkRect2D free{{int32_t(x0), 0}, {x1 > x0 ? x1 - x0 : 0, se.height}};
  if (free.extent.width > 0) vkCmdSetScissor(cmd, 0, 1, &free);
  vp.background.draw(cmd, sky_top, sky_bottom);
  if (list) vp.scene.draw(cmd);
  target.end(cmd);
  target.save_scene(cmd);
  saved.key = scene_key;
}

}  // namespace

int run_viewer(const ViewerOptions& opt) {
  std::unique_ptr<Window> window;
  render::ContextOptions copt;
  copt.validation = opt.validation;
  copt.sync_validation = opt.sync_validation;

  std::optional<editor::Script> script;
  if (!opt.script.empty()) {
    auto s = editor::Script::load(opt.script);
    if (!s) {
      std::fprintf(stderr, "adjoint: %s\n", s.status().message().c_str());
      return 1;
    }
    script = std::move(*s);
  }

  if (!opt.headless && !(window = start_glfw(copt))) return 1;

  try {
    render::Context ctx(copt);
    Surface surface{ctx.instance()};
    Drops drops;
    if (window) {
      glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
      window->handle = glfwCreateWindow(int(opt.width), int(opt.height), "Adjoint", nullptr, nullptr);
      if (!window->handle) {
        std::fprintf(stderr, "adjoint: cannot create a window\n");
        return 1;
      }
      ADJ_VK(glfwCreateWindowSurface(ctx.instance(), window->handle, nullptr, &surface.surface));
      glfwSetWindowUserPointer(window->handle, &drops);
      glfwSetDropCallback(window->handle, on_drop);
    }
    ctx.create_device(surface.surface);

    VkExtent2D extent = window ? window->framebuffer_extent() : VkExtent2D{opt.width, opt.height};
    // a CPU rasterizer (lavapipe) pays for every sample and shadow texel: the editor keeps
    // its frame rate there with 1 sample, a 1024^2 shadow map and one PCF lookup (--msaa overrides)
    const bool cpu_device = ctx.info().type == "cpu";
    const int msaa = opt.msaa > 0 ? opt.msaa : cpu_device ? 1 : 4;
    render::RenderTarget target(ctx, extent, render::pick_msaa(ctx, msaa));
    std::unique_ptr<render::Swapchain> swapchain;
    if (window) swapchain = std::make_unique<render::Swapchain>(ctx, surface.surface, extent, opt.vsync);
    render::FrameLoop loop(ctx, target, swapchain.get());
    render::Background background(ctx, target);
    render::SceneRendererOptions scene_options;
    if (cpu_device) scene_options.shadow_map_size = 1024, scene_options.shadow_taps = 1;
    render::SceneRenderer scene_renderer(ctx, target, scene_options);

    ImGuiContextGuard imgui_context;
    if (window) ImGui_ImplGlfw_InitForVulkan(window->handle, true);
    std::optional<render::ImGuiVulkan> imgui;
    imgui.emplace(ctx, target, render::FrameLoop::k_frames_in_flight, /*overlay=*/true);

    AboutInfo about = make_about_info(ctx.info(), ctx.validation_enabled());
    UiState ui;
    ui.show_about = opt.show_about;
    editor::Editor ed;
    if (!opt.scene_path.empty() && !ed.open(opt.scene_path))
      std::fprintf(stderr, "adjoint: %s\n", ed.messages.back().text.c_str());
    ed.sync();
    ed.check_recovery();
    if (opt.play) ed.worker.play(true);

    const Viewport viewport{target, loop, background, scene_renderer, cpu_device};
    int frame = 0;
    int exit_code = 0;
    std::string window_title;
    int windowed[4] = {0, 0, 1280, 720};               // the window's position and size before F11
    std::optional<editor::ScriptKey> held_key;         // a script's key, released the next frame
    render::LineBuilder ghosts;                        // ghost trajectories, rebuilt each frame
    std::vector<std::vector<glm::vec3>> ghost_points;  // their points
    auto last_frame = std::chrono::steady_clock::now();
    SavedScene saved_scene;
    while (true) {
      // events and window size
      if (window) {
        const Poll poll = poll_window(*window, script || opt.frames > 0, drops, loop, *swapchain, target, ed);
        if (poll == Poll::close) break;
        if (poll == Poll::wait) continue;
      }
      if (ui.quit_requested) {
        ui.quit_requested = false;
        ed.request(editor::Editor::Pending::quit);
      }
      if (ed.quit_confirmed()) break;
      auto now = std::chrono::steady_clock::now();
      ed.ui_frame_ms = std::chrono::duration<double, std::milli>(now - last_frame).count();
      last_frame = now;

      // the document and the worker's newest snapshot
      ed.autosave_tick(std::chrono::duration<double>(now.time_since_epoch()).count());
      ed.sync();
      ed.worker.snapshot(ed.snap);
      ed.update_attachment();
      std::optional<std::string> capture_path;
      std::optional<std::pair<int, int>> click, pull_click;
      bool script_done = false;
      if (script) {
        auto progress = script->update(ed);
        ed.sync();
        if (progress == editor::Script::Progress::failed) {
          exit_code = script->exit_code();
          break;
        }
        script_done = progress == editor::Script::Progress::done;
        capture_path = script->take_screenshot();
        click = script->take_click();
      }
      // recording: the optimizer's next rollout frame, or the simulation's; a "record
      // optimization" video stops by itself after the last iteration
      if (ed.recording.update(ed.worker, ed.snap)) ed.record_toggle_requested = true;
      editor::RolloutVideo* rollout = ed.recording.rollout();

      // ui
      imgui->new_frame();
      ImGuiIO& io = ImGui::GetIO();
      if (window) {
        ImGui_ImplGlfw_NewFrame();
      } else {
        io.DisplaySize = ImVec2(float(target.extent().width), float(target.extent().height));
        io.DeltaTime = 1.0f / 60.0f;
      }
      feed_script_input(script ? &*script : nullptr, io, held_key);
      ImGui::NewFrame();
      if (ed.recording.active() && !ed.recording.with_ui()) {
        // recording the bare viewport: only the caption bar, which the video shows too
        if (rollout && ed.recording.caption())
          rollout->draw_caption({10, 10}, {0, 0});
        else if (ed.recording.caption())
          draw_caption(ed);
      } else {
        about.data_path = ed.data_path();
        draw_ui(ui, about, ed);
        // with the panels: the optimizer's caption at the bottom right of the viewport, over
        // the messages (panels.cpp: the right column is 26% wide, the messages 78 px high)
        if (rollout) rollout->draw_caption({io.DisplaySize.x * 0.74f - 10, io.DisplaySize.y - 88}, {1, 1});
      }
      ed.handle_keys();
      if (ed.has_scene()) {
        viewport_input(ed, target.extent(), click, pull_click);
        update_status_lines(ui, ed, rollout != nullptr);
      }
      ui.scene_name = ed.title().size() > 10 ? ed.title().substr(10) + (ed.doc.dirty() ? " *" : "") : "";
      if (window && ed.title() + (ed.doc.dirty() ? " *" : "") != window_title) {
        window_title = ed.title() + (ed.doc.dirty() ? " *" : "");
        glfwSetWindowTitle(window->handle, window_title.c_str());
      }
      ImGui::Render();

      // F11: fullscreen on the primary monitor, and back to the window as it was
      if (std::exchange(ed.fullscreen_requested, false) && window) toggle_fullscreen(window->handle, windowed);
      // recording: start or stop (Ctrl+R, the Record button, a script). A recording that
      // starts now captures from the next frame: this one was built with the panels
      const bool started_now = start_or_stop_recording(loop, target.extent(), ed);
      // a replay being recorded: every UI frame is the next video frame (the rollout is at hand)
      const bool record_replay = ed.recording.active() && ed.replay_ready() && !ed.recording.rollout();
      // (between a before/after video's two replays nothing is recorded)
      const bool between = ed.before_after != editor::Editor::BeforeAfter::off && !ed.replay_ready();
      const bool record_frame = !started_now && !between && (record_replay || ed.recording.ready(ed.snap));
      if (!ed.recording.active()) ed.advance_replay(io.DeltaTime);
      rollout = ed.recording.rollout();  // none once a recording has stopped

      // draw
      VkCommandBuffer cmd = loop.begin_frame();
      if (!cmd) continue;  // swapchain out of date: recreated at the top
      const render::DrawList* list =
          ed.has_scene() ? &build_draw_list(ed, rollout, cpu_device, ghosts, ghost_points) : nullptr;
      const bool ends = (opt.frames > 0 && frame + 1 >= opt.frames) || script_done;
      const bool captured = capture_path || record_frame || ed.recording.active() || (ends && !opt.screenshot.empty());
      draw_viewport(cmd, viewport, list, ed, captured, saved_scene);
      target.begin_overlay(cmd);
      imgui->draw(ImGui::GetDrawData(), cmd);
      target.end(cmd);
      ++frame;
      bool last = (opt.frames > 0 && frame >= opt.frames) || script_done;
      if (ed.screenshot_requested && !capture_path) {
        if (ed.recording.active())
          ed.message(editor::Severity::warning, "no screenshots while recording");
        else
          capture_path = screenshot_name(ed.media_folder());
      }
      ed.screenshot_requested = false;
      loop.end_frame((last && !opt.screenshot.empty()) || capture_path.has_value() || record_frame);
      if (record_frame) record_captured_frame(loop, ed, record_replay);

      // picking: the object under a click (waits for the GPU, a few ms)
      if (list) pick(scene_renderer, *list, target.extent(), click, pull_click, ed);
      if (capture_path) write_screenshot(loop, *capture_path, ed, script ? &*script : nullptr);
      if (last) break;
    }

    if (ed.recording.active()) finish_recording(loop, ed);  // the file is always finalized

    // the last frame to a file
    if (!opt.screenshot.empty() && exit_code == 0 && !write_last_frame(loop, opt.screenshot)) return 1;
    loop.wait_idle();
    imgui.reset();
    if (window) ImGui_ImplGlfw_Shutdown();

    if (ctx.validation_errors() > 0) {
      std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", ctx.validation_errors());
      return 3;
    }
    if (script && exit_code == 0) exit_code = script->exit_code();
    return exit_code;
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

}  // namespace adj::app
