#include "app/ui.h"

#include <GLFW/glfw3.h>  // key codes: ImGui 1.86 indexes keys by the GLFW backend's codes
#include <imgui.h>

namespace adj::app {

namespace {

void draw_menu_bar(UiState& ui) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    // TODO(editor issue): New/Open/Save act on the scene document once it exists
    ImGui::MenuItem("New", "Ctrl+N", false, false);
    ImGui::MenuItem("Open...", "Ctrl+O", false, false);
    ImGui::MenuItem("Save", "Ctrl+S", false, false);
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) ui.quit_requested = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    // TODO(editor issue): undo/redo arrive with the command-based document
    ImGui::MenuItem("Undo", "Ctrl+Z", false, false);
    ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, false);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    ImGui::MenuItem("Shortcuts", "F1", &ui.show_help);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Shortcuts", "F1", &ui.show_help);
    ImGui::MenuItem("About Adjoint", nullptr, &ui.show_about);
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void draw_about(UiState& ui, const AboutInfo& a) {
  if (!ui.show_about) return;
  ImGui::SetNextWindowPos(ImVec2(40, 60), ImGuiCond_FirstUseEver);
  if (ImGui::Begin("About Adjoint", &ui.show_about, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Adjoint %s", a.version.c_str());
    ImGui::TextDisabled("a differentiable-physics editor and visualizer");
    ImGui::Separator();
    ImGui::Text("Vulkan device:  %s", a.device.c_str());
    ImGui::Text("Driver:         %s", a.driver.c_str());
    ImGui::Text("Vulkan API:     %s", a.vulkan_api.c_str());
    ImGui::Text("Validation:     %s", a.validation ? "on" : "off");
    ImGui::Text("CUDA:           %s", a.cuda.c_str());
  }
  ImGui::End();
}

void draw_help(UiState& ui) {
  if (!ui.show_help) return;
  ImGui::SetNextWindowPos(ImVec2(60, 300), ImGuiCond_FirstUseEver);
  if (ImGui::Begin("Shortcuts", &ui.show_help, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("F1         this help");
    ImGui::Text("Space      play / pause");
    ImGui::Text("Right      one frame");
    ImGui::Text("Backspace  reset");
    ImGui::Text("drag       orbit (left), pan (right or middle); wheel zooms");
    ImGui::Text("Ctrl+Q     quit");
  }
  ImGui::End();
}

void draw_status(const UiState& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + 8, vp->Pos.y + vp->Size.y - 8), ImGuiCond_Always,
                          ImVec2(0, 1));
  ImGui::SetNextWindowBgAlpha(0.4f);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                           ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                           ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove;
  if (ImGui::Begin("##status", nullptr, flags)) {
    ImGui::Text("%s", ui.scene_name.empty() ? "no scene" : ui.scene_name.c_str());
    if (!ui.sim_line.empty()) ImGui::TextUnformatted(ui.sim_line.c_str());
    if (!ui.status.empty()) ImGui::TextColored(ImVec4(1, 0.6f, 0.4f, 1), "%s", ui.status.c_str());
  }
  ImGui::End();
}

}  // namespace

void draw_ui(UiState& ui, const AboutInfo& about) {
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) && ui.show_help) ui.show_help = false;
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_Q)) ui.quit_requested = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1)) ui.show_help = !ui.show_help;
  draw_menu_bar(ui);
  draw_about(ui, about);
  draw_help(ui);
  draw_status(ui);
}

}  // namespace adj::app
