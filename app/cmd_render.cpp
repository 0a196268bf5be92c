#include "app/cmd_render.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/image_io.h"
#include "app/offscreen.h"
#include "app/recorder.h"
#include "app/scene_view.h"
#include "engine/scene/scene_json.h"
#include "engine/rigid/rigid_solver.h"
#include "engine/solver/solver.h"
#include "render/vk_check.h"

namespace adj::app {

namespace {

bool is_still(const std::string& out) {
  return video_format(out) == VideoFormat::png_sequence && out.find('%') == std::string::npos &&
         out.back() != '/' && out.size() > 4 && out.compare(out.size() - 4, 4, ".png") == 0;
}

}  // namespace

bool parse_overlays(const std::string& list, RenderOptions& o, std::string* error) {
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name == "contacts") o.contacts = true;
    else if (name == "velocities") o.velocities = true;
    else if (name == "wireframe") o.wireframe = true;
    else if (!name.empty()) {
      *error = "unknown overlay \"" + name + "\" (known: contacts, velocities, wireframe)";
      return false;
    }
  }
  return true;
}

int run_render(const RenderOptions& opt) {
  RenderOptions o = opt;
  const bool still = is_still(o.out);
  if (o.frames < 0) o.frames = still ? 0 : 120;
  if (!still) {
    std::string notice;
    even_size(video_format(o.out), o.width, o.height, &notice);
    if (!notice.empty()) std::printf("note: %s\n", notice.c_str());
  }

  auto doc = scene::load_scene(o.scene_path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  auto cs = scene::compile<float>(*doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), cs.status().message().c_str()), 1;

  // simulation: one video frame advances 1/fps seconds = `per_frame` scene frames
  const Model& model = cs->model;
  Solver solver({.substeps = cs->substeps});
  State a = model.make_state(), b = model.make_state();
  Control control = model.make_control();
  Contacts contacts;
  int per_frame = still ? 1 : std::max(1, int(std::lround(1.0 / (o.fps * double(cs->frame_dt)))));
  if (!still && std::abs(per_frame * double(cs->frame_dt) * o.fps - 1.0) > 1e-3)
    std::printf("note: the scene's dt %.5g s does not divide 1/%d s; each video frame advances %d steps (%.4g s)\n",
                double(cs->frame_dt), o.fps, per_frame, per_frame * double(cs->frame_dt));
  // robots, when the scene has them: the rigid solver with zero actuator inputs
  RigidSolverT<float> rigid_solver({.substeps = cs->substeps});
  RigidStateT<float> ra = cs->rigid_initial, rb = cs->rigid_initial;
  RigidControlT<float> rigid_control = cs->rigid.make_control();
  int sim_frame = 0;
  auto advance = [&](int steps) -> bool {
    for (int k = 0; k < steps; ++k, ++sim_frame) {
      Status st = solver.step(model, a, b, control, cs->frame_dt, &contacts);
      if (st && cs->has_robots()) st = rigid_solver.step(cs->rigid, ra, rb, rigid_control, cs->frame_dt);
      if (!st) {
        std::fprintf(stderr, "%s: frame %d: %s\n", o.scene_path.c_str(), sim_frame, st.message().c_str());
        return false;
      }
      std::swap(a, b);
      if (cs->has_robots()) std::swap(ra, rb);
    }
    return true;
  };

  try {
    Offscreen gpu(o.width, o.height, o.validation, /*with_ui=*/false);
    SceneView view(*doc, *cs);
    Overlays ov;
    ov.contacts = o.contacts;
    ov.vectors = o.velocities;
    ov.wireframe = o.wireframe;
    auto draw = [&](const render::Camera& camera) {
      if (o.contacts) compute_contacts(model, a, contacts);
      if (cs->has_robots()) view.set_robot_state(ra);
      gpu.frame(view.build(a, &contacts, &a.particle_qd, ov), camera);
    };
    auto validation_failed = [&]() {
      if (gpu.validation_errors() == 0) return false;
      std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", gpu.validation_errors());
      return true;
    };

    if (still) {
      if (!advance(o.frames)) return 1;
      draw(view.fit_camera(a, gpu.aspect()));
      auto cap = gpu.take_capture();
      std::string err;
      if (!cap || !write_png(o.out, cap->width, cap->height, cap->rgba, &err))
        return std::fprintf(stderr, "adjoint: %s\n", err.empty() ? "no frame" : err.c_str()), 1;
      std::printf("%s: frame %d rendered to %s (%ux%u)\n", doc->name.c_str(), o.frames, o.out.c_str(), cap->width,
                  cap->height);
      return validation_failed() ? 3 : 0;
    }

    // video: a fixed camera framing the first state, one capture per frame, encoded aside
    auto rec = Recorder::open({o.out, o.width, o.height, o.fps, o.ffmpeg});
    if (!rec) return std::fprintf(stderr, "%s\n", rec.status().message().c_str()), 1;
    render::Camera camera = view.fit_camera(a, gpu.aspect());
    auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    render::Capture cap;
    for (int f = 0; f < o.frames && ok; ++f) {
      if (f > 0) ok = advance(per_frame);
      if (!ok) break;
      draw(camera);
      while (ok && gpu.pop_capture(cap)) ok = (*rec)->push(std::move(cap));
    }
    gpu.finish_captures();
    while (ok && gpu.pop_capture(cap)) ok = (*rec)->push(std::move(cap));
    Status st = (*rec)->close();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
    if (!ok) return 1;
    std::printf("%s: %d frames %ux%u at %d fps written to %s in %.2f s (%.1f frames/s)\n", doc->name.c_str(),
                (*rec)->frames_written(), o.width, o.height, o.fps, o.out.c_str(), secs,
                secs > 0 ? (*rec)->frames_written() / secs : 0.0);
    return validation_failed() ? 3 : 0;
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

}  // namespace adj::app
