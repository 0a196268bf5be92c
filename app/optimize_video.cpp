#include "app/optimize_video.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/robot_path.h"
#include "engine/solver/solver.h"
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
  v->tracked_end_ = cs.model.particle_count();
  for (const scene::LossTerm& l : task.loss)
    if (const scene::ObjectRange* r = cs.find(l.object); r && r->particle_end > r->particle_begin) {
      v->tracked_begin_ = r->particle_begin;
      v->tracked_end_ = r->particle_end;
      break;
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

Status OptimizeVideo::add_iteration(const optim::TaskRunnerT<float>& runner, const std::vector<float>& theta,
                                    int iteration, double loss) {
  if (runner.policy()) return Status::error("--record: policy tasks are not recorded yet (open-loop tasks only)");
  // the rollout at the current parameters, frame by frame
  Model model = runner.model();
  State state = model.make_state(), next = model.make_state();
  std::vector<Control> controls;
  runner.parameters().apply(theta, model, state, controls);
  Control zero = model.make_control();
  Solver solver({.substeps = cs_->substeps});
  const int horizon = runner.task().horizon;
  losses_.push_back(float(loss));
  trajectories_.emplace_back();
  std::vector<glm::vec3>& path = trajectories_.back();
  path.push_back(centre_of_mass(model, state, tracked_begin_, tracked_end_));

  // the first iteration frames the camera: the scene plus where the object goes
  if (trajectories_.size() == 1) {
    State a = state, b2 = next;
    glm::vec3 lo, hi;
    view_->bounds(a, lo, hi);
    for (int t = 0; t < horizon; ++t) {
      const Control& c = controls.empty() ? zero : controls[size_t(t) < controls.size() ? t : controls.size() - 1];
      if (!solver.step(model, a, b2, c, cs_->frame_dt)) break;  // reported by the pass below
      std::swap(a, b2);
      glm::vec3 p = centre_of_mass(model, a, tracked_begin_, tracked_end_);
      lo = glm::min(lo, p);
      hi = glm::max(hi, p);
    }
    camera_.yaw = 0.25f;
    camera_.pitch = 0.3f;
    camera_.fit(lo, hi, gpu_->aspect());
    camera_.zoom(1.5f);  // later iterations go further than the first
  }

  Overlays ov;
  for (int t = 0; t <= horizon; ++t) {
    if (t % options_.stride == 0 || t == horizon) {
      if (Status st = render_frame(view_->build(state, nullptr, nullptr, ov), iteration, loss, t * double(cs_->frame_dt));
          !st)
        return st;
    }
    if (t == horizon) break;
    const Control& c = controls.empty() ? zero : controls[size_t(t) < controls.size() ? t : controls.size() - 1];
    if (Status st = solver.step(model, state, next, c, cs_->frame_dt); !st)
      return Status::error("iteration " + std::to_string(iteration) + ", frame " + std::to_string(t) + ": " +
                           st.message());
    std::swap(state, next);
    path.push_back(centre_of_mass(model, state, tracked_begin_, tracked_end_));
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

Status OptimizeVideo::add_robot_iteration(const optim::RigidTaskRunnerT<float>& runner, int iteration, double loss) {
  const std::vector<StateT<float>>& frames = runner.frames();
  if (frames.empty()) return Status::error("iteration " + std::to_string(iteration) + ": no rollout to record");
  const RigidModelT<float>& model = runner.model();
  losses_.push_back(float(loss));
  trajectories_.emplace_back();
  std::vector<glm::vec3>& path = trajectories_.back();
  const std::vector<vec3<float>> com = robot_com_path(model, frames, tracked_body_);

  // the camera frames the robots through every rollout so far (and the targets): it moves
  // only between iterations, and only when a rollout went further than the ones before
  {
    const State particles = cs_->model.make_state();
    glm::vec3 lo = robot_lo_, hi = robot_hi_;
    for (size_t t = 0; t < frames.size(); t += std::max<size_t>(1, frames.size() / 8)) {
      glm::vec3 a, b;
      view_->set_robot_state(frames[t]);
      view_->bounds(particles, a, b);
      lo = glm::min(lo, a);
      hi = glm::max(hi, b);
    }
    view_->set_robot_state(frames.back());
    glm::vec3 a, b;
    view_->bounds(particles, a, b);
    lo = glm::min(lo, a), hi = glm::max(hi, b);
    if (trajectories_.size() == 1 || glm::any(glm::lessThan(lo, robot_lo_)) || glm::any(glm::greaterThan(hi, robot_hi_))) {
      robot_lo_ = lo, robot_hi_ = hi;
      camera_.yaw = 0.5f;
      camera_.pitch = 0.35f;
      camera_.fit(lo, hi, gpu_->aspect());
    }
  }

  // particles are not stepped by robot tasks: they stay at their initial state
  const State particles = cs_->model.make_state();
  const int horizon = int(frames.size()) - 1;
  Overlays ov;
  for (int t = 0; t <= horizon; ++t) {
    if (size_t(t) < com.size()) path.emplace_back(com[size_t(t)].x, com[size_t(t)].y, com[size_t(t)].z);
    if (t % options_.stride != 0 && t != horizon) continue;
    view_->set_robot_state(frames[size_t(t)]);
    if (Status st = render_frame(view_->build(particles, nullptr, nullptr, ov), iteration, loss, t * double(cs_->frame_dt));
        !st)
      return st;
  }
  return Status::ok();
}

Status OptimizeVideo::close() {
  gpu_->finish_captures();
  if (Status st = push_ready(); !st) return st;
  return recorder_->close();
}

}  // namespace adj::app
