#pragma once
// `adjoint render SCENE --out still.png | demo.mp4 | frames/%05d.png`: simulate a scene
// headless and render a still or a video (fixed simulation time per video frame).
#include <cstdint>
#include <string>

namespace adj::app {

struct RenderOptions {
  std::string scene_path;
  std::string out = "still.png";
  int frames = -1;             // still: frames simulated first (0); video: frames (120)
  int fps = 60;                // video frame rate; each video frame advances 1/fps s
  uint32_t width = 1280, height = 720;
  bool validation = false;
  bool contacts = false;       // overlay contact points and forces
  bool velocities = false;     // overlay velocity arrows
  bool wireframe = false;
  std::string ffmpeg = "ffmpeg";
};

// "contacts,velocities,wireframe" -> the flags; false with a message for an unknown name
bool parse_overlays(const std::string& list, RenderOptions& o, std::string* error);

// exit codes: 0 ok, 1 error, 3 validation errors
int run_render(const RenderOptions& options);

}  // namespace adj::app
