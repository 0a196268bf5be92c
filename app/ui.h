#pragma once
// The editor's panels that exist so far: main menu bar and the About window.
#include <string>

namespace adj::app {

struct AboutInfo {
  std::string version;          // "0.1.0"
  std::string device;           // Vulkan device name and type
  std::string driver;           // driver name and version
  std::string vulkan_api;       // device's Vulkan API version
  std::string cuda;             // "available: NVIDIA H200" or why not
  bool validation = false;      // validation layer active
};

struct UiState {
  bool show_about = false;
  bool show_help = false;
  bool quit_requested = false;
  std::string scene_name;       // shown in the status line
  std::string status;           // last message for the user (errors included)
  std::string sim_line;         // frame and time of the simulation
};

// draws the menu bar and the open windows; changes only `ui`
void draw_ui(UiState& ui, const AboutInfo& about);

}  // namespace adj::app
