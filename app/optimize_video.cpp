#include "app/optimize_video.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/robot_path.h"
#include "render/line_builder.h"

namespace adj::app {

namespace {

glm::vec3 centre_of_mass(const Model& m, const State& s, int begin, int end) {
  glm::dvec3 c(0.0);
  double mass = 0;
  for (int i = begin; i < end; ++i) {
    double w = m.particle_mass[i] > 0 ? m.particle_mass[i] : 0.0;
    c += glm::dvec3(s.particle_q[i].x, s.particle_q[i].y, s.particle_q[i].z) * w;
    mass += w;
  }
  if (mass <= 0) {  // all pinned: the plain mean
    for (int i = begin; i < end; ++i) c += glm::dvec3(s.particle_q[i].x, s.particle_q[i].y, s.particle_q[i].z);
    mass = std::max(1, end - begin);
  }
  return glm::vec3(c / mass);
}

}  // namespace

Result<std::unique_ptr<OptimizeVideo>> OptimizeVideo::open(const scene::Scene& doc, const scene::CompiledScene& cs,
                                                           const scene::Task& task, OptimizeVideoOptions o) {
  std::string notice;
  even_size(video_format(o.path), o.width, o.height, &notice);
  if (!notice.empty()) std::printf("note: %s\n", notice.c_str());
  std::unique_ptr<OptimizeVideo> v(new OptimizeVideo());
  if (o.stride <= 0) o.stride = std::max(1, int(std::lround(task.horizon / double(o.fps))));
  v->options_ = o;
  v->cs_ = &cs;
  v->task_name_ = task.name;
  auto rec = Recorder::open({o.path, o.width, o.height, o.fps});
  if (!rec) return rec.status();
  v->recorder_ = std::move(*rec);

  // trace the object the first loss term measures (else every particle)
  // (or the robot body it measures, whichever term comes first)
  v->tracked_end_ = cs.model.particle_count();
  v->tracks_particles_ = !cs.has_robots();
  for (const scene::LossTerm& l : task.loss) {
    const scene::ObjectRange* r = cs.find(l.object);
    if (r && r->kind == scene::ObjectKind::robot) break;
    if (r && r->particle_end > r->particle_begin) {
      v->tracked_begin_ = r->particle_begin;
      v->tracked_end_ = r->particle_end;
      v->tracks_particles_ = true;
      break;
    }
  }
  v->tracked_body_ = tracked_robot_body(cs, task);
  try {
    v->gpu_ = std::make_unique<Offscreen>(o.width, o.height, o.validation, /*with_ui=*/true);
  } catch (const std::exception& e) {
    return Status::error(e.what());
  }
  v->view_ = std::make_unique<SceneView>(doc, cs);
  v->camera_ = v->view_->fit_camera(cs.model.make_state(), v->gpu_->aspect());
  return v;
}

Status OptimizeVideo::push_ready() {
  render::Capture cap;
  while (gpu_->pop_capture(cap))
    if (!recorder_->push(std::move(cap))) return recorder_->close();
  return Status::ok();
}

Status OptimizeVideo::add_iteration(const std::vector<State>& frames, int iteration, double loss) {
  if (frames.empty()) return Status::error("iteration " + std::to_string(iteration) + ": no rollout to record");
  const Model& model = cs_->model;
  const bool robots = cs_->has_robots();
  // the traced path: the tracked particles' centre of mass, else the tracked body's
  losses_.push_back(float(loss));
  trajectories_.emplace_back();
  std::vector<glm::vec3>& path = trajectories_.back();
  if (tracks_particles_) {
    for (const State& f : frames) path.push_back(centre_of_mass(model, f, tracked_begin_, tracked_end_));
  } else if (tracked_body_ >= 0) {
    for (const vec3<float>& p : robot_com_path(model.rigid, frames, tracked_body_)) path.emplace_back(p.x, p.y, p.z);
  }
  // the camera frames the scene through every rollout so far and the paths: it moves only
  // between iterations, and only when a rollout went further than the ones before
  glm::vec3 lo = frame_lo_, hi = frame_hi_;
  for (size_t t = 0; t < frames.size(); t += std::max<size_t>(1, frames.size() / 8)) {
    glm::vec3 a, b;
    if (robots) view_->set_robot_state(frames[t]);
    view_->bounds(frames[t], a, b);
    lo = glm::min(lo, a), hi = glm::max(hi, b);
  }
  for (const glm::vec3& p : path) lo = glm::min(lo, p), hi = glm::max(hi, p);
  if (trajectories_.size() == 1 || glm::any(glm::lessThan(lo, frame_lo_)) ||
      glm::any(glm::greaterThan(hi, frame_hi_))) {
    frame_lo_ = lo, frame_hi_ = hi;
    camera_.yaw = robots ? 0.5f : 0.25f;
    camera_.pitch = robots ? 0.35f : 0.3f;
    camera_.fit(lo, hi, gpu_->aspect());
  }
  const int horizon = int(frames.size()) - 1;
  Overlays ov;
  for (int t = 0; t <= horizon; ++t) {
    if (t % options_.stride != 0 && t != horizon) continue;
    if (robots) view_->set_robot_state(frames[size_t(t)]);
    if (Status st = render_frame(view_->build(frames[size_t(t)], nullptr, nullptr, ov), iteration, loss,
                                 t * double(cs_->frame_dt));
        !st)
      return st;
  }
  return Status::ok();
}

Status OptimizeVideo::render_frame(render::DrawList list, int iteration, double loss, double time) {
  // ghosts: earlier iterations (oldest first) and this one so far
  render::LineBuilder ghosts;
  std::vector<render::GhostTrajectory> g;
  for (size_t k = 0; k < trajectories_.size(); ++k) g.push_back({trajectories_[k], losses_[k]});
  float lo = *std::min_element(losses_.begin(), losses_.end());
  float hi = *std::max_element(losses_.begin(), losses_.end());
  render::add_ghost_trajectories(ghosts, g, {render::Colormap::viridis, lo, hi > lo ? hi : lo + 1.0f});
  if (!ghosts.positions.empty()) list.lines.push_back(ghosts.draw(3.0f));
  gpu_->frame(list, camera_, [&] {
    // caption bar and the loss plot inset
    ImGui::SetNextWindowPos(ImVec2(10, 10));
    ImGui::SetNextWindowBgAlpha(0.55f);
    ImGui::Begin("##caption", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoInputs);
    ImGui::Text("%s   iteration %d   loss %.5g   t = %.2f s", task_name_.c_str(), iteration, loss, time);
    std::vector<float> logs;
    // log scale while every loss is positive (a walked distance's negative loss is drawn as it is)
    const bool log = *std::min_element(losses_.begin(), losses_.end()) > 0;
    for (float l : losses_) logs.push_back(log ? std::log10(l) : l);
    ImGui::PlotLines("##loss", logs.data(), int(logs.size()), 0, log ? "log10 loss" : "loss", FLT_MAX, FLT_MAX,
                     ImVec2(200, 50));
    ImGui::End();
  });
  return push_ready();
}

Status OptimizeVideo::close() {
  gpu_->finish_captures();
  if (Status st = push_ready(); !st) return st;
  return recorder_->close();
}

}  // namespace adj::app
