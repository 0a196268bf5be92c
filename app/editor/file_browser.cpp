#include "app/editor/file_browser.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <imgui.h>

#include "app/editor/ui_items.h"

namespace adj::editor {

namespace fs = std::filesystem;

std::string resolve_path(const std::string& dir, const std::string& typed) {
  if (typed.empty()) return dir;
  fs::path p(typed);
  const char* home = std::getenv("HOME");
  if (home && (typed == "~" || typed.starts_with("~/")))
    p = fs::path(home) / typed.substr(std::min<size_t>(2, typed.size()));
  if (p.is_relative()) p = fs::path(dir) / p;
  return p.lexically_normal().string();
}

void FileBrowser::reset(Mode mode, const std::string& start, std::vector<std::string> extensions) {
  mode_ = mode;
  ext_ = std::move(extensions);
  typed.clear();
  error.clear();
  focus_ = true;
  std::error_code ec;
  fs::path s = start.empty() ? fs::current_path(ec) : fs::absolute(start, ec);
  if (!start.empty() && !fs::is_directory(s, ec)) {
    if (mode == Mode::save) typed = s.filename().string();
    s = s.parent_path();
  }
  enter(fs::is_directory(s, ec) ? s.string() : fs::current_path(ec).string());
}

bool FileBrowser::wanted(const std::string& name) const {
  if (ext_.empty()) return true;
  std::string e = fs::path(name).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return std::find(ext_.begin(), ext_.end(), e) != ext_.end();
}

void FileBrowser::enter(const std::string& dir) {
  dir_ = fs::path(dir).lexically_normal().string();
  if (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  dirs_.clear();
  files_.clear();
  std::error_code ec;
  for (fs::directory_iterator it(dir_, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) continue;  // hidden, as file managers do
    std::error_code e2;
    if (it->is_directory(e2))
      dirs_.push_back(name);
    else if (mode_ != Mode::folder && wanted(name))
      files_.push_back(name);
  }
  if (ec) error = "cannot list " + dir_ + ": " + ec.message();
  std::sort(dirs_.begin(), dirs_.end());
  std::sort(files_.begin(), files_.end());
}

std::optional<std::string> FileBrowser::choose(const std::string& typed_path) {
  error.clear();
  std::string p = resolve_path(dir_, typed_path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (mode_ == Mode::folder) return p;
    enter(p);  // a folder: show it
    typed.clear();
    return std::nullopt;
  }
  switch (mode_) {
    case Mode::open:
      if (!fs::exists(p, ec)) {
        error = "no such file: " + p;
        return std::nullopt;
      }
      return p;
    case Mode::save:
      if (fs::path(p).filename().empty() || typed_path.empty()) {
        error = "type a file name";
        return std::nullopt;
      }
      if (!fs::path(p).has_extension() && !ext_.empty()) p += ext_.front();
      if (!fs::is_directory(fs::path(p).parent_path(), ec)) {
        error = "no folder " + fs::path(p).parent_path().string();
        return std::nullopt;
      }
      return p;
    case Mode::folder:  // a new folder in an existing one is made
      if (fs::is_directory(fs::path(p).parent_path(), ec) && fs::create_directory(p, ec)) return p;
      error = "cannot make the folder " + p + (ec ? ": " + ec.message() : "");
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> FileBrowser::draw(const char* id, const char* action, const std::vector<std::string>& recent,
                                             UiItems& items) {
  std::optional<std::string> chosen;
  const std::string key = id;
  ImGui::PushID(id);
  // the folder shown, with its parent one click away
  if (ImGui::Button("Up")) enter(fs::path(dir_).parent_path().string());
  items.note(key + "/up");
  ImGui::SameLine();
  ImGui::TextUnformatted(dir_.c_str());
  if (!ext_.empty()) {
    std::string filter = "showing";
    for (const std::string& e : ext_) filter += " *" + e;
    ImGui::SameLine();
    ImGui::TextDisabled("(%s)", filter.c_str());
  }
  // the folder's entries; recent files beside them
  const float list_h = 260.0f;
  ImGui::BeginChild("entries", ImVec2(380, list_h), true);
  std::string into;  // a folder clicked: entered after the loop
  for (const std::string& d : dirs_) {
    if (ImGui::Selectable((d + "/").c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) into = d;
    items.note(key + "/entry/" + d);
  }
  for (const std::string& f : files_) {
    if (ImGui::Selectable(f.c_str(), typed == f, ImGuiSelectableFlags_AllowDoubleClick)) {
      typed = f;
      error.clear();
      if (ImGui::IsMouseDoubleClicked(0)) chosen = choose(f);
    }
    items.note(key + "/entry/" + f);
  }
  if (dirs_.empty() && files_.empty()) ImGui::TextDisabled(mode_ == Mode::folder ? "no folders here" : "no files here");
  ImGui::EndChild();
  if (!into.empty()) enter((fs::path(dir_) / into).string());
  ImGui::SameLine();
  ImGui::BeginChild("recent", ImVec2(260, list_h), true);
  ImGui::TextDisabled("Recent");
  int shown = 0;
  for (const std::string& r : recent) {
    if (mode_ == Mode::folder || !wanted(r)) continue;
    ++shown;
    if (ImGui::Selectable(fs::path(r).filename().string().c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
      typed = r;
      error.clear();
      if (ImGui::IsMouseDoubleClicked(0)) chosen = choose(r);
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.c_str());
  }
  if (shown == 0) ImGui::TextDisabled("none yet");
  ImGui::EndChild();
  // the path field: what the button and Enter take, typed or picked above
  ImGui::SetNextItemWidth(540);
  if (focus_) ImGui::SetKeyboardFocusHere();
  focus_ = false;
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", typed.c_str());
  if (ImGui::InputText("##path", buf, sizeof buf, ImGuiInputTextFlags_AutoSelectAll)) {
    typed = buf;
    error.clear();
  }
  items.note(key + "/path");
  const bool enter_pressed =
      ImGui::IsItemDeactivated() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter)));
  ImGui::SameLine();
  const bool clicked = ImGui::Button(action, ImVec2(80, 0));
  items.note(key + "/" + action);
  if (clicked || enter_pressed) chosen = choose(typed);
  if (!error.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", error.c_str());
  ImGui::PopID();
  return chosen;
}

}  // namespace adj::editor
