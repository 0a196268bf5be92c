// The Optimization panel's checkpoints: the SHAC run in the panel saved to a folder, a folder's
// run continued, or a policy checkpoint's evaluation episode replayed, in the format `adjoint
// optimize --checkpoint-dir` writes and `--resume` reads (app/run_checkpoint.h), so a run goes from the command line to
// the editor and back with the same bits as one run straight through.
#include <imgui.h>

#include <filesystem>
#include <string>

#include "app/editor/editor.h"
#include "app/run_checkpoint.h"

namespace adj::editor {

void Editor::save_checkpoint(const std::string& dir) {
  if (!snap.opt_shac) {
    message(Severity::error, "Save checkpoint: no SHAC run to save (start the task's training with SHAC first)");
    return;
  }
  worker.save_checkpoint(dir);  // between two windows; the outcome comes back in the snapshot
}

bool Editor::continue_from_checkpoint(const std::string& dir) {
  auto p = app::read_policy_checkpoint(dir);  // the run's identity (what `adjoint optimize` wrote)
  if (!p) {
    message(Severity::error, "Continue from checkpoint: " + p.status().message());
    return false;
  }
  if (p->method == "ppo") {
    message(Severity::error, "Continue from checkpoint: " + p->ck.file +
                                 " is a PPO run's checkpoint: the editor continues SHAC and AHAC runs");
    return false;
  }
  const std::string& task = p->task;
  const int i = find_task(task);
  if (i < 0) {
    message(Severity::error, "Continue from checkpoint: " + p->ck.file + " is of task \"" + task +
                                 "\", which scene \"" + doc.scene().name + "\" does not have");
    return false;
  }
  if (!doc.scene().tasks[size_t(i)].has_policy) {
    message(Severity::error, "Continue from checkpoint: task \"" + task + "\" has no policy to train here");
    return false;
  }
  task_index = i;
  OptMethod& m = task_methods[task];
  m.shac = true, m.pods = false, m.ahac = p->method == "ahac";
  m.envs = p->copies;
  m.seed = p->seed;
  opt_iterations = p->iterations;
  OptMethod resumed = m;
  resumed.resume = dir;
  start_optimization(task, opt_iterations, record_optimization, resumed);
  return true;
}

uint64_t Editor::evaluate_checkpoint(const std::string& dir) {
  replay_request_ = checkpoint_replay_ = worker.replay_checkpoint(dir);
  replay = {.active = true, .playing = true, .frame = 0, .carry = 0};
  replay_loaded_ = -1;
  worker.play(false);
  return replay_request_;
}

// beside Start: a SHAC run's checkpoint saved (while it runs, after the window under way), a
// saved run continued, or a policy checkpoint's evaluation episode replayed
void Editor::draw_checkpoint_buttons(bool running) {
  ImGui::BeginDisabled(!snap.opt_shac);
  if (ImGui::Button("Save checkpoint")) show_dialog(FileDialog::checkpoint_save);
  ui_items.note("optimization/checkpoint-save");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "the SHAC run's whole training state (policy, critic, optimizer, normalizer, every copy)\n"
        "into a folder, as adjoint optimize --checkpoint-dir writes it: continue it here or with --resume");
  ImGui::SameLine();
  ImGui::BeginDisabled(running);
  if (ImGui::Button("Continue from checkpoint...")) show_dialog(FileDialog::checkpoint_load);
  ui_items.note("optimization/checkpoint-load");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("a SHAC run saved here or by adjoint optimize --checkpoint-dir, continued from where it stopped");
  ImGui::SameLine();
  ImGui::BeginDisabled(running);
  if (ImGui::Button("Evaluate checkpoint...")) show_dialog(FileDialog::checkpoint_evaluate);
  ui_items.note("optimization/checkpoint-evaluate");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "a SHAC, AHAC or PPO run's checkpoint: its policy's evaluation episode (the mean action from the\n"
        "task's start, as adjoint render --policy runs it), replayed here; Ctrl+R records it");
}

}  // namespace adj::editor
