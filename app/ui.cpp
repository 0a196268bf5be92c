#include "app/ui.h"

#include <GLFW/glfw3.h>  // key codes: ImGui 1.86 indexes keys by the GLFW backend's codes
#include <imgui.h>

#include <algorithm>
#include <cfloat>

#include "app/editor/editor.h"

namespace adj::app {

namespace {

float draw_menu_bar(UiState& ui, editor::Editor& ed) {
  if (!ImGui::BeginMainMenuBar()) return 0.0f;
  if (ImGui::BeginMenu("File")) {
    ed.draw_menu_items_file(&ui.quit_requested);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    ed.draw_menu_items_edit();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Add")) {
    ed.draw_menu_items_add();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    ed.draw_menu_items_view();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Shortcuts", "F1", &ed.show_help);
    ImGui::MenuItem("About Adjoint", nullptr, &ui.show_about);
    ImGui::EndMenu();
  }
  float h = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  return h;
}

void draw_about(UiState& ui, const AboutInfo& a) {
  if (!ui.show_about) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x * 0.5f, vp->Pos.y + vp->Size.y * 0.35f), ImGuiCond_FirstUseEver,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(320, 0), ImVec2(560, FLT_MAX));
  if (ImGui::Begin("About Adjoint", &ui.show_about, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Adjoint %s", a.version.c_str());
    ImGui::TextDisabled("a differentiable-physics editor and visualizer");
    ImGui::Separator();
    ImGui::Text("Vulkan device:  %s", a.device.c_str());
    ImGui::Text("Driver:         %s", a.driver.c_str());
    ImGui::Text("Vulkan API:     %s", a.vulkan_api.c_str());
    ImGui::Text("Validation:     %s", a.validation ? "on" : "off");
    ImGui::TextWrapped("CUDA:           %s", a.cuda.c_str());
    ImGui::TextWrapped("Data path:      %s", a.data_path.c_str());
  }
  ImGui::End();
}

void draw_help(editor::Editor& ed) {
  if (!ed.show_help) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x * 0.5f, vp->Pos.y + vp->Size.y * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.92f);
  if (ImGui::Begin("Shortcuts", &ed.show_help, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
    static const char* rows[][2] = {
        {"F1 / Esc", "this help / close it"},
        {"Space", "play / pause"},
        {"Right", "one frame"},
        {"Backspace", "reset the simulation"},
        {"Ctrl+P", "screenshot (PNG in the current folder)"},
        {"Ctrl+R", "record the viewport to MP4 at true speed (again: stop)"},
        {"click", "select (viewport)"},
        {"Ctrl+drag", "pull a particle with a spring (while playing)"},
        {"G, then X/Y/Z, digits", "move the selection (Enter confirms, Esc cancels)"},
        {"R, then X/Y/Z, degrees", "rotate the selection about its centre"},
        {"S, then a factor", "scale the selection about its centre"},
        {"drag an axis handle", "move the selection along it"},
        {"left drag", "orbit"},
        {"right / middle drag", "pan"},
        {"wheel", "zoom"},
        {"F", "frame the selection"},
        {"Tab / Shift+Tab", "hide / show the left / right panels"},
        {"F11", "fullscreen"},
        {"Home", "frame the scene"},
        {"Delete", "delete the selection"},
        {"Shift+A", "add an object (also the Add menu, right click in the outliner)"},
        {"Ctrl+D", "duplicate the selection"},
        {"Ctrl+Z", "undo"},
        {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
        {"Ctrl+N / Ctrl+O", "new / open scene"},
        {"Ctrl+S / Ctrl+Shift+S", "save / save as"},
        {"Ctrl+Q", "quit"},
        {"drop a file", ".json opens it, .obj imports it as cloth"},
        {"Ctrl+click a field", "type a value"},
    };
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
      for (auto& r : rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextColored(ImVec4(0.95f, 0.8f, 0.45f, 1), "%s", r[0]);
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(r[1]);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

void draw_status(const UiState& ui, float left) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + left + 8, vp->Pos.y + ImGui::GetFrameHeight() + 8), ImGuiCond_Always);
  ImGui::SetNextWindowBgAlpha(0.35f);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                           ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                           ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoInputs;
  if (ImGui::Begin("##status", nullptr, flags)) {
    ImGui::Text("%s", ui.scene_name.empty() ? "untitled" : ui.scene_name.c_str());
    if (!ui.sim_line.empty()) ImGui::TextUnformatted(ui.sim_line.c_str());
    if (!ui.status.empty()) ImGui::TextColored(ImVec4(1, 0.6f, 0.4f, 1), "%s", ui.status.c_str());
  }
  ImGui::End();
}

}  // namespace

float draw_ui(UiState& ui, const AboutInfo& about, editor::Editor& ed) {
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) && ed.show_help) ed.show_help = false;
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_Q)) ui.quit_requested = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1)) ed.show_help = !ed.show_help;
  float h = draw_menu_bar(ui, ed);
  ed.draw_panels(h);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  draw_status(ui, ed.panels.outliner || ed.panels.inspector ? std::clamp(vp->Size.x * 0.22f, 200.0f, 320.0f) : 0.0f);
  draw_about(ui, about);
  draw_help(ed);
  return h;
}

}  // namespace adj::app
