#pragma once
// `adjoint render SCENE --out still.png | demo.mp4 | frames/%05d.png`: simulate a scene
// headless and render a still or a video (fixed simulation time per video frame); with
// --policy DIR, the evaluation episode of a SHAC, AHAC or PPO checkpoint instead (app/run_checkpoint.h),
// `stride` episode frames per video frame, the camera following the robot.
#include <cstdint>
#include <string>
#include <vector>

namespace adj::app {

struct RenderOptions {
  std::string scene_path;
  std::string out = "still.png";
  int frames = -1;  // still: frames simulated first (0); video: frames (120)
  int fps = 60;     // video frame rate; each video frame advances 1/fps s
  uint32_t width = 1280, height = 720;
  bool validation = false;
  bool contacts = false;    // overlay contact points and forces
  bool velocities = false;  // overlay velocity arrows
  bool wireframe = false;
  bool gradients = false;  // arrows of the first task's dLoss/d(initial velocity) per particle
  bool ghosts = false;     // fading trails of each moving object's centre of mass
  // camera: yaw, pitch [deg], then optionally distance [m] and the target x, y, z [m];
  // empty = frame the scene
  std::vector<double> camera;
  std::string ffmpeg = "ffmpeg";
  std::string backend = "cpu";  // cpu | cuda: who simulates the particles (robots: the CPU)
  // how the particle arrays reach the renderer (render/interop.h, app/gpu_view.h): auto (cpu:
  // mapped; cuda: interop when the devices allow it, else staging), host (the renderer copies
  // host arrays; cpu only), mapped (engine/vis writes into mapped Vulkan buffers; cpu only),
  // staging (device -> host -> mapped buffers; cuda only), interop (CUDA writes into imported
  // Vulkan buffers; cuda only)
  std::string data_path = "auto";
  std::string states;  // also write every simulated frame's state as JSON (app/state_log.h)
  // a SHAC, AHAC or PPO run's checkpoint folder (DIR/checkpoint.adjck): render its evaluation episode;
  // frames then counts video frames of `stride` episode frames each (default: the whole
  // episode), a still shows frame `frames` (default: the last)
  std::string policy;
  int stride = 1;
  // the camera's target follows the robot's root body over the ground (on with --policy)
  bool follow = false;
};

// "contacts,velocities,gradients,ghosts,wireframe" -> the flags; false with a message
bool parse_overlays(const std::string& list, RenderOptions& o, std::string* error);
// "30,20" or "30,20,5" or "30,20,5,0,1,0" -> o.camera; false with a message
bool parse_camera(const std::string& text, RenderOptions& o, std::string* error);

// exit codes: 0 ok, 1 error, 3 validation errors
int run_render(const RenderOptions& options);

}  // namespace adj::app
