#include "app/editor/rollout_video.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace adj::editor {

bool RolloutVideo::update(Worker& worker) {
  if (showing()) return true;
  RecordedRollout next;
  if (!worker.take_rollout(next)) return false;
  if (next.run != run_) {  // a new optimization: a new history
    paths_.clear();
    losses_.clear();
    run_ = next.run;
  }
  rollout_ = std::move(next);
  frame_ = 0;
  paths_.emplace_back();
  losses_.push_back(float(rollout_.loss));
  return showing();
}

void RolloutVideo::reset() {
  rollout_ = {};
  frame_ = 0;
  run_ = 0;
  paths_.clear();
  losses_.clear();
}

void RolloutVideo::ghosts(render::LineBuilder& out) {
  if (paths_.empty() || !showing()) return;
  // the current iteration's path grows with its frames
  const size_t upto = std::min(rollout_.path.size(), size_t(rollout_.frames[frame_]) + 1);
  std::vector<glm::vec3>& cur = paths_.back();
  cur.clear();
  for (size_t i = 0; i < upto; ++i) cur.emplace_back(rollout_.path[i].x, rollout_.path[i].y, rollout_.path[i].z);
  std::vector<render::GhostTrajectory> g;
  for (size_t k = 0; k < paths_.size(); ++k)
    if (paths_[k].size() > 1) g.push_back({paths_[k], losses_[k]});
  if (g.empty()) return;
  auto [lo, hi] = std::minmax_element(losses_.begin(), losses_.end());
  render::add_ghost_trajectories(out, g, {render::Colormap::viridis, *lo, *hi > *lo ? *hi : *lo + 1.0f});
}

void RolloutVideo::draw_caption(glm::vec2 pos, glm::vec2 pivot) const {
  if (!showing()) return;
  ImGui::SetNextWindowPos(ImVec2(pos.x, pos.y), ImGuiCond_Always, ImVec2(pivot.x, pivot.y));
  ImGui::SetNextWindowBgAlpha(0.55f);
  ImGui::Begin("##rollout_caption", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoInputs |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  const double time = rollout_.frames[frame_] * rollout_.frame_dt;
  ImGui::Text("%s   iteration %d   loss %.5g   t = %.2f s", rollout_.task.c_str(), rollout_.iteration, rollout_.loss,
              time);
  std::vector<float> logs;
  // log scale while every loss is positive (a walked distance's negative loss is drawn as it is)
  const bool log = *std::min_element(losses_.begin(), losses_.end()) > 0;
  for (float l : losses_) logs.push_back(log ? std::log10(l) : l);
  ImGui::PlotLines("##loss", logs.data(), int(logs.size()), 0, log ? "log10 loss" : "loss", FLT_MAX, FLT_MAX,
                   ImVec2(200, 50));
  ImGui::End();
}

}  // namespace adj::editor
