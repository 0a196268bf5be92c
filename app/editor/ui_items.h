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
  std::map<std::string, std::array<float, 4>> rects;  // name -> x0, y0, x1, y1 [px]
  // the ImGui item drawn last, under `name`
  void note(const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    rects[name] = {a.x, a.y, b.x, b.y};
  }
};

}  // namespace adj::editor
