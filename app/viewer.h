#pragma once
// The interactive program: a GLFW window (or an offscreen target when headless) with the
// Vulkan renderer and the ImGui editor on top.
#include <cstdint>
#include <string>

namespace adj::app {

struct ViewerOptions {
  std::string scene_path;       // scene to open; may be empty
  int frames = 0;               // stop after this many frames (0: run until closed)
  std::string screenshot;       // write the last frame here (PNG)
  bool headless = false;        // no window: render offscreen
  uint32_t width = 1280;
  uint32_t height = 720;
  bool validation = false;      // Vulkan validation layer; any error fails the run
  bool sync_validation = false; // also synchronization validation
  bool vsync = true;
  bool show_about = false;      // open the About window at start
  bool play = false;            // start the simulation playing
  std::string script;           // run this editor script (app/editor/script.h), then quit
  int msaa = 0;                 // samples per pixel (1 or 4); 0: 4, or 1 on a CPU rasterizer
};

// exit codes: 0 ok, 1 failure (message printed), 3 validation errors were reported,
// 4 a script expectation failed
int run_viewer(const ViewerOptions& options);

}  // namespace adj::app
