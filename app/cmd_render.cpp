#include "app/cmd_render.h"

#include "app/state_log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include <glm/glm.hpp>
#include <glm/gtc/constants.hpp>

#include "app/gpu_view.h"
#include "app/image_io.h"
#include "app/offscreen.h"
#include "app/recorder.h"
#include "app/run_checkpoint.h"
#include "app/scene_view.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_rollout.h"
#include "engine/optim/task.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"
#include "render/context.h"
#include "render/interop.h"
#include "render/line_builder.h"
#include "render/vk_check.h"

namespace adj::app {

namespace {

bool is_still(const std::string& out) {
  return video_format(out) == VideoFormat::png_sequence && out.find('%') == std::string::npos && out.back() != '/' &&
         out.size() > 4 && out.compare(out.size() - 4, 4, ".png") == 0;
}

// --policy: the checkpoint's evaluation episode, its return and length printed; o.frames
// becomes the episode's frames unless given (and is held to them), and the camera follows
Result<PolicyEpisode> policy_episode(RenderOptions& o, bool still, const scene::Scene& doc) {
  auto p = read_policy_checkpoint(o.policy);
  if (!p) return p.status();
  auto e = evaluate_policy_checkpoint(*p, doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!e) return e.status();
  const bool ppo = p->method == "ppo";
  std::printf("%s / %s: the %s policy of %s after %d %s: evaluation return %.17g over %d frames (eval cost %.17g)\n",
              doc.name.c_str(), p->task.c_str(),
              ppo                   ? "PPO"
              : p->method == "ahac" ? "AHAC"
                                    : "SHAC",
              p->ck.file.c_str(), p->trained, ppo ? "iterations" : "windows", e->eval_return, e->length, e->eval_cost);
  const int last = still ? e->length : e->length / o.stride + 1;  // frames the episode has
  if (o.frames > last)
    std::printf("note: --frames %d is past the episode's end: %d %s\n", o.frames, last,
                still ? "(the still shows its last frame)" : "video frames");
  if (o.frames < 0 || o.frames > last) o.frames = last;
  o.follow = true;
  return e;
}

// --follow: the camera keeps its view and slides with the robot's root body over the ground
// (its height kept, so the horizon stays put); inactive without a robot
class FollowCamera {
 public:
  FollowCamera(SceneView& view, const State& first, bool on) : view_(view) {
    if (!on) return;
    view_.set_robot_state(first);
    root0_ = view_.robot_root();
  }
  bool active() const { return root0_.has_value(); }
  // `c` moved by the root's displacement over the ground from the first state to `st`
  render::Camera operator()(render::Camera c, const State& st) {
    if (!root0_) return c;
    view_.set_robot_state(st);
    glm::vec3 d = view_.robot_root().value_or(*root0_) - *root0_;
    d[c.z_up ? 2 : 1] = 0.0f;
    c.target += d;
    shift_ = d;
    return c;
  }
  void print() const {
    if (root0_)
      std::printf("the camera followed the robot's root by (%.6g, %.6g, %.6g) m\n", shift_.x, shift_.y, shift_.z);
  }

 private:
  SceneView& view_;
  std::optional<glm::vec3> root0_;
  glm::vec3 shift_{0.0f};  // the last shift [m]
};

}  // namespace

bool parse_overlays(const std::string& list, RenderOptions& o, std::string* error) {
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name == "contacts")
      o.contacts = true;
    else if (name == "velocities")
      o.velocities = true;
    else if (name == "wireframe")
      o.wireframe = true;
    else if (name == "gradients")
      o.gradients = true;
    else if (name == "ghosts")
      o.ghosts = true;
    else if (!name.empty()) {
      *error = "unknown overlay \"" + name + "\" (known: contacts, velocities, gradients, ghosts, wireframe)";
      return false;
    }
  }
  return true;
}

bool parse_camera(const std::string& text, RenderOptions& o, std::string* error) {
  std::stringstream ss(text);
  std::string item;
  o.camera.clear();
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(v)) {
      *error = "\"" + item + "\" is not a number";
      return false;
    }
    o.camera.push_back(v);
  }
  size_t n = o.camera.size();
  if (n != 2 && n != 3 && n != 6) {
    *error = "expected yaw,pitch[,distance[,x,y,z]] (2, 3 or 6 numbers), got " + std::to_string(n);
    return false;
  }
  if (n >= 3 && o.camera[2] <= 0) {
    *error = "the distance must be positive";
    return false;
  }
  return true;
}

int run_render(const RenderOptions& opt) {
  RenderOptions o = opt;
  const bool still = is_still(o.out);
  const bool policy = !o.policy.empty();
  if (o.frames < 0 && !policy) o.frames = still ? 0 : 120;
  if (!still) {
    std::string notice;
    even_size(video_format(o.out), o.width, o.height, &notice);
    if (!notice.empty()) std::printf("note: %s\n", notice.c_str());
  }

  const bool cuda = o.backend == "cuda";
  if (cuda && o.data_path == "mapped")
    return std::fprintf(stderr, "adjoint render: --data-path %s needs --backend cpu\n", o.data_path.c_str()), 1;
  if (!cuda && (o.data_path == "staging" || o.data_path == "interop"))
    return std::fprintf(stderr, "adjoint render: --data-path %s needs --backend cuda\n", o.data_path.c_str()), 1;
  if (cuda) {
    std::string why;
    if (!cuda_available(&why))
      return std::fprintf(stderr, "adjoint render: --backend cuda: no CUDA device (%s)\n", why.c_str()), 1;
  }

  auto doc = scene::load_scene(o.scene_path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  auto cs = scene::compile<float>(*doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), cs.status().message().c_str()), 1;
  for (const std::string& w : cs->warnings) std::fprintf(stderr, "%s: warning: %s\n", o.scene_path.c_str(), w.c_str());

  // --policy: the checkpoint's evaluation episode, drawn frame by frame instead of simulated
  PolicyEpisode episode;
  if (policy) {
    if (cuda) return std::fprintf(stderr, "adjoint render: --policy needs --backend cpu (the evaluation's)\n"), 1;
    auto e = policy_episode(o, still, *doc);
    if (!e) return std::fprintf(stderr, "adjoint render: --policy: %s\n", e.status().message().c_str()), 1;
    episode = std::move(*e);
  } else if (o.stride != 1) {
    return std::fprintf(stderr, "adjoint render: --stride needs --policy (a simulated video advances 1/fps s)\n"), 1;
  }

  // simulation: one video frame advances 1/fps seconds = `per_frame` scene frames
  const Model& model = cs->model;
  Solver solver({.substeps = cs->substeps});
  State a = model.make_state(), b = model.make_state();
  Control control = model.make_hold_control();  // PD actuators hold the initial pose
  Contacts contacts;
  int per_frame = still ? 1 : std::max(1, int(std::lround(1.0 / (o.fps * double(cs->frame_dt)))));
  if (policy && !still) per_frame = o.stride;  // episode frames per video frame
  if (!policy && !still && std::abs(per_frame * double(cs->frame_dt) * o.fps - 1.0) > 1e-3)
    std::printf("note: the scene's dt %.5g s does not divide 1/%d s; each video frame advances %d steps (%.4g s)\n",
                double(cs->frame_dt), o.fps, per_frame, per_frame * double(cs->frame_dt));
  int sim_frame = 0;
  // CUDA: the particles live on the device (state 0 of a one-step rollout, restarted from
  // its end after each step); the host state `a` is downloaded only when something drawn
  // from it needs it (springs, overlays, trails). A scene with bodies is stepped by CudaSolver
  // (particles, bodies and their contact, as the editor's CUDA backend), whose states come back
  // to the host each step and are drawn from host arrays: one physics on every path
  std::unique_ptr<CudaRollout> device_sim;
  std::unique_ptr<CudaSolver> device_solver;
  bool host_state_needed = !cuda;
  if (cuda && cs->has_robots()) {
    if (o.data_path == "staging" || o.data_path == "interop")
      return std::fprintf(stderr,
                          "%s: --data-path %s: a scene with bodies is stepped by CudaSolver, whose states are on "
                          "the host (use --data-path host or auto)\n",
                          o.scene_path.c_str(), o.data_path.c_str()),
             1;
    o.data_path = "host";
    host_state_needed = true;
    device_solver = std::make_unique<CudaSolver>(SolverOptions{.substeps = cs->substeps});
    if (Status st = device_solver->upload(model); !st)
      return std::fprintf(stderr, "%s: CUDA: %s\n", o.scene_path.c_str(), st.message().c_str()), 1;
  } else if (cuda) {
    if (o.data_path == "host")
      return std::fprintf(stderr, "adjoint render: --data-path host needs --backend cpu (or a scene with bodies)\n"), 1;
    bool springs = false;
    for (const scene::ObjectRange& r : cs->objects) springs |= r.spring_end > r.spring_begin;
    host_state_needed = springs || o.contacts || o.velocities || o.gradients || o.ghosts;
    device_sim = std::make_unique<CudaRollout>(CudaRolloutOptions<float>{
        .steps = 1, .dt = cs->frame_dt, .substeps = cs->substeps, .graphs = true, .backward = false});
    Status st = device_sim->upload(model);
    if (st) st = device_sim->set_initial(a);
    if (!st) return std::fprintf(stderr, "%s: CUDA: %s\n", o.scene_path.c_str(), st.message().c_str()), 1;
  }
  auto cuda_step = [&]() -> Status {
    if (device_solver) {
      Status st = device_solver->step(a, b, control, cs->frame_dt);
      if (st) std::swap(a, b);
      return st;
    }
    Status st = device_sim->forward();
    if (st) st = device_sim->restart_from_final();
    if (st && host_state_needed) {
      st = device_sim->synchronize();
      if (st) st = device_sim->download_state(0, a);
    }
    return st;
  };
  if (policy) a = episode.states[0];
  StateLog log(doc->name, cs->frame_dt, cs->substeps, model.particle_count(), cs->has_robots());
  if (!o.states.empty()) log.add(0, a);
  auto advance = [&](int steps) -> bool {
    for (int k = 0; k < steps; ++k, ++sim_frame) {
      if (policy) {
        if (sim_frame == episode.length) break;  // the episode's last frame stays in view
        a = episode.states[size_t(sim_frame + 1)];
      } else {
        Status st = cuda ? cuda_step() : solver.step(model, a, b, control, cs->frame_dt, &contacts);
        if (!st) {
          std::fprintf(stderr, "%s: frame %d: %s\n", o.scene_path.c_str(), sim_frame, st.message().c_str());
          return false;
        }
        if (!cuda) std::swap(a, b);
      }
      if (!o.states.empty()) {
        if (cuda && !host_state_needed && !(device_sim->synchronize() && device_sim->download_state(0, a))) {
          std::fprintf(stderr, "%s: frame %d: cannot download the state\n", o.scene_path.c_str(), sim_frame);
          return false;
        }
        log.add(sim_frame + 1, a);
      }
    }
    return true;
  };

  auto write_states = [&]() -> bool {
    if (o.states.empty()) return true;
    if (Status st = log.write(o.states); !st) return std::fprintf(stderr, "%s\n", st.message().c_str()), false;
    std::printf("states written to %s\n", o.states.c_str());
    return true;
  };
  try {
    Offscreen gpu(o.width, o.height, o.validation, /*with_ui=*/false);
    SceneView view(*doc, *cs);

    // the data path, and the shared buffers the particles are drawn from (none: host arrays)
    std::unique_ptr<GpuView> shared;
    vis::Surface surface = view.surface();
    if (o.data_path != "host") {
      render::SharePath path = render::SharePath::cpu_mapped;
      std::string why;
      if (cuda) {
        path = choose_share_path(share_caps(gpu.context(), true), &why);
        if (o.data_path == "staging") {
          path = render::SharePath::cuda_staging;
          why.clear();
        }
        if (o.data_path == "interop" && path != render::SharePath::cuda_interop)
          return std::fprintf(stderr, "adjoint render: --data-path interop: %s\n", why.c_str()), 1;
      }
      shared = std::make_unique<GpuView>(gpu.context(), path);
      if (!shared->note().empty()) why = shared->note();
      if (o.data_path == "interop" && shared->path() != render::SharePath::cuda_interop)
        return std::fprintf(stderr, "adjoint render: --data-path interop: %s\n", why.c_str()), 1;
      shared->set_layout(model, 0, view.has_particle_spheres() ? model.particle_count() : 0,
                         surface.indices.empty() ? nullptr : &surface);
      std::printf("data path: %s%s%s\n", render::to_string(shared->path()), why.empty() ? "" : " (",
                  why.empty() ? "" : (why + ")").c_str());
    } else {
      std::printf("data path: host arrays\n");
    }
    Overlays ov;
    ov.contacts = o.contacts;
    ov.vectors = o.velocities || o.gradients;
    ov.wireframe = o.wireframe;

    // gradients: dLoss/d(initial velocity) of the scene's first task, one arrow per particle
    Array<vec3<float>> gradient_field;
    if (o.gradients) {
      const scene::Task* task = doc->find_task("");
      using TaskPtr = std::unique_ptr<optim::TaskT<float>>;
      auto runner = task ? optim::make_task(*cs, *task) : Result<TaskPtr>(Status::error("the scene has no task"));
      std::vector<float> grad;
      if (runner) {
        auto loss = (*runner)->evaluate((*runner)->theta(), &grad);
        if (!loss) runner = Result<TaskPtr>(loss.status());
      }
      if (!runner)
        return std::fprintf(stderr, "%s: gradients overlay: %s\n", o.scene_path.c_str(),
                            runner.status().message().c_str()),
               1;
      gradient_field.assign(size_t(model.particle_count()), vec3<float>());
      int blocks = 0;
      for (const optim::ParamBlock& b : (*runner)->blocks())
        if (b.kind == scene::ParamKind::initial_velocity && b.width == 3) {
          ++blocks;
          for (int e = 0; e < b.elements; ++e)
            gradient_field[size_t(b.index[e])] = {grad[size_t(b.offset + 3 * e)], grad[size_t(b.offset + 3 * e + 1)],
                                                  grad[size_t(b.offset + 3 * e + 2)]};
        }
      if (blocks == 0)
        std::printf("note: the task optimizes no initial velocity: the gradients overlay draws nothing\n");
    }

    // ghosts: each moving object's centre-of-mass path so far, fading with age
    std::vector<std::vector<glm::vec3>> trails(cs->objects.size());
    render::LineBuilder trail_lines;
    auto add_trail_points = [&]() {
      for (size_t k = 0; k < cs->objects.size(); ++k) {
        const scene::ObjectRange& r = cs->objects[k];
        if (r.particle_end <= r.particle_begin) continue;
        glm::dvec3 c(0.0);
        double w = 0;
        for (int i = r.particle_begin; i < r.particle_end; ++i) {
          double m = model.particle_mass[i];
          c += glm::dvec3(a.particle_q[i].x, a.particle_q[i].y, a.particle_q[i].z) * m;
          w += m;
        }
        if (w > 0) trails[k].push_back(glm::vec3(c / w));
      }
    };

    render::DrawList list;
    auto build = [&](uint64_t frame) -> const render::DrawList& {
      if (o.contacts) compute_contacts(model, a, contacts);
      if (cs->has_robots()) view.set_robot_state(a);
      if (shared) {
        if (cuda)
          shared->write_device(device_sim->device_positions(0), device_sim->stream(), gpu.loop());
        else
          shared->write(a, frame);
        DeviceParticles dp{shared->spheres(frame), shared->positions(frame), shared->normals(frame)};
        view.set_device_particles(&dp);
      }
      list = view.build(a, &contacts, o.gradients ? &gradient_field : &a.particle_qd, ov);
      if (o.ghosts) {
        add_trail_points();
        trail_lines.clear();
        for (const auto& t : trails) {
          if (t.size() < 2) continue;
          std::vector<uint32_t> colours(t.size());
          for (size_t i = 0; i < t.size(); ++i) {
            float age = float(t.size() - 1 - i) / float(t.size());
            colours[i] = render::pack_rgba8(glm::vec4(0.95f, 0.85f, 0.3f, 1.0f - 0.85f * age));
          }
          trail_lines.add_strip(t, colours);
        }
        if (!trail_lines.positions.empty()) list.lines.push_back(trail_lines.draw(3.0f));
      }
      return list;
    };
    auto draw = [&](const render::Camera& camera) { gpu.frame(build, camera); };
    // the camera the user asked for, or one that frames the scene
    auto camera_for = [&](const State& st) {
      if (cs->has_robots()) view.set_robot_state(st);
      render::Camera c = view.fit_camera(st, gpu.aspect());
      if (o.camera.size() >= 2) {
        c.yaw = float(o.camera[0] * glm::pi<double>() / 180.0);
        c.pitch = float(o.camera[1] * glm::pi<double>() / 180.0);
        glm::vec3 lo, hi;
        view.bounds(st, lo, hi);
        c.fit(lo, hi, gpu.aspect());
      }
      if (o.camera.size() >= 3) c.distance = float(o.camera[2]);
      if (o.camera.size() == 6) c.target = glm::vec3(float(o.camera[3]), float(o.camera[4]), float(o.camera[5]));
      return c;
    };
    FollowCamera follow(view, a, o.follow && cs->has_robots());
    if (o.follow && !follow.active())
      std::printf("note: --follow: the scene has no robot to follow; the camera stays\n");
    auto validation_failed = [&]() {
      if (gpu.validation_errors() == 0) return false;
      std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", gpu.validation_errors());
      return true;
    };

    if (still) {
      const render::Camera first = camera_for(a);  // what a followed still starts from
      if (!advance(o.frames)) return 1;
      // the camera frames the state drawn, on every backend (a device-resident rollout's
      // host copy is otherwise left at frame 0)
      if (cuda && !host_state_needed && !(device_sim->synchronize() && device_sim->download_state(0, a))) {
        std::fprintf(stderr, "%s: frame %d: cannot download the state\n", o.scene_path.c_str(), sim_frame);
        return 1;
      }
      draw(follow.active() ? follow(first, a) : camera_for(a));
      auto cap = gpu.take_capture();
      std::string err;
      if (!cap || !write_png(o.out, cap->width, cap->height, cap->rgba, &err))
        return std::fprintf(stderr, "adjoint: %s\n", err.empty() ? "no frame" : err.c_str()), 1;
      std::printf("%s: frame %d rendered to %s (%ux%u)\n", doc->name.c_str(), o.frames, o.out.c_str(), cap->width,
                  cap->height);
      follow.print();
      if (!write_states()) return 1;
      return validation_failed() ? 3 : 0;
    }

    // video: a camera framing the first state (fixed, or following the robot), one capture per
    // frame, encoded aside
    auto rec = Recorder::open({o.out, o.width, o.height, o.fps, o.ffmpeg});
    if (!rec) return std::fprintf(stderr, "%s\n", rec.status().message().c_str()), 1;
    render::Camera camera = camera_for(a);
    auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    render::Capture cap;
    for (int f = 0; f < o.frames && ok; ++f) {
      if (f > 0) ok = advance(per_frame);
      if (!ok) break;
      draw(follow(camera, a));
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
    follow.print();
    if (!write_states()) return 1;
    return validation_failed() ? 3 : 0;
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

}  // namespace adj::app
