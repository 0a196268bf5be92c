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

namespace {

// one `adjoint render`: the scene compiled, its frames simulated on the CPU or CUDA (or a
// policy checkpoint's evaluation episode replayed), drawn offscreen into a still or a video
class RenderJob {
 public:
  explicit RenderJob(const RenderOptions& opt) : o_(opt) {}
  int run();

 private:
  int check_options();
  int load();
  int start_simulation();
  int start_device();
  Status cuda_step();
  bool advance(int steps);
  bool write_states();
  int share_particles();
  int compute_gradient_field();
  void add_trail_points();
  const render::DrawList& build(uint64_t frame);
  render::Camera camera_for(const State& st);
  int render_still(FollowCamera& follow);
  int render_video(FollowCamera& follow);
  int validation_result();

  RenderOptions o_;
  bool still_ = false, policy_ = false, cuda_ = false;
  std::optional<scene::Scene> doc_;
  std::optional<scene::CompiledScene> cs_;
  PolicyEpisode episode_;  // --policy: the frames drawn instead of simulated
  // simulation: one video frame advances 1/fps seconds = `per_frame_` scene frames
  std::unique_ptr<Solver> solver_;
  State a_, b_;
  Control control_;
  Contacts contacts_;
  int per_frame_ = 1, sim_frame_ = 0;
  std::unique_ptr<CudaRollout> device_sim_;
  std::unique_ptr<CudaSolver> device_solver_;
  bool host_state_needed_ = true;
  std::unique_ptr<StateLog> log_;
  // drawing
  std::unique_ptr<Offscreen> gpu_;
  std::unique_ptr<SceneView> view_;
  vis::Surface surface_;             // the cloth surface shared_ writes normals of (it keeps a pointer)
  std::unique_ptr<GpuView> shared_;  // the shared buffers the particles are drawn from (none: host arrays)
  Overlays ov_;
  Array<vec3<float>> gradient_field_;
  std::vector<std::vector<glm::vec3>> trails_;
  render::LineBuilder trail_lines_;
  render::DrawList list_;
};

int RenderJob::check_options() {
  still_ = is_still(o_.out);
  policy_ = !o_.policy.empty();
  if (o_.frames < 0 && !policy_) o_.frames = still_ ? 0 : 120;
  if (!still_) {
    std::string notice;
    even_size(video_format(o_.out), o_.width, o_.height, &notice);
    if (!notice.empty()) std::printf("note: %s\n", notice.c_str());
  }
  cuda_ = o_.backend == "cuda";
  if (cuda_ && o_.data_path == "mapped")
    return std::fprintf(stderr, "adjoint render: --data-path %s needs --backend cpu\n", o_.data_path.c_str()), 1;
  if (!cuda_ && (o_.data_path == "staging" || o_.data_path == "interop"))
    return std::fprintf(stderr, "adjoint render: --data-path %s needs --backend cuda\n", o_.data_path.c_str()), 1;
  if (cuda_) {
    std::string why;
    if (!cuda_available(&why))
      return std::fprintf(stderr, "adjoint render: --backend cuda: no CUDA device (%s)\n", why.c_str()), 1;
  }
  return 0;
}

int RenderJob::load() {
  auto doc = scene::load_scene(o_.scene_path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  doc_ = std::move(*doc);
  auto cs = scene::compile<float>(*doc_, std::filesystem::path(o_.scene_path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", o_.scene_path.c_str(), cs.status().message().c_str()), 1;
  cs_ = std::move(*cs);
  for (const std::string& w : cs_->warnings)
    std::fprintf(stderr, "%s: warning: %s\n", o_.scene_path.c_str(), w.c_str());
  // --policy: the checkpoint's evaluation episode, drawn frame by frame instead of simulated
  if (policy_) {
    if (cuda_) return std::fprintf(stderr, "adjoint render: --policy needs --backend cpu (the evaluation's)\n"), 1;
    auto e = policy_episode(o_, still_, *doc_);
    if (!e) return std::fprintf(stderr, "adjoint render: --policy: %s\n", e.status().message().c_str()), 1;
    episode_ = std::move(*e);
  } else if (o_.stride != 1) {
    return std::fprintf(stderr, "adjoint render: --stride needs --policy (a simulated video advances 1/fps s)\n"), 1;
  }
  return 0;
}

int RenderJob::start_simulation() {
  const Model& model = cs_->model;
  solver_ = std::make_unique<Solver>(SolverOptions{.substeps = cs_->substeps});
  a_ = model.make_state(), b_ = model.make_state();
  control_ = model.make_hold_control();  // PD actuators hold the initial pose
  per_frame_ = still_ ? 1 : std::max(1, int(std::lround(1.0 / (o_.fps * double(cs_->frame_dt)))));
  if (policy_ && !still_) per_frame_ = o_.stride;  // episode frames per video frame
  if (!policy_ && !still_ && std::abs(per_frame_ * double(cs_->frame_dt) * o_.fps - 1.0) > 1e-3)
    std::printf("note: the scene's dt %.5g s does not divide 1/%d s; each video frame advances %d steps (%.4g s)\n",
                double(cs_->frame_dt), o_.fps, per_frame_, per_frame_ * double(cs_->frame_dt));
  host_state_needed_ = !cuda_;
  if (cuda_)
    if (int rc = start_device(); rc != 0) return rc;
  if (policy_) a_ = episode_.states[0];
  log_ =
      std::make_unique<StateLog>(doc_->name, cs_->frame_dt, cs_->substeps, model.particle_count(), cs_->has_robots());
  if (!o_.states.empty()) log_->add(0, a_);
  return 0;
}

// CUDA: the particles live on the device (state 0 of a one-step rollout, restarted from its
// end after each step); the host state is downloaded only when something drawn from it needs
// it (springs, overlays, trails). A scene with bodies is stepped by CudaSolver (particles,
// bodies and their contact, as the editor's CUDA backend), whose states come back to the host
// each step and are drawn from host arrays: one physics on every path
int RenderJob::start_device() {
  const Model& model = cs_->model;
  if (cs_->has_robots()) {
    if (o_.data_path == "staging" || o_.data_path == "interop")
      return std::fprintf(stderr,
                          "%s: --data-path %s: a scene with bodies is stepped by CudaSolver, whose states are on "
                          "the host (use --data-path host or auto)\n",
                          o_.scene_path.c_str(), o_.data_path.c_str()),
             1;
    o_.data_path = "host";
    host_state_needed_ = true;
    device_solver_ = std::make_unique<CudaSolver>(SolverOptions{.substeps = cs_->substeps});
    if (Status st = device_solver_->upload(model); !st)
      return std::fprintf(stderr, "%s: CUDA: %s\n", o_.scene_path.c_str(), st.message().c_str()), 1;
    return 0;
  }
  if (o_.data_path == "host")
    return std::fprintf(stderr, "adjoint render: --data-path host needs --backend cpu (or a scene with bodies)\n"), 1;
  bool springs = false;
  for (const scene::ObjectRange& r : cs_->objects) springs |= r.spring_end > r.spring_begin;
  host_state_needed_ = springs || o_.contacts || o_.velocities || o_.gradients || o_.ghosts;
  device_sim_ = std::make_unique<CudaRollout>(CudaRolloutOptions<float>{
      .steps = 1, .dt = cs_->frame_dt, .substeps = cs_->substeps, .graphs = true, .backward = false});
  Status st = device_sim_->upload(model);
  if (st) st = device_sim_->set_initial(a_);
  if (!st) return std::fprintf(stderr, "%s: CUDA: %s\n", o_.scene_path.c_str(), st.message().c_str()), 1;
  return 0;
}

Status RenderJob::cuda_step() {
  if (device_solver_) {
    Status st = device_solver_->step(a_, b_, control_, cs_->frame_dt);
    if (st) std::swap(a_, b_);
    return st;
  }
  Status st = device_sim_->forward();
  if (st) st = device_sim_->restart_from_final();
  if (st && host_state_needed_) {
    st = device_sim_->synchronize();
    if (st) st = device_sim_->download_state(0, a_);
  }
  return st;
}

bool RenderJob::advance(int steps) {
  for (int k = 0; k < steps; ++k, ++sim_frame_) {
    if (policy_) {
      if (sim_frame_ == episode_.length) break;  // the episode's last frame stays in view
      a_ = episode_.states[size_t(sim_frame_ + 1)];
    } else {
      Status st = cuda_ ? cuda_step() : solver_->step(cs_->model, a_, b_, control_, cs_->frame_dt, &contacts_);
      if (!st) {
        std::fprintf(stderr, "%s: frame %d: %s\n", o_.scene_path.c_str(), sim_frame_, st.message().c_str());
        return false;
      }
      if (!cuda_) std::swap(a_, b_);
    }
    if (!o_.states.empty()) {
      if (cuda_ && !host_state_needed_ && !(device_sim_->synchronize() && device_sim_->download_state(0, a_))) {
        std::fprintf(stderr, "%s: frame %d: cannot download the state\n", o_.scene_path.c_str(), sim_frame_);
        return false;
      }
      log_->add(sim_frame_ + 1, a_);
    }
  }
  return true;
}

bool RenderJob::write_states() {
  if (o_.states.empty()) return true;
  if (Status st = log_->write(o_.states); !st) return std::fprintf(stderr, "%s\n", st.message().c_str()), false;
  std::printf("states written to %s\n", o_.states.c_str());
  return true;
}

// the data path, and the shared buffers the particles are drawn from (none: host arrays)
int RenderJob::share_particles() {
  if (o_.data_path == "host") {
    std::printf("data path: host arrays\n");
    return 0;
  }
  render::SharePath path = render::SharePath::cpu_mapped;
  std::string why;
  if (cuda_) {
    path = choose_share_path(share_caps(gpu_->context(), true), &why);
    if (o_.data_path == "staging") {
      path = render::SharePath::cuda_staging;
      why.clear();
    }
    if (o_.data_path == "interop" && path != render::SharePath::cuda_interop)
      return std::fprintf(stderr, "adjoint render: --data-path interop: %s\n", why.c_str()), 1;
  }
  shared_ = std::make_unique<GpuView>(gpu_->context(), path);
  if (!shared_->note().empty()) why = shared_->note();
  if (o_.data_path == "interop" && shared_->path() != render::SharePath::cuda_interop)
    return std::fprintf(stderr, "adjoint render: --data-path interop: %s\n", why.c_str()), 1;
  surface_ = view_->surface();
  shared_->set_layout(cs_->model, 0, view_->has_particle_spheres() ? cs_->model.particle_count() : 0,
                      surface_.indices.empty() ? nullptr : &surface_);
  std::printf("data path: %s%s%s\n", render::to_string(shared_->path()), why.empty() ? "" : " (",
              why.empty() ? "" : (why + ")").c_str());
  return 0;
}

// gradients: dLoss/d(initial velocity) of the scene's first task, one arrow per particle
int RenderJob::compute_gradient_field() {
  const scene::Task* task = doc_->find_task("");
  using TaskPtr = std::unique_ptr<optim::TaskT<float>>;
  auto runner = task ? optim::make_task(*cs_, *task) : Result<TaskPtr>(Status::error("the scene has no task"));
  std::vector<float> grad;
  if (runner) {
    auto loss = (*runner)->evaluate((*runner)->theta(), &grad);
    if (!loss) runner = Result<TaskPtr>(loss.status());
  }
  if (!runner)
    return std::fprintf(stderr, "%s: gradients overlay: %s\n", o_.scene_path.c_str(),
                        runner.status().message().c_str()),
           1;
  gradient_field_.assign(size_t(cs_->model.particle_count()), vec3<float>());
  int blocks = 0;
  for (const optim::ParamBlock& b : (*runner)->blocks())
    if (b.kind == scene::ParamKind::initial_velocity && b.width == 3) {
      ++blocks;
      for (int e = 0; e < b.elements; ++e)
        gradient_field_[size_t(b.index[e])] = {grad[size_t(b.offset + 3 * e)], grad[size_t(b.offset + 3 * e + 1)],
                                               grad[size_t(b.offset + 3 * e + 2)]};
    }
  if (blocks == 0) std::printf("note: the task optimizes no initial velocity: the gradients overlay draws nothing\n");
  return 0;
}

// ghosts: each moving object's centre-of-mass path so far, fading with age
void RenderJob::add_trail_points() {
  const Model& model = cs_->model;
  for (size_t k = 0; k < cs_->objects.size(); ++k) {
    const scene::ObjectRange& r = cs_->objects[k];
    if (r.particle_end <= r.particle_begin) continue;
    glm::dvec3 c(0.0);
    double w = 0;
    for (int i = r.particle_begin; i < r.particle_end; ++i) {
      double m = model.particle_mass[i];
      c += glm::dvec3(a_.particle_q[i].x, a_.particle_q[i].y, a_.particle_q[i].z) * m;
      w += m;
    }
    if (w > 0) trails_[k].push_back(glm::vec3(c / w));
  }
}

const render::DrawList& RenderJob::build(uint64_t frame) {
  if (o_.contacts) compute_contacts(cs_->model, a_, contacts_);
  if (cs_->has_robots()) view_->set_robot_state(a_);
  if (shared_) {
    if (cuda_)
      shared_->write_device(device_sim_->device_positions(0), device_sim_->stream(), gpu_->loop());
    else
      shared_->write(a_, frame);
    DeviceParticles dp{shared_->spheres(frame), shared_->positions(frame), shared_->normals(frame)};
    view_->set_device_particles(&dp);
  }
  list_ = view_->build(a_, &contacts_, o_.gradients ? &gradient_field_ : &a_.particle_qd, ov_);
  if (o_.ghosts) {
    add_trail_points();
    trail_lines_.clear();
    for (const auto& t : trails_) {
      if (t.size() < 2) continue;
      std::vector<uint32_t> colours(t.size());
      for (size_t i = 0; i < t.size(); ++i) {
        float age = float(t.size() - 1 - i) / float(t.size());
        colours[i] = render::pack_rgba8(glm::vec4(0.95f, 0.85f, 0.3f, 1.0f - 0.85f * age));
      }
      trail_lines_.add_strip(t, colours);
    }
    if (!trail_lines_.positions.empty()) list_.lines.push_back(trail_lines_.draw(3.0f));
  }
  return list_;
}

// the camera the user asked for, or one that frames the scene
render::Camera RenderJob::camera_for(const State& st) {
  if (cs_->has_robots()) view_->set_robot_state(st);
  render::Camera c = view_->fit_camera(st, gpu_->aspect());
  if (o_.camera.size() >= 2) {
    c.yaw = float(o_.camera[0] * glm::pi<double>() / 180.0);
    c.pitch = float(o_.camera[1] * glm::pi<double>() / 180.0);
    glm::vec3 lo, hi;
    view_->bounds(st, lo, hi);
    c.fit(lo, hi, gpu_->aspect());
  }
  if (o_.camera.size() >= 3) c.distance = float(o_.camera[2]);
  if (o_.camera.size() == 6) c.target = glm::vec3(float(o_.camera[3]), float(o_.camera[4]), float(o_.camera[5]));
  return c;
}

int RenderJob::validation_result() {
  if (gpu_->validation_errors() == 0) return 0;
  std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", gpu_->validation_errors());
  return 3;
}

int RenderJob::render_still(FollowCamera& follow) {
  const render::Camera first = camera_for(a_);  // what a followed still starts from
  if (!advance(o_.frames)) return 1;
  // the camera frames the state drawn, on every backend (a device-resident rollout's host
  // copy is otherwise left at frame 0)
  if (cuda_ && !host_state_needed_ && !(device_sim_->synchronize() && device_sim_->download_state(0, a_))) {
    std::fprintf(stderr, "%s: frame %d: cannot download the state\n", o_.scene_path.c_str(), sim_frame_);
    return 1;
  }
  gpu_->frame([&](uint64_t f) -> const render::DrawList& { return build(f); },
              follow.active() ? follow(first, a_) : camera_for(a_));
  auto cap = gpu_->take_capture();
  std::string err;
  if (!cap || !write_png(o_.out, cap->width, cap->height, cap->rgba, &err))
    return std::fprintf(stderr, "adjoint: %s\n", err.empty() ? "no frame" : err.c_str()), 1;
  std::printf("%s: frame %d rendered to %s (%ux%u)\n", doc_->name.c_str(), o_.frames, o_.out.c_str(), cap->width,
              cap->height);
  follow.print();
  if (!write_states()) return 1;
  return validation_result();
}

// video: a camera framing the first state (fixed, or following the robot), one capture per
// frame, encoded aside
int RenderJob::render_video(FollowCamera& follow) {
  auto rec = Recorder::open({o_.out, o_.width, o_.height, o_.fps, o_.ffmpeg});
  if (!rec) return std::fprintf(stderr, "%s\n", rec.status().message().c_str()), 1;
  render::Camera camera = camera_for(a_);
  auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  render::Capture cap;
  for (int f = 0; f < o_.frames && ok; ++f) {
    if (f > 0) ok = advance(per_frame_);
    if (!ok) break;
    gpu_->frame([&](uint64_t fr) -> const render::DrawList& { return build(fr); }, follow(camera, a_));
    while (ok && gpu_->pop_capture(cap)) ok = (*rec)->push(std::move(cap));
  }
  gpu_->finish_captures();
  while (ok && gpu_->pop_capture(cap)) ok = (*rec)->push(std::move(cap));
  Status st = (*rec)->close();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  if (!ok) return 1;
  std::printf("%s: %d frames %ux%u at %d fps written to %s in %.2f s (%.1f frames/s)\n", doc_->name.c_str(),
              (*rec)->frames_written(), o_.width, o_.height, o_.fps, o_.out.c_str(), secs,
              secs > 0 ? (*rec)->frames_written() / secs : 0.0);
  follow.print();
  if (!write_states()) return 1;
  return validation_result();
}

int RenderJob::run() {
  if (int rc = check_options(); rc != 0) return rc;
  if (int rc = load(); rc != 0) return rc;
  if (int rc = start_simulation(); rc != 0) return rc;
  try {
    gpu_ = std::make_unique<Offscreen>(o_.width, o_.height, o_.validation, /*with_ui=*/false);
    view_ = std::make_unique<SceneView>(*doc_, *cs_);
    if (int rc = share_particles(); rc != 0) return rc;
    ov_.contacts = o_.contacts;
    ov_.vectors = o_.velocities || o_.gradients;
    ov_.wireframe = o_.wireframe;
    if (o_.gradients)
      if (int rc = compute_gradient_field(); rc != 0) return rc;
    trails_.assign(cs_->objects.size(), {});
    FollowCamera follow(*view_, a_, o_.follow && cs_->has_robots());
    if (o_.follow && !follow.active())
      std::printf("note: --follow: the scene has no robot to follow; the camera stays\n");
    return still_ ? render_still(follow) : render_video(follow);
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int run_render(const RenderOptions& opt) { return RenderJob(opt).run(); }

}  // namespace adj::app
