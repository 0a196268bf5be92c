#pragma once
// The editor's file browser (Dear ImGui): Open, Save As, Import and the recordings folder.
// It lists a folder's subfolders and the files with the wanted extensions, the recent
// files, and a path field; the action button, Enter and a double click on a file all take
// the path in the field (a relative path is relative to the folder shown, "~" is the home
// folder). A path that names a folder opens that folder instead.
#include <optional>
#include <string>
#include <vector>

namespace adj::editor {

struct UiItems;

class FileBrowser {
 public:
  enum class Mode {
    open,   // an existing file
    save,   // a file name; without an extension it gets the first wanted one
    folder  // a folder (the one shown when the field is empty; a new name in an existing folder is made)
  };
  // shows `start` (a folder; a file: its folder, its name in the field when saving; empty:
  // the current folder). `extensions` with their dot (".json"); empty: every file
  void reset(Mode mode, const std::string& start, std::vector<std::string> extensions);
  // the browser inside a popup the caller began: the chosen path once (absolute), else
  // nothing. `action` labels the button ("Open", "Save"); its rect goes to `items` under
  // `id`/`action`, the path field's under `id`/path
  std::optional<std::string> draw(const char* id, const char* action, const std::vector<std::string>& recent,
                                  UiItems& items);
  const std::string& folder() const { return dir_; }
  std::string typed;  // the path field
  std::string error;  // why the last choice was refused, shown under the field

 private:
  std::optional<std::string> choose(const std::string& path);  // checks, then the chosen path
  void enter(const std::string& dir);                          // show this folder
  bool wanted(const std::string& name) const;
  Mode mode_ = Mode::open;
  std::string dir_;
  std::vector<std::string> ext_;
  std::vector<std::string> dirs_, files_;  // the folder's entries, sorted
  bool focus_ = false;                     // the field takes the keyboard on the next draw
};

// the absolute path `typed` names, seen from `dir`: "~" expanded, relative paths joined
std::string resolve_path(const std::string& dir, const std::string& typed);

}  // namespace adj::editor
