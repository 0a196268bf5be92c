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
  attach_ghost_number_ = attach_grad_number_ = 0;
  attach_latest_ = {};
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

// frame f of a world's frames into `s` (sized as the scene's states): false when they hold
// another scene's particles or joints
static bool rollout_state(const std::vector<std::vector<float>>& particle_q,
                          const std::vector<std::vector<float>>& joint_q, int f, State& s) {
  if (f < 0 || f >= int(particle_q.size()) || f >= int(joint_q.size())) return false;
  const int n = s.particle_count();
  const std::vector<float>& pq = particle_q[size_t(f)];
  const std::vector<float>& jq = joint_q[size_t(f)];
  if (pq.size() != size_t(3 * n) || jq.size() != size_t(s.q_count())) return false;
  for (int i = 0; i < n; ++i)
    s.particle_q[size_t(i)] = {pq[size_t(3 * i)], pq[size_t(3 * i + 1)], pq[size_t(3 * i + 2)]};
  std::copy(jq.begin(), jq.end(), s.joint_q.begin());
  return true;
}

static bool rollout_state(const app::wire::Rollout& r, int f, State& s) {
  return rollout_state(r.particle_q, r.joint_q, f, s);
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
      attach_revision_ = doc.revision();
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
  snap.train_return = attached.train_return;
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
  attach_gradient();
  attach_worlds();
}

namespace {

// a rollout's parameter blocks drawn as arrows, as the worker publishes a local run's
// (ParamBlock of width 3); blocks of a kind this editor does not draw are left out
std::vector<optim::ParamBlock> arrow_blocks(const std::vector<app::wire::ArrowBlock>& in) {
  using K = scene::ParamKind;
  std::vector<optim::ParamBlock> out;
  for (const app::wire::ArrowBlock& a : in)
    for (K k : {K::initial_position, K::initial_velocity, K::control_force})
      if (a.kind == scene::to_string(k)) {
        optim::ParamBlock b;
        b.kind = k;
        b.offset = a.offset;
        b.steps = a.steps;
        b.frames = a.steps;  // one entry a frame (a knotted block is sent interpolated)
        b.elements = a.elements;
        b.width = 3;
        b.count = a.steps * a.elements * 3;
        b.index = a.index;
        out.push_back(std::move(b));
      }
  return out;
}

}  // namespace

void Editor::attach_gradient() {
  const bool replaying = attach_replay.active;
  const std::uint64_t number = replaying ? attach_replay.number : attach_ghost_number_;
  if (number != attach_grad_number_) {
    const app::wire::Rollout& r = replaying ? attach_replay.rollout : attach_latest_;
    attach_grad_number_ = number;
    attach_grad_ = r.gradient;
    attach_blocks_ = arrow_blocks(r.gradient_blocks);
    attach_step_norms_ = r.step_grad_norms;
  }
  snap.grad = attach_grad_;
  snap.blocks = attach_blocks_;
  snap.step_grad_norms = attach_step_norms_;
}

void Editor::attach_worlds() {
  const auto& worlds = attach_replay.rollout.worlds;
  if (!attach_replay.active || worlds.empty() || !compiled_) {
    attach_worlds_.clear();
    return;
  }
  if (attach_worlds_.size() != worlds.size()) world_fit_pending = true;  // the camera takes them in
  if (attach_worlds_.size() != worlds.size() ||
      (!attach_worlds_.empty() && (attach_worlds_[0].particle_count() != compiled_->model.particle_count() ||
                                   attach_worlds_[0].joint_q.size() != compiled_->model.joint_q.size())))
    attach_worlds_.assign(worlds.size(), compiled_->model.make_state());
  snap.world_states.clear();
  for (size_t k = 0; k < worlds.size(); ++k) {
    // each copy's window loops at its own length beside the replayed rollout
    const int frames = int(worlds[k].particle_q.size());
    if (frames > 0 &&
        rollout_state(worlds[k].particle_q, worlds[k].joint_q, attach_replay.frame % frames, attach_worlds_[k]))
      snap.world_states.push_back(attach_worlds_[k]);
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

const State* Editor::attach_display_state() {
  if (!attach_replay.active || !compiled_) return nullptr;
  // the scene's sizes (it may have changed; a robot's scene has joints and no particles)
  if (attach_state_.particle_count() != compiled_->model.particle_count() ||
      attach_state_.joint_q.size() != compiled_->model.joint_q.size() || attach_replay.frame == 0)
    attach_state_ = compiled_->model.make_state();
  return rollout_state(attach_replay.rollout, attach_replay.frame, attach_state_) ? &attach_state_ : nullptr;
}

// the frame's contacts as the run sent them (points, normals, forces: what is drawn)
template <class C>
static void fill_contacts(const app::wire::FrameContacts& in, C& out) {
  out.point.clear();
  out.normal.clear();
  out.force.clear();
  for (int k = 0; k < in.count(); ++k) {
    const size_t i = size_t(3 * k);
    out.point.push_back({in.point[i], in.point[i + 1], in.point[i + 2]});
    out.normal.push_back({in.normal[i], in.normal[i + 1], in.normal[i + 2]});
    out.force.push_back({in.force[i], in.force[i + 1], in.force[i + 2]});
  }
}

const Contacts* Editor::attach_display_contacts() {
  const auto& c = attach_replay.rollout.contacts;
  if (!attach_display_state() || attach_replay.frame >= int(c.size())) return nullptr;
  attach_contacts_.clear();
  fill_contacts(c[size_t(attach_replay.frame)], attach_contacts_);
  return &attach_contacts_;
}

const RigidContactsT<float>* Editor::attach_display_body_contacts() {
  const auto& c = attach_replay.rollout.body_contacts;
  if (!attach_display_state() || attach_replay.frame >= int(c.size())) return nullptr;
  attach_body_contacts_ = {};
  fill_contacts(c[size_t(attach_replay.frame)], attach_body_contacts_);
  return &attach_body_contacts_;
}

void Editor::add_attach_ghost() {
  std::uint64_t number = 0;
  const int t = find_task(attached.task);
  if (!compiled_ || !attachment.rollout(attach_ghost_number_, attach_latest_, &number)) return;
  attach_ghost_number_ = number;
  const app::wire::Rollout& r = attach_latest_;
  if (t < 0) return;
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
    // what the run sent with the rollout: each frame's contacts (View > Visualization draws them),
    // the gradient (its arrows), the first training copies' last window, drawn beside it
    const Contacts* c = attach_display_contacts();
    const RigidContactsT<float>* bc = attach_display_body_contacts();
    ImGui::TextDisabled("contacts in this frame: %d; gradient entries: %zu",
                        (c ? c->contact_count() : 0) + (bc ? bc->contact_count() : 0),
                        attach_replay.rollout.gradient.size());
    if (!attach_replay.rollout.worlds.empty())
      ImGui::TextWrapped("beside it: training copies 0..%zu, their last %zu frames, looped",
                         attach_replay.rollout.worlds.size() - 1, attach_replay.rollout.worlds[0].particle_q.size());
  }
  if (attached.skipped_windows > 0) ImGui::Text("skipped windows: %d", attached.skipped_windows);
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
