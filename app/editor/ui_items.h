#pragma once
// Where named widgets were drawn in the last frame (the buttons of the file dialogs, ...),
// so that a script clicks them with the mouse as a person would (script `click-ui NAME`).
// Cleared at the start of every frame: a widget not drawn cannot be clicked.
#include <array>
#include <map>
#include <string>

#include <imgui.h>

namespace adj::editor {

struct UiItems {
  std::map<std::string, std::array<float, 4>> rects;    // name -> x0, y0, x1, y1 [px]
  std::map<std::string, std::array<float, 4>> windows;  // name -> its window's x0, y0, x1, y1 [px]
  // the ImGui item drawn last, under `name`
  void note(const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    rects[name] = {a.x, a.y, b.x, b.y};
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    windows[name] = {p.x, p.y, p.x + s.x, p.y + s.y};
  }
  // drawn whole inside its window (nothing to scroll to)
  bool inside(const std::string& name) const {
    auto r = rects.find(name);
    if (r == rects.end()) return false;
    const auto& a = r->second;
    const auto& w = windows.at(name);
    return a[0] >= w[0] && a[1] >= w[1] && a[2] <= w[2] && a[3] <= w[3];
  }
  void clear() { rects.clear(), windows.clear(); }
};

}  // namespace adj::editor
