#include "app/editor/landscape_ui.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"
#include "app/landscape_plot.h"
#include "engine/optim/task.h"

namespace adj::editor {

namespace {

ImU32 rgb(std::uint32_t c) { return IM_COL32((c >> 16) & 255, (c >> 8) & 255, c & 255, 255); }
// the colours of `adjoint landscape`'s PNG (app/landscape_plot.h)
ImU32 curve_colour(int c) { return rgb(app::landscape_colour(c)); }
ImU32 heat(double t) { return rgb(app::landscape_heat(t)); }

// the task the panel looks at (the Optimization panel's)
const scene::Task* panel_task(const Editor& e) {
  const auto& tasks = e.doc.scene().tasks;
  if (tasks.empty()) return nullptr;
  return &tasks[size_t(std::clamp(e.task_index, 0, int(tasks.size()) - 1))];
}

// the 1D plot; returns the curve and point under the mouse (-1 when none)
std::pair<int, int> plot_curves(const optim::Landscape& l, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, left = 56, bottom = 34;
  const ImVec2 p0(origin.x + left, origin.y + 6), p1(origin.x + w - 8, origin.y + height - bottom);
  ImGui::InvisibleButton("##landscape_plot", ImVec2(w, height));
  const bool hovered = ImGui::IsItemHovered();
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : l.curves)
    for (double v : c.loss)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) return {-1, -1};
  const bool log = lo > 0 && hi / lo > 100;
  auto tr = [&](double v) { return log ? std::log10(v) : v; };
  double ylo = tr(lo), yhi = tr(hi);
  const double pad = yhi > ylo ? 0.06 * (yhi - ylo) : 0.1 * std::abs(yhi) + 1e-9;
  ylo -= pad, yhi += pad;
  const double slo = l.s.front(), shi = l.s.back();
  auto X = [&](double s) { return float(p0.x + (s - slo) / (shi - slo) * (p1.x - p0.x)); };
  auto Y = [&](double v) { return float(p1.y - (tr(v) - ylo) / (yhi - ylo) * (p1.y - p0.y)); };
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  char buf[64];
  for (double t : app::nice_ticks(slo, shi, 6)) {
    dl->AddLine(ImVec2(X(t), p0.y), ImVec2(X(t), p1.y), grid);
    std::snprintf(buf, sizeof buf, "%.3g", t);
    dl->AddText(ImVec2(X(t) - ImGui::CalcTextSize(buf).x / 2, p1.y + 3), ink, buf);
  }
  for (double t : app::nice_ticks(ylo, yhi, 4)) {
    const float y = float(p1.y - (t - ylo) / (yhi - ylo) * (p1.y - p0.y));
    dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), grid);
    std::snprintf(buf, sizeof buf, log ? "1e%.3g" : "%.3g", t);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(buf).x - 4, y - 7), ink, buf);
  }
  dl->AddRect(p0, p1, ink);
  std::snprintf(buf, sizeof buf, "s along %s%s", l.direction.c_str(), log ? "   (loss: log10 scale)" : "");
  dl->AddText(ImVec2(p0.x, p1.y + 17), ink, buf);
  dl->PushClipRect(p0, p1, true);
  std::pair<int, int> hit{-1, -1};
  float best = 64;  // squared pixels
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int c = int(l.curves.size()) - 1; c >= 0; --c) {
    const optim::LandscapeCurve& cu = l.curves[size_t(c)];
    for (size_t k = 0; k + 1 < l.s.size(); ++k)
      if (std::isfinite(cu.loss[k]) && std::isfinite(cu.loss[k + 1]))
        dl->AddLine(ImVec2(X(l.s[k]), Y(cu.loss[k])), ImVec2(X(l.s[k + 1]), Y(cu.loss[k + 1])), curve_colour(c),
                    c == 0 ? 2.5f : 1.5f);
    for (size_t k = 0; k < l.s.size(); ++k) {
      if (!std::isfinite(cu.loss[k])) continue;
      const ImVec2 p(X(l.s[k]), Y(cu.loss[k]));
      const float d2 = (p.x - mouse.x) * (p.x - mouse.x) + (p.y - mouse.y) * (p.y - mouse.y);
      if (hovered && d2 < best) best = d2, hit = {c, int(k)};
    }
    // the analytic tangent at the centre, dashed, over half the span
    if (std::isfinite(cu.slope) && (!log || cu.centre_loss > 0)) {
      const double half = 0.25 * (shi - slo);
      for (int i = 0; i < 12; i += 2) {
        const double a = -half + 2 * half * i / 12, b = -half + 2 * half * (i + 1) / 12;
        const double va = cu.centre_loss + cu.slope * a, vb = cu.centre_loss + cu.slope * b;
        if (!log || (va > 0 && vb > 0)) dl->AddLine(ImVec2(X(a), Y(va)), ImVec2(X(b), Y(vb)), curve_colour(c), 1.5f);
      }
    }
  }
  if (hit.first >= 0) {
    const optim::LandscapeCurve& cu = l.curves[size_t(hit.first)];
    const ImVec2 p(X(l.s[size_t(hit.second)]), Y(cu.loss[size_t(hit.second)]));
    dl->AddCircle(p, 5, ink, 12, 2);
    ImGui::SetTooltip("%s\ns = %.4g, loss = %.6g\nclick: load these parameters", cu.label.c_str(),
                      l.s[size_t(hit.second)], cu.loss[size_t(hit.second)]);
  }
  dl->PopClipRect();
  return hit;
}

// the 2D slice as a heat map; returns the cell (i, j) under the mouse
std::pair<int, int> plot_heat(const optim::Landscape& l, float size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##landscape_heat", ImVec2(size, size));
  const bool hovered = ImGui::IsItemHovered();
  const int g = l.grid;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : l.loss2d)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  const float cell = size / float(g);
  std::pair<int, int> hit{-1, -1};
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int j = 0; j < g; ++j)
    for (int i = 0; i < g; ++i) {
      const double v = l.loss2d[size_t(j * g + i)];
      const ImVec2 a(p0.x + cell * float(i), p0.y + size - cell * float(j + 1)), b(a.x + cell, a.y + cell);
      dl->AddRectFilled(a, b,
                        std::isfinite(v) ? heat((v - lo) / std::max(hi - lo, 1e-300)) : IM_COL32(255, 0, 255, 255));
      if (hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hit = {i, j};
    }
  // contour lines: cell edges where the loss crosses one of 10 levels
  auto band = [&](int i, int j) {
    const double v = l.loss2d[size_t(j * g + i)];
    return std::isfinite(v) ? int(std::floor((v - lo) / std::max(hi - lo, 1e-300) * 10)) : -1;
  };
  const ImU32 contour = IM_COL32(255, 255, 255, 170);
  for (int j = 0; j < g; ++j)
    for (int i = 0; i < g; ++i) {
      const float x = p0.x + cell * float(i + 1), y = p0.y + size - cell * float(j + 1);
      if (i + 1 < g && band(i, j) != band(i + 1, j)) dl->AddLine(ImVec2(x, y), ImVec2(x, y + cell), contour, 1.5f);
      if (j + 1 < g && band(i, j) != band(i, j + 1)) dl->AddLine(ImVec2(x - cell, y), ImVec2(x, y), contour, 1.5f);
    }
  // axes: the offsets at the ends and the centre, both directions
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", l.s2.front());
  dl->AddText(ImVec2(p0.x, p0.y + size + 2), ink, buf);
  std::snprintf(buf, sizeof buf, "%.3g", l.s2.back());
  dl->AddText(ImVec2(p0.x + size - ImGui::CalcTextSize(buf).x, p0.y + size + 2), ink, buf);
  dl->AddText(ImVec2(p0.x + size / 2 - 3, p0.y + size + 2), ink, "0");
  dl->AddRect(p0, ImVec2(p0.x + size, p0.y + size), ink);
  ImGui::Dummy(ImVec2(size, ImGui::GetTextLineHeight()));
  const double gl = std::hypot(l.grad_d, l.grad_d2);
  const ImVec2 c(p0.x + size / 2, p0.y + size / 2);
  if (gl > 0) {
    const ImVec2 e(c.x + float(l.grad_d / gl) * size / 4, c.y - float(l.grad_d2 / gl) * size / 4);
    dl->AddLine(c, e, IM_COL32(255, 255, 255, 255), 3);
    dl->AddCircleFilled(e, 4, IM_COL32(255, 255, 255, 255));
  }
  if (hit.first >= 0) {
    const double v = l.loss2d[size_t(hit.second * g + hit.first)];
    ImGui::SetTooltip("s = %.4g along %s\ns2 = %.4g along %s\nloss = %.6g\nclick: load these parameters",
                      l.s2[size_t(hit.first)], l.direction.c_str(), l.s2[size_t(hit.second)], l.direction2.c_str(), v);
  }
  return hit;
}

}  // namespace

Status start_landscape(Editor& e) {
  LandscapeUi& ui = e.landscape;
  const scene::Task* task = panel_task(e);
  if (!task) return Status::error("the scene has no task: the Optimization panel's New makes one");
  optim::LandscapeOptions o;
  o.direction = ui.direction == 0   ? optim::SliceDirection::gradient
                : ui.direction == 1 ? optim::SliceDirection::random
                                    : optim::SliceDirection::parameter;
  o.parameter = ui.parameter;
  o.span = ui.span;
  o.points = ui.points | 1;
  o.grid = ui.grid;
  o.stats_samples = ui.stats;
  o.seed = std::uint64_t(std::max(0, ui.seed));
  o.threads = std::max(1, int(std::thread::hardware_concurrency()) - 1);  // a core for the UI
  std::stringstream list(ui.sweep);
  for (std::string v; std::getline(list, v, ',');) {
    v.erase(0, v.find_first_not_of(' '));
    if (v.empty()) continue;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (*end != '\0' && *end != ' ') return Status::error("sweep: \"" + v + "\" is not a number");
    o.sweep.push_back({optim::ContactKnob(ui.knob), x});
  }
  // the centre: this task's running optimization's parameters, else its start
  if (e.snap.opt_task == task->name && e.opt_fits() && !e.snap.theta.empty())
    o.theta.assign(e.snap.theta.begin(), e.snap.theta.end());
  ui.job.start(e.doc.scene(), e.doc.base_dir(), task->name, o, e.doc.revision());
  return Status::ok();
}

bool load_landscape_point(Editor& e, int curve, int k, int j) {
  const LandscapeJob::View v = e.landscape.job.view();
  const optim::Landscape* l = v.result.get();
  const scene::Task* task = l ? e.doc.scene().find_task(l->task) : nullptr;
  if (!l || !task || !e.compiled()) {
    e.message(Severity::warning, "no landscape to load a point from: Run one first");
    return false;
  }
  const bool plane = j >= 0;
  if (plane ? (l->grid < 1 || k < 0 || k >= l->grid || j >= l->grid)
            : (curve < 0 || curve >= int(l->curves.size()) || k < 0 || k >= int(l->s.size()))) {
    e.message(Severity::warning, "the landscape has no such point");
    return false;
  }
  auto made = optim::make_task(*e.compiled(), *task);
  if (!made) {
    e.message(Severity::error, made.status().message());
    return false;
  }
  const double s = plane ? l->s2[size_t(k)] : l->s[size_t(k)], s2 = plane ? l->s2[size_t(j)] : 0.0;
  std::vector<float> theta(l->theta.size());
  for (size_t i = 0; i < theta.size(); ++i) theta[i] = float(l->theta[i] + s * l->d[i] + (plane ? s2 * l->d2[i] : 0.0));
  for (const optim::ParamBlock& b : (*made)->blocks())  // as the landscape evaluated it
    for (int i = b.offset; i < b.offset + b.count; ++i)
      theta[size_t(i)] = float(std::clamp(double(theta[size_t(i)]), optim::entry_lower(b, i - b.offset),
                                          optim::entry_upper(b, i - b.offset)));
  Snapshot as_optimized;  // what Apply writes: the task's blocks at these parameters
  as_optimized.opt_task = task->name;
  as_optimized.blocks = (*made)->blocks();
  scene::Scene doc = e.doc.scene();
  const optim::LandscapeCurve* cu = plane ? nullptr : &l->curves[size_t(curve)];
  if (cu && cu->swept) doc = optim::with_contact_setting(std::move(doc), cu->setting);
  for (const std::string& n : apply_optimization(as_optimized, theta, *e.compiled(), doc))
    e.message(Severity::warning, n);
  char text[256];
  const double loss = plane ? l->loss2d[size_t(j * l->grid + k)] : cu->loss[size_t(k)];
  if (plane)
    std::snprintf(text, sizeof text, "loaded the landscape's point s = %.4g, s2 = %.4g (loss %.6g); Ctrl+Z undoes", s,
                  s2, loss);
  else
    std::snprintf(text, sizeof text, "loaded the landscape's point s = %.4g on \"%s\" (loss %.6g); Ctrl+Z undoes", s,
                  cu->label.c_str(), loss);
  if (doc == e.doc.scene()) {
    e.message(Severity::info, "the scene already holds the parameters of that point");
    return false;
  }
  e.doc.replace(std::move(doc), "Load landscape point");
  e.message(Severity::info, text);
  return true;
}

void draw_landscape_panel(Editor& e) {
  LandscapeUi& ui = e.landscape;
  if (!ui.open) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  // in the viewport between the side columns, as tall as the window allows
  const float w = std::min(640.0f, vp->Size.x * 0.5f), h = std::min(640.0f, vp->Size.y - 60.0f);
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + (vp->Size.x - w) * 0.5f, vp->Pos.y + 30.0f), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Landscape", &ui.open)) return ImGui::End();
  const scene::Task* task = panel_task(e);
  if (!task) {
    ImGui::TextWrapped("The loss landscape is a task's: make one in the Optimization panel first.");
    return ImGui::End();
  }
  ImGui::Text("task '%s' (the Optimization panel's)", task->name.c_str());
  ImGui::SetNextItemWidth(160);
  ImGui::Combo("direction", &ui.direction, "gradient\0random\0one parameter\0");
  if (ui.direction == 2) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    ImGui::InputInt("entry", &ui.parameter);
    ui.parameter = std::max(0, ui.parameter);
  }
  ImGui::SetNextItemWidth(100);
  ImGui::InputFloat("span (0: auto)", &ui.span, 0, 0, "%.3g");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("points", &ui.points, 2);
  ui.points = std::clamp(ui.points | 1, 3, 401);
  ImGui::SetNextItemWidth(70);
  ImGui::Combo(
      "sweep", &ui.knob,
      [](void*, int i, const char** out) {
        *out = optim::to_string(optim::ContactKnob(i));
        return true;
      },
      nullptr, int(optim::ContactKnob::eps) + 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(200);
  ImGui::InputTextWithHint("values", "e.g. 1e3, 1e5", ui.sweep, sizeof ui.sweep);
  int grid_choice = ui.grid == 0 ? 0 : ui.grid == 11 ? 1 : 2;
  ImGui::SetNextItemWidth(80);
  if (ImGui::Combo("2D slice", &grid_choice,
                   "off\0"
                   "11x11\0"
                   "21x21\0"))
    ui.grid = grid_choice == 0 ? 0 : grid_choice == 1 ? 11 : 21;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  ImGui::InputInt("statistics pairs", &ui.stats, 16);
  ui.stats = std::clamp(ui.stats, 0, 4096);

  const LandscapeJob::View v = ui.job.view();
  if (v.running) {
    ImGui::ProgressBar(v.total > 0 ? float(v.done) / float(v.total) : 0.0f, ImVec2(-90, 0));
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ui.job.cancel();
  } else if (ImGui::Button("Run")) {
    if (Status st = start_landscape(e); !st) e.message(Severity::warning, st.message());
  }
  if (!v.running && !v.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.35f, 1), "%s", v.error.c_str());
  const optim::Landscape* l = v.result.get();
  if (!l) {
    ImGui::TextDisabled("Run evaluates the loss along a line through the parameters (on every core but one).");
    return ImGui::End();
  }
  if (v.generation != e.doc.revision()) ImGui::TextDisabled("computed on an earlier version of the scene");
  auto [c, k] = plot_curves(*l, 220);
  if (c >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) load_landscape_point(e, c, k);
  for (size_t i = 0; i < l->curves.size(); ++i) {
    const optim::LandscapeCurve& cu = l->curves[i];
    ImGui::ColorButton(("##c" + std::to_string(i)).c_str(), ImGui::ColorConvertU32ToFloat4(curve_colour(int(i))),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine();
    ImGui::Text("%s: slope %.4g (curve %.4g), roughness %.3g%s", cu.label.c_str(), cu.slope, cu.fd_slope,
                cu.max_second_diff, cu.failures.empty() ? "" : ", some rollouts failed");
    if (l->curves.size() > 1 && ImGui::IsItemHovered())
      ImGui::SetTooltip("final state against the stiffest setting: %.4g m RMS", cu.final_state_rms);
  }
  if (l->grid > 1) {
    auto [i, j] = plot_heat(*l, 180);
    ImGui::SameLine();
    ImGui::TextWrapped("2D slice over %s (across) and %s (up); the arrow is the gradient, uphill", l->direction.c_str(),
                       l->direction2.c_str());
    if (i >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) load_landscape_point(e, 0, i, j);
  }
  if (l->stats.samples > 0)
    ImGui::TextWrapped(
        "gradient statistics, %d pairs: analytic |mean| %.4g, zeroth-order %.4g, angle %.2f deg "
        "(noise explains %.2f); difference %.1f standard errors",
        l->stats.samples, l->stats.first_norm, l->stats.zeroth_norm, l->stats.angle_deg, l->stats.noise_angle_deg,
        l->stats.difference / std::max(l->stats.difference_stderr, 1e-300));
  ImGui::End();
}

}  // namespace adj::editor
