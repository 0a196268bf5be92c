// The editor's file dialogs: Open, Save As, Import OBJ and URDF/MJCF, the screenshots and
// recordings folder and SHAC checkpoint folders, each a file browser (file_browser.h) in a
// modal popup.
#include <imgui.h>

#include <filesystem>
#include <string>

#include "app/editor/editor.h"
#include "app/editor/robot_ui.h"

namespace adj::editor {

void Editor::draw_file_dialogs() {
  struct Dialog {
    const char* title;
    const char* id;      // UiItems prefix
    const char* action;  // the button
  };
  static constexpr Dialog k_dialogs[] = {{"Open scene", "open", "Open"},
                                         {"Save scene as", "save", "Save"},
                                         {"Import OBJ", "import", "Import"},
                                         {"Screenshots and recordings folder", "media", "Choose"},
                                         {"Import URDF/MJCF", "import-robot", "Import"},
                                         {"Save SHAC checkpoint to folder", "checkpoint-save", "Save"},
                                         {"Continue SHAC run from checkpoint folder", "checkpoint-load", "Continue"},
                                         {"Evaluate policy checkpoint folder", "checkpoint-evaluate", "Evaluate"}};
  namespace fs = std::filesystem;
  if (dialog_request_ && !ImGui::IsPopupOpen(k_dialogs[int(*dialog_request_)].title)) {
    dialog_ = *std::exchange(dialog_request_, std::nullopt);
    // start in the scene's folder, else where the last browser was left
    const std::string here = !doc.path().empty() ? fs::absolute(doc.path()).parent_path().string() : browse_dir_;
    switch (dialog_) {
      case FileDialog::open:
        browser_.reset(FileBrowser::Mode::open, here, {".json"});
        break;
      case FileDialog::save_as:
        browser_.reset(FileBrowser::Mode::save,
                       !doc.path().empty() ? doc.path()
                                           : (fs::path(here.empty() ? fs::current_path().string() : here) /
                                              (doc.scene().name.empty() ? "untitled.json" : doc.scene().name + ".json"))
                                                 .string(),
                       {".json"});
        break;
      case FileDialog::import_obj:
        browser_.reset(FileBrowser::Mode::open, here, {".obj"});
        break;
      case FileDialog::media:
        browser_.reset(FileBrowser::Mode::folder, media_folder(), {});
        break;
      case FileDialog::import_robot:
        browser_.reset(FileBrowser::Mode::open, here, {".urdf", ".xml", ".mjcf"});
        break;
      case FileDialog::checkpoint_save:
      case FileDialog::checkpoint_load:
      case FileDialog::checkpoint_evaluate:
        browser_.reset(FileBrowser::Mode::folder, here, {});
        break;
    }
    ImGui::OpenPopup(k_dialogs[int(dialog_)].title);
  }
  const Dialog& d = k_dialogs[int(dialog_)];
  if (!ImGui::BeginPopupModal(d.title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  if (dialog_ == FileDialog::save_as && !save_as_active_) {  // a script answered
    ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    return;
  }
  if (dialog_ == FileDialog::checkpoint_save || dialog_ == FileDialog::checkpoint_load ||
      dialog_ == FileDialog::checkpoint_evaluate)
    ImGui::TextDisabled("the folder of checkpoint.adjck, as adjoint optimize --checkpoint-dir and --resume use it");
  if (dialog_ == FileDialog::media)
    ImGui::TextDisabled("Ctrl+P screenshots and Ctrl+R recordings go here (now: %s)", media_folder().c_str());
  std::optional<std::string> chosen = browser_.draw(d.id, d.action, recent_files, ui_items);
  if (dialog_ == FileDialog::save_as && after_save_ != Pending::none) {
    const char* then = after_save_ == Pending::quit   ? "quits"
                       : after_save_ == Pending::open ? "opens the file"
                                                      : "starts a new scene";
    ImGui::TextDisabled("then the editor %s", then);
  }
  const bool cancel = ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
  ui_items.note(std::string(d.id) + "/Cancel");
  if (chosen || cancel) {
    browse_dir_ = browser_.folder();
    ImGui::CloseCurrentPopup();
  }
  if (chosen) {
    switch (dialog_) {
      case FileDialog::open:
        request(Pending::open, *chosen);
        break;
      case FileDialog::save_as:
        answer_save_as(*chosen);
        break;
      case FileDialog::import_obj:
        import_obj(*chosen);
        break;
      case FileDialog::media:
        media_dir = *chosen;
        message(Severity::info, "screenshots and recordings go to " + media_folder());
        break;
      case FileDialog::import_robot:
        import_robot(*this, *chosen);
        break;
      case FileDialog::checkpoint_save:
        save_checkpoint(*chosen);
        break;
      case FileDialog::checkpoint_load:
        continue_from_checkpoint(*chosen);
        break;
      case FileDialog::checkpoint_evaluate:
        evaluate_checkpoint(*chosen);
        break;
    }
  } else if (cancel && dialog_ == FileDialog::save_as) {
    answer_save_as("");
  }
  ImGui::EndPopup();
}

}  // namespace adj::editor
