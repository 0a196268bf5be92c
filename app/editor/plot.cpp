#include "app/editor/plot.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

namespace adj::editor {

int plot_series(const char* label, const std::vector<double>& values, bool log, float height, const char* x_unit,
                PlotGeometry* geometry) {
  if (values.empty()) {  // the plot's room, so that nothing moves when the data comes
    ImGui::TextDisabled("%s: no data yet", label);
    ImGui::Dummy(ImVec2(ImGui::GetContentRegionAvail().x, height + ImGui::GetTextLineHeight()));
    return -1;
  }
  double lo = DBL_MAX, hi = -DBL_MAX;
  for (double x : values)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  log = log && lo > 0;
  auto tr = [&](double v) { return log ? std::log10(v) : v; };
  double ylo = tr(lo), yhi = tr(hi);
  if (!(yhi > ylo)) ylo -= 0.5, yhi += 0.5;
  // the title and the last value above the frame, not over the curve
  ImGui::Text("%s %.4g", label, values.back());
  ImGui::SameLine();
  ImGui::TextDisabled("per %s, %s[%.3g .. %.3g]", x_unit, log ? "log scale " : "", lo, hi);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float ticks_h = ImGui::GetTextLineHeight();
  ImGui::InvisibleButton(label, ImVec2(w, height + ticks_h));
  // y ticks in the values' units: whole decades (1e-3) when a log scale spans one or more,
  // else a few round values (placed on the log scale when it is one); the frame starts right of
  // the widest label
  char buf[32];
  std::vector<double> ticks;  // real values
  std::vector<std::string> labels;
  if (log && yhi - ylo >= 1) {
    const double step = std::max(1.0, std::ceil((yhi - ylo) / 3));
    for (double t = std::ceil(ylo / step) * step; t <= yhi + 1e-9; t += step) ticks.push_back(std::pow(10.0, t));
  } else {
    const double rlo = log ? lo : ylo, rhi = log ? hi : yhi, raw = (rhi - rlo) / 2;
    const double mag = std::pow(10.0, std::floor(std::log10(raw > 0 ? raw : 1.0)));
    const double step = raw / mag >= 5 ? 5 * mag : raw / mag >= 2 ? 2 * mag : mag;
    for (double t = std::ceil(rlo / step) * step; t <= rhi + step * 1e-9; t += step) ticks.push_back(t);
  }
  float label_w = 0;
  for (double t : ticks) {
    if (log && yhi - ylo >= 1)
      std::snprintf(buf, sizeof buf, "1e%d", int(std::lround(std::log10(t))));
    else
      std::snprintf(buf, sizeof buf, "%.3g", t);
    labels.emplace_back(buf);
    label_w = std::max(label_w, ImGui::CalcTextSize(buf).x);
  }
  PlotGeometry g{o.x + std::max(40.0f, label_w + 6), o.x + w - 6, o.y + 2, o.y + height, int(values.size())};
  if (geometry) *geometry = g;
  const ImU32 frame = ImGui::GetColorU32(ImGuiCol_FrameBg), ink = ImGui::GetColorU32(ImGuiCol_TextDisabled),
              line = ImGui::GetColorU32(ImGuiCol_PlotLines);
  dl->AddRectFilled(ImVec2(g.x0, g.y0), ImVec2(g.x1, g.y1), frame);
  auto Y = [&](double v) { return float(g.y1 - (tr(v) - ylo) / (yhi - ylo) * (g.y1 - g.y0)); };
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    const double t = ticks[k];
    if (log && !(t > 0)) continue;
    const float y = Y(t);
    if (y < g.y0 - 1 || y > g.y1 + 1) continue;
    dl->AddLine(ImVec2(g.x0, y), ImVec2(g.x1, y), IM_COL32(255, 255, 255, 28));
    const char* text = labels[k].c_str();
    dl->AddText(ImVec2(g.x0 - ImGui::CalcTextSize(text).x - 3, y - ticks_h * 0.5f), ink, text);
  }
  // x ticks: the first, the middle and the last index
  const int n = g.n;
  for (int i : {0, (n - 1) / 2, n - 1}) {
    std::snprintf(buf, sizeof buf, "%d", i);
    dl->AddText(ImVec2(g.x_of(i) - ImGui::CalcTextSize(buf).x * 0.5f, g.y1 + 1), ink, buf);
  }
  for (int i = 0; i + 1 < n; ++i)
    if (std::isfinite(values[size_t(i)]) && std::isfinite(values[size_t(i + 1)]) &&
        (!log || (values[size_t(i)] > 0 && values[size_t(i + 1)] > 0)))
      dl->AddLine(ImVec2(g.x_of(i), Y(values[size_t(i)])), ImVec2(g.x_of(i + 1), Y(values[size_t(i + 1)])), line, 1.5f);
  int hovered = -1;
  if (ImGui::IsItemHovered()) {
    hovered = std::clamp(
        int(std::lround((ImGui::GetIO().MousePos.x - g.x0) / std::max(g.x1 - g.x0, 1.0f) * float(n - 1))), 0, n - 1);
    dl->AddLine(ImVec2(g.x_of(hovered), g.y0), ImVec2(g.x_of(hovered), g.y1), ink);
  }
  return hovered;
}

}  // namespace adj::editor
