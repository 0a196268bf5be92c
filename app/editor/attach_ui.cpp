// File > Attach to run...: the editor attached to a served run (app/editor/attach.h). The
// run's scene becomes the document, its records fill the Optimization panel's plots and
// progress, and its newest rollout replays in the viewport.
#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "app/editor/editor.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::editor {

Status Editor::attach_run(const std::string& address, const std::string& token) {
  detach_run();
  if (Status st = attachment.attach(address, token); !st) {
    message(Severity::error, "attach: " + st.message());
    return st;
  }
  attach_scene_loaded_ = false;
  attach_ghosts_.clear();
  attach_ghost_losses_.clear();
  attach_ghost_number_ = 0;
  message(Severity::info, "attaching to " + address);
  return {};
}

void Editor::detach_run() {
  if (!attachment.attached()) return;
  attachment.detach();
  attach_replay = {};
  attach_scene_loaded_ = false;
  attachment.view(attached);
  message(Severity::info, "detached from " + attached.endpoint + " (the run goes on)");
}

// the run's scene as the document: from the hello's JSON text, its paths relative to the
// run's scene file (where this machine has it; else the document is untitled)
static Result<scene::Scene> attached_scene(const AttachView& v) {
  auto s = scene::parse_scene(v.scene_text, v.scene_path);
  if (!s) return s.status();
  auto cs = scene::compile<float>(*s, std::filesystem::path(v.scene_path).parent_path().string());
  if (!cs) return Status::error(v.scene_path + ": " + cs.status().message());
  return s;
}

void Editor::update_attachment() {
  if (!attachment.attached()) return;
  const std::string last_error = attached.error;
  attachment.view(attached);
  if (!attached.error.empty() && attached.error != last_error) message(Severity::error, "attach: " + attached.error);
  if (attached.has_hello && !attach_scene_loaded_) {
    attach_scene_loaded_ = true;
    auto s = attached_scene(attached);
    if (!s) {
      message(Severity::error, "attach: the run's scene: " + s.status().message());
    } else {
      const bool here = std::filesystem::exists(attached.scene_path);
      replace_document(std::move(*s), here ? attached.scene_path : "");
      after_load("");
      if (int t = find_task(attached.task); t >= 0) task_index = t;
      message(Severity::info, "attached to " + attached.endpoint + ": " + attached.scene_path + ", " + attached.method);
    }
  }
  // the Optimization panel shows the attached run as it shows the worker's
  snap.opt_phase = attached.ended    ? (attached.end_status == "finished" ? OptPhase::finished : OptPhase::stopped)
                   : attached.paused ? OptPhase::paused
                                     : OptPhase::running;
  snap.opt_task = attached.task;
  snap.opt_iteration = attached.iterations;
  snap.opt_iterations = attached.planned;
  snap.opt_ms = attached.last_ms;
  snap.loss = attached.loss;
  snap.grad_norm = attached.grad_norm;
  if (attach_scene_loaded_ && attached.rollouts != attach_ghost_number_) add_attach_ghost();
  snap.ghost_paths = attach_ghosts_;
  snap.ghost_losses = attach_ghost_losses_;
  // the replay: the newest rollout, one frame per UI frame, looped
  if (attach_replay.active && attach_replay.playing) {
    std::uint64_t number = 0;
    if (attachment.rollout(attach_replay.number, attach_replay.rollout, &number)) attach_replay.number = number;
    const int frames = int(attach_replay.rollout.particle_q.size());
    attach_replay.frame = frames > 0 ? (attach_replay.frame + 1) % frames : 0;
  }
}

bool Editor::start_attach_replay() {
  std::uint64_t number = 0;
  if (!attachment.rollout(0, attach_replay.rollout, &number)) return false;
  stop_replay();
  attach_replay.active = attach_replay.playing = true;
  attach_replay.number = number;
  attach_replay.frame = 0;
  return true;
}

// frame f of a rollout into `s` (sized as the scene's states): false when it holds another
// scene's particles or joints
static bool rollout_state(const app::wire::Rollout& r, int f, State& s) {
  if (f < 0 || f >= int(r.particle_q.size())) return false;
  const int n = s.particle_count();
  if (r.particle_q[size_t(f)].size() != size_t(3 * n) || r.joint_q[size_t(f)].size() != size_t(s.q_count()))
    return false;
  const std::vector<float>& pq = r.particle_q[size_t(f)];
  for (int i = 0; i < n; ++i)
    s.particle_q[size_t(i)] = {pq[size_t(3 * i)], pq[size_t(3 * i + 1)], pq[size_t(3 * i + 2)]};
  std::copy(r.joint_q[size_t(f)].begin(), r.joint_q[size_t(f)].end(), s.joint_q.begin());
  return true;
}

const State* Editor::attach_display_state() {
  if (!attach_replay.active || !compiled_) return nullptr;
  if (attach_state_.particle_count() != compiled_->model.particle_count() || attach_replay.frame == 0)
    attach_state_ = compiled_->model.make_state();  // the scene's sizes (it may have changed)
  return rollout_state(attach_replay.rollout, attach_replay.frame, attach_state_) ? &attach_state_ : nullptr;
}

void Editor::add_attach_ghost() {
  app::wire::Rollout r;
  std::uint64_t number = 0;
  const int t = find_task(attached.task);
  if (!compiled_ || t < 0 || !attachment.rollout(attach_ghost_number_, r, &number)) return;
  attach_ghost_number_ = number;
  std::vector<State> frames(r.particle_q.size(), compiled_->model.make_state());
  for (size_t f = 0; f < frames.size(); ++f)
    if (!rollout_state(r, int(f), frames[f])) return;  // a rollout of another scene
  std::vector<vec3<float>> path = ghost_path(*compiled_, doc.scene().tasks[size_t(t)], frames);
  if (path.empty()) return;
  const size_t it = size_t(std::max<std::int64_t>(r.iteration, 0));
  attach_ghosts_.push_back(std::move(path));
  attach_ghost_losses_.push_back(float(it < attached.loss.size() ? attached.loss[it] : 0.0));
  if (attach_ghosts_.size() > Worker::k_ghosts) {
    attach_ghosts_.erase(attach_ghosts_.begin());
    attach_ghost_losses_.erase(attach_ghost_losses_.begin());
  }
}

void Editor::draw_attach_window() {
  if (!attach_window) return;
  ImGui::SetNextWindowSize(ImVec2(420, 0), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Attach to run", &attach_window)) return ImGui::End();
  if (!attachment.attached()) {
    ImGui::TextWrapped(
        "A run of adjoint optimize --serve [HOST:]PORT: the address it printed, and its token when it "
        "printed one.");
    ImGui::InputText("address", attach_address, sizeof attach_address);
    ImGui::InputText("token", attach_token, sizeof attach_token, ImGuiInputTextFlags_Password);
    if (ImGui::Button("Attach")) attach_run(attach_address, attach_token);
    return ImGui::End();
  }
  ImGui::Text("%s", attached.endpoint.c_str());
  if (!attached.error.empty())
    ImGui::TextWrapped("%s", attached.error.c_str());
  else if (!attached.answered)
    ImGui::TextDisabled("waiting for the run...");
  else
    ImGui::Text("%s, %s: %d iterations%s", attached.method.c_str(), attached.task.c_str(), attached.iterations,
                attached.ended    ? (" (" + attached.end_status + ")").c_str()
                : attached.paused ? " (paused)"
                                  : "");
  if (attached.malformed > 0) ImGui::TextDisabled("%lld malformed replies dropped", (long long)attached.malformed);
  ImGui::BeginDisabled(attached.rollouts == 0);
  if (ImGui::Button(attach_replay.active ? "Replaying" : "Replay newest rollout")) start_attach_replay();
  ImGui::EndDisabled();
  if (attach_replay.active) {
    ImGui::SameLine();
    ImGui::Text("iteration %lld, frame %d", (long long)attach_replay.rollout.iteration, attach_replay.frame);
    ImGui::SameLine();
    if (ImGui::Button("Stop replay")) attach_replay.active = false;
  }
  // control: the run refuses it unless it was started with --serve-control
  if (ImGui::Button("Pause")) attachment.control(app::wire::Command::pause);
  ImGui::SameLine();
  if (ImGui::Button("Resume")) attachment.control(app::wire::Command::resume);
  ImGui::SameLine();
  if (ImGui::Button("Stop run")) attachment.control(app::wire::Command::stop);
  ImGui::SameLine();
  if (ImGui::Button("Checkpoint")) attachment.control(app::wire::Command::checkpoint);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the run writes a checkpoint after its current window (SHAC, PPO with --checkpoint-dir)");
  if (!attached.control_answer.empty()) ImGui::TextWrapped("%s", attached.control_answer.c_str());
  // the run's checkpoints (the newest last): `adjoint optimize ... --resume DIR` continues one
  if (!attached.checkpoints.empty()) {
    ImGui::Text("checkpoints: %zu", attached.checkpoints.size());
    for (std::size_t i = attached.checkpoints.size() > 3 ? attached.checkpoints.size() - 3 : 0;
         i < attached.checkpoints.size(); ++i)
      ImGui::TextWrapped("  %s", attached.checkpoints[i].c_str());
  }
  if (ImGui::Button("Detach")) detach_run();
  ImGui::End();
}

}  // namespace adj::editor
