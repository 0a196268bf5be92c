#pragma once
// The main menu bar, the About window, the F1 shortcut overlay and the status line. The
// editor's own panels are in app/editor/panels.cpp; its menu items are drawn from here.
#include <string>

namespace adj::editor {
class Editor;
}

namespace adj::app {

struct AboutInfo {
  std::string version;          // "0.1.0"
  std::string device;           // Vulkan device name and type
  std::string driver;           // driver name and version
  std::string vulkan_api;       // device's Vulkan API version
  std::string cuda;             // "available: NVIDIA H200" or why not
  std::string data_path;        // how simulation results reach the renderer (render/interop.h)
  bool validation = false;      // validation layer active
};

struct UiState {
  bool show_about = false;
  bool quit_requested = false;
  std::string scene_name;       // shown in the status line
  std::string status;           // last message for the user (errors included)
  std::string sim_line;         // frame and time of the simulation
};

// draws the menu bar and the open windows; returns the menu bar's height
float draw_ui(UiState& ui, const AboutInfo& about, editor::Editor& editor);

}  // namespace adj::app
