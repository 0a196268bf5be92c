#pragma once
// `adjoint render SCENE --out still.png`: simulate a scene headless and render a still.
#include <cstdint>
#include <string>

namespace adj::app {

struct RenderOptions {
  std::string scene_path;
  std::string out = "still.png";
  int frames = 0;              // simulate this many frames first
  uint32_t width = 1280, height = 720;
  bool validation = false;
  bool contacts = false;       // overlay contact points and forces
  bool velocities = false;     // overlay velocity arrows
  bool wireframe = false;
};

// exit codes: 0 ok, 1 error, 3 validation errors
int run_render(const RenderOptions& options);

}  // namespace adj::app
