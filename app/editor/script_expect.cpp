// The script's expectations (script.h): `expect WHAT ...` by WHAT, else a document field;
// `expect-above` / `expect-below` on a document number. A failed one exits with 4.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"
#include "app/editor/fields.h"
#include "app/editor/script_commands.h"
#include "app/robot_path.h"
#include "engine/model/randomize.h"
#include "engine/scene/compile.h"

namespace adj::editor {

namespace {

// a loss term's field by name (kind object target step weight), as text
std::string loss_field(const scene::LossTerm& t, const std::string& field) {
  if (field == "kind") return scene::to_string(t.kind);
  if (field == "object") return t.object;
  if (field == "target") return t.target;
  if (field == "step") return std::to_string(t.step);
  if (field == "body") return t.body;
  char buf[32];
  if (field == "weight") return std::snprintf(buf, sizeof buf, "%.17g", t.weight), buf;
  if (field == "value") return std::snprintf(buf, sizeof buf, "%.17g", t.value), buf;
  for (auto [name, v] : {std::pair{"lower", t.lower},
                         {"upper", t.upper},
                         {"above", t.above},
                         {"below", t.below},
                         {"quadratic", t.quadratic}})
    if (field == name) return std::snprintf(buf, sizeof buf, "%.17g", v), buf;
  return "?";
}

// numbers compare with a relative tolerance of 1e-9, anything else as text
bool same_value(const std::string& got, const std::string& want) {
  char* end = nullptr;
  double a = std::strtod(got.c_str(), &end);
  bool a_num = !got.empty() && !*end;
  double b = std::strtod(want.c_str(), &end);
  bool b_num = !want.empty() && !*end;
  if (a_num && b_num) return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
  return got == want;
}

Status bad(ScriptCall& c, const std::string& got) {
  std::string what;
  for (size_t i = 1; i < c.w.size(); ++i) what += (i > 1 ? " " : "") + c.w[i];
  return Status::error("expected " + what + ", got " + got);
}

Status expect_int(ScriptCall& c, int got) {
  bool ok = false;
  int n = c.w.size() >= 3 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("expect " + c.w[1] + " N");
  return got == n ? Status::ok() : bad(c, std::to_string(got));
}

Status expect_text(ScriptCall& c, const std::string& got) {
  if (Status st = c.need(2); !st) return st;
  return got == c.w[2] ? Status::ok() : bad(c, got);
}

Status expect_bool(ScriptCall& c, bool got) { return expect_text(c, got ? "true" : "false"); }

const scene::Task* panel_task(ScriptCall& c) {
  const auto& tasks = c.e.doc.scene().tasks;
  return tasks.empty() ? nullptr : &tasks[size_t(std::clamp(c.e.task_index, 0, int(tasks.size()) - 1))];
}

Status ex_frame(ScriptCall& c) { return expect_int(c, c.e.snap.frame); }
Status ex_timeline(ScriptCall& c) { return expect_int(c, c.e.timeline_frame); }
// the camera looks at where the viewport shows the selection (View > Camera > Follow selection)
Status ex_camera_on_selection(ScriptCall& c) {
  auto s = c.e.shown_selection_center();
  if (!s) return expect_bool(c, false);
  const glm::vec3 d = c.e.camera.target - *s;
  return expect_bool(c, std::abs(d.x) + std::abs(d.y) + std::abs(d.z) < 1e-4f);
}
// expect hint TEXT...: the overlay hint in the viewport's status ("none" when there is none)
Status ex_hint(ScriptCall& c) {
  const std::string h = c.e.overlay_hint(), want = c.rest(2);
  if ((h.empty() && want == "none") || h == want) return Status::ok();
  return Status::error("hint is \"" + h + "\"");
}
Status ex_left_panels(ScriptCall& c) {
  return expect_bool(c, c.e.panels.outliner || c.e.panels.inspector || c.e.panels.visualization);
}
// the Simulation panel shows all its rows (its last row is not cut off by the panel below)
Status ex_simulation_fits(ScriptCall& c) {
  return expect_bool(c, c.e.panels.simulation_h <= c.e.panels.simulation_window_h + 0.5f);
}
Status ex_right_panels(ScriptCall& c) {
  return expect_bool(c, c.e.panels.simulation || c.e.panels.optimization || c.e.panels.stats);
}
// the size the viewport's scene was last drawn at (0.7: a moving view on a CPU rasterizer)
Status ex_scene_scale(ScriptCall& c) {
  char got[32];
  std::snprintf(got, sizeof got, "%.2g", double(c.e.drawn_scene_scale));
  return expect_text(c, got);
}
Status ex_replay_frames(ScriptCall& c) { return expect_int(c, c.e.replay_ready() ? c.e.snap.replay.frames : 0); }
Status ex_replay_iteration(ScriptCall& c) { return expect_int(c, c.e.snap.replay.iteration); }
// where the viewport shows an object's particles now (their mean)
Result<std::vector<double>> shown_centre(ScriptCall& c, const std::string& object) {
  const scene::CompiledScene* cs = c.e.compiled();
  const scene::ObjectRange* r = cs ? cs->find(object) : nullptr;
  if (!r || r->particle_end <= r->particle_begin) return Status::error("no object with particles named " + object);
  const vec3<float> m = app::particle_centre(*r, c.e.display_state());
  return std::vector<double>{m.x, m.y, m.z};
}
// note-shown-centre OBJECT NAME: keep where the viewport shows the object now
Status cmd_note_shown_centre(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  auto m = shown_centre(c, c.w[1]);
  if (!m) return m.status();
  c.notes()[c.w[2]] = *m;
  return Status::ok();
}
// expect shown-centre OBJECT X Y Z TOL, or OBJECT noted NAME TOL (what note-shown-centre kept)
Status ex_shown_centre(ScriptCall& c) {
  const bool noted = c.w.size() == 6 && c.w[3] == "noted";
  if (c.w.size() < 7 && !noted) return Status::error("expect shown-centre OBJECT X Y Z TOL | OBJECT noted NAME TOL");
  auto m = shown_centre(c, c.w[2]);
  if (!m) return m.status();
  std::vector<double> want(3);
  if (noted) {
    auto it = c.notes().find(c.w[4]);
    if (it == c.notes().end()) return Status::error("nothing noted as " + c.w[4]);
    want = it->second;
  } else {
    for (int k = 0; k < 3; ++k) want[size_t(k)] = std::atof(c.w[size_t(3 + k)].c_str());
  }
  const double tol = std::atof(c.w.back().c_str());
  for (int k = 0; k < 3; ++k)
    if (!(std::abs((*m)[size_t(k)] - want[size_t(k)]) <= tol)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "shown at (%.9g, %.9g, %.9g), expected (%.9g, %.9g, %.9g)", (*m)[0], (*m)[1],
                    (*m)[2], want[0], want[1], want[2]);
      return Status::error(buf);
    }
  return Status::ok();
}
// expect shown-moved OBJECT NAME TOL BOOL: whether the object is shown farther than TOL from
// where note-shown-centre noted it
Status ex_shown_moved(ScriptCall& c) {
  if (Status st = c.need(5); !st) return st;
  auto m = shown_centre(c, c.w[2]);
  if (!m) return m.status();
  auto it = c.notes().find(c.w[3]);
  if (it == c.notes().end()) return Status::error("nothing noted as " + c.w[3]);
  double d2 = 0;
  for (int k = 0; k < 3; ++k)
    d2 += ((*m)[size_t(k)] - it->second[size_t(k)]) * ((*m)[size_t(k)] - it->second[size_t(k)]);
  const bool moved = std::sqrt(d2) > std::atof(c.w[4].c_str());
  return moved == (c.w[5] == "true") ? Status::ok()
                                     : bad(c, moved ? "moved " + std::to_string(std::sqrt(d2)) : "not moved");
}
Status ex_ghosts(ScriptCall& c) { return expect_int(c, int(c.e.snap.ghost_paths.size())); }
Status ex_ghosts_above(ScriptCall& c) {  // more ghost paths than N (an attached run's count depends on timing)
  if (Status st = c.need(2); !st) return st;
  const int got = int(c.e.snap.ghost_paths.size());
  return got > std::atoi(c.w[2].c_str()) ? Status::ok() : bad(c, std::to_string(got));
}
// PODS's pair of paths (policy, improved actions) with at least 2 points each; 0 otherwise
Status ex_pull_paths(ScriptCall& c) {
  int n = 0;
  for (const auto& p : c.e.snap.pull_paths) n += p.size() >= 2;
  return expect_int(c, n);
}
Status ex_objects(ScriptCall& c) { return expect_int(c, int(c.e.doc.scene().objects.size())); }
Status ex_undo(ScriptCall& c) { return expect_int(c, int(c.e.doc.undo_count())); }
Status ex_tasks(ScriptCall& c) { return expect_int(c, int(c.e.doc.scene().tasks.size())); }
Status ex_iterations(ScriptCall& c) { return expect_int(c, int(c.e.snap.loss.size())); }  // the loss plot's points
Status ex_task_values(ScriptCall& c) {  // parameters whose values the panel's task keeps (Apply)
  const scene::Task* t = panel_task(c);
  return expect_int(c, t ? int(t->values.size()) : 0);
}
Status ex_parameters(ScriptCall& c) {
  const scene::Task* t = panel_task(c);
  return expect_int(c, t ? int(t->parameters.size()) : 0);
}
Status ex_loss_terms(ScriptCall& c) {
  const scene::Task* t = panel_task(c);
  return expect_int(c, t ? int(t->loss.size()) : 0);
}

Status ex_selected(ScriptCall& c) {
  int s = c.e.selected();
  return expect_text(c, s < 0 ? "none" : c.e.doc.scene().objects[size_t(s)].name);
}
Status ex_task(ScriptCall& c) {  // the Optimization panel's task
  const scene::Task* t = panel_task(c);
  return expect_text(c, t ? t->name : "none");
}
Status ex_opt_phase(ScriptCall& c) { return expect_text(c, to_string(c.e.snap.opt_phase)); }
Status ex_save_as(ScriptCall& c) { return expect_bool(c, c.e.save_as_active()); }
Status ex_backend(ScriptCall& c) { return expect_text(c, c.e.doc.scene().settings.backend); }
Status ex_sim_backend(ScriptCall& c) { return expect_text(c, c.e.snap.backend); }
// the worlds simulated (world 0 and the copies), and how many of the copies' states differ from
// world 0's (randomized worlds drift apart; identical ones do not)
Status ex_worlds(ScriptCall& c) { return expect_text(c, std::to_string(c.e.snap.world_states.size() + 1)); }
// expect inspected K [TEXT]: the inspected world is K, and its factors' description contains TEXT
Status ex_inspected(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const std::uint64_t seed = c.e.doc.scene().tasks.empty() ? 0 : c.e.doc.scene().tasks.front().seed;
  const std::string text = c.e.compiled() ? describe_world(c.e.compiled()->randomize, seed, c.e.inspected_world) : "";
  const std::string got = std::to_string(c.e.inspected_world) + " " + text;
  const bool ok =
      std::to_string(c.e.inspected_world) == c.w[2] && (c.w.size() < 4 || text.find(c.rest(3)) != std::string::npos);
  return ok ? Status::ok() : bad(c, got);
}
Status ex_worlds_differing(ScriptCall& c) {
  int n = 0;
  for (const State& s : c.e.snap.world_states)
    n += s.particle_q != c.e.snap.state.particle_q || s.joint_q != c.e.snap.state.joint_q;
  return expect_text(c, std::to_string(n));
}
Status ex_path(ScriptCall& c) { return expect_text(c, c.e.doc.path().empty() ? "untitled" : c.e.doc.path()); }
// the method Start uses for the panel's task: bptt shac ahac pods1 pods2
Status ex_method(ScriptCall& c) {
  const auto& tasks = c.e.doc.scene().tasks;
  if (tasks.empty()) return bad(c, "no task");
  const OptMethod m = c.e.method_of(tasks[size_t(std::clamp(c.e.task_index, 0, int(tasks.size()) - 1))].name);
  return expect_text(c, m.shac ? (m.ahac ? "ahac" : "shac") : m.pods ? (m.order == 2 ? "pods2" : "pods1") : "bptt");
}
// the clipboard holds message N whole (0: the newest), as its copy button puts it there
Status ex_clipboard(ScriptCall& c) {
  bool ok = false;
  const int n = c.w.size() >= 4 && c.w[2] == "message" ? c.arg_int(3, &ok) : 0;
  if (!ok || n < 0 || n >= int(c.e.messages.size())) return Status::error("expect clipboard message N (0: the newest)");
  const char* got = ImGui::GetClipboardText();
  const std::string& want = c.e.messages[c.e.messages.size() - 1 - size_t(n)].text;
  return got && want == got ? Status::ok() : bad(c, got ? std::string("\"") + got + "\"" : "nothing");
}
// expect ui-inside NAME BOOL: the widget is drawn whole inside its window (no scrolling to it)
Status ex_ui_inside(ScriptCall& c) {
  if (Status st = c.need(3); !st) return st;
  if (!c.e.ui_items.rects.count(c.w[2])) return bad(c, "no widget " + c.w[2] + " drawn");
  const auto& r = c.e.ui_items.rects.at(c.w[2]);
  const auto& w = c.e.ui_items.windows.at(c.w[2]);
  char got[160];
  std::snprintf(got, sizeof got, "%s (y %.0f..%.0f in a window y %.0f..%.0f)",
                c.e.ui_items.inside(c.w[2]) ? "true" : "false", r[1], r[3], w[1], w[3]);
  return (c.w[3] == "true") == c.e.ui_items.inside(c.w[2]) ? Status::ok() : bad(c, got);
}
// expect ui-moved NAME KEY BOOL: the widget's rect against the one noted under KEY (note-ui)
Status ex_ui_moved(ScriptCall& c) {
  if (Status st = c.need(4); !st) return st;
  auto it = c.notes().find(c.w[3]);
  if (it == c.notes().end() || !c.e.ui_items.rects.count(c.w[2])) return bad(c, "nothing noted or drawn");
  const auto& r = c.e.ui_items.rects.at(c.w[2]);
  bool moved = false;
  for (size_t k = 0; k < 4; ++k) moved |= std::abs(double(r[k]) - it->second[k]) > 0.5;
  char got[160];
  std::snprintf(got, sizeof got, "%s (now %.0f %.0f %.0f %.0f, noted %.0f %.0f %.0f %.0f)", moved ? "true" : "false",
                r[0], r[1], r[2], r[3], it->second[0], it->second[1], it->second[2], it->second[3]);
  return (c.w[4] == "true") == moved ? Status::ok() : bad(c, got);
}
// expect param-bounds I LO HI [E]: the panel's task's parameter I (its lower and upper bounds;
// with E, its element E's bounds: the block's narrowed by the element's own)
Status ex_param_bounds(ScriptCall& c) {
  if (Status st = c.need(4); !st) return st;
  const auto& tasks = c.e.doc.scene().tasks;
  bool ok = false;
  const int i = c.arg_int(2, &ok);
  if (tasks.empty() || !ok) return bad(c, "no task");
  const auto& ps = tasks[size_t(std::clamp(c.e.task_index, 0, int(tasks.size()) - 1))].parameters;
  if (i < 0 || i >= int(ps.size())) return bad(c, std::to_string(ps.size()) + " parameters");
  const scene::ParamSpec& p = ps[size_t(i)];
  double lo = p.lower, hi = p.upper;
  if (c.w.size() > 5) {
    const int e = c.arg_int(5, &ok);
    const size_t n = std::max(p.lower_each.size(), p.upper_each.size());
    if (!ok || e < 0 || size_t(e) >= n) return bad(c, std::to_string(n) + " element bounds");
    if (size_t(e) < p.lower_each.size()) lo = std::max(lo, p.lower_each[size_t(e)]);
    if (size_t(e) < p.upper_each.size()) hi = std::min(hi, p.upper_each[size_t(e)]);
  }
  char got[96];
  std::snprintf(got, sizeof got, "%g %g", lo, hi);
  auto near = [](double got_v, const std::string& want) {  // inf only equals inf
    const double w = std::strtod(want.c_str(), nullptr);
    return got_v == w || std::abs(got_v - w) <= 1e-9 * std::max(1.0, std::abs(w));
  };
  return near(lo, c.w[3]) && near(hi, c.w[4]) ? Status::ok() : bad(c, got);
}
// expect shown-iteration N|best: the iteration whose rollout end the viewport shows as the optimized result
Status ex_shown_iteration(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const int shown = c.e.snap.opt_final_iteration;
  const bool ok = c.w[2] == "best" ? shown == c.e.snap.best_iteration && shown >= 0 : std::to_string(shown) == c.w[2];
  return ok ? Status::ok()
            : bad(c, std::to_string(shown) + " (best " + std::to_string(c.e.snap.best_iteration) + ", last " +
                         std::to_string(int(c.e.snap.loss.size()) - 1) + ")");
}
// the window's title (after Save As, Open, New)
Status ex_title(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const std::string title = c.e.title();
  return title == c.rest(2) ? Status::ok() : bad(c, title);
}
// a file exists (what Save, a screenshot or a recording wrote)
Status ex_file(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  std::error_code ec;
  return std::filesystem::exists(c.w[2], ec) ? Status::ok() : bad(c, "no such file");
}
Status ex_recovery_offered(ScriptCall& c) { return expect_bool(c, c.e.recovery_offered()); }
Status ex_prompt(ScriptCall& c) { return expect_bool(c, c.e.prompt_active()); }
Status ex_recording(ScriptCall& c) { return expect_bool(c, c.e.recording.active()); }
Status ex_dirty(ScriptCall& c) { return expect_bool(c, c.e.doc.dirty()); }
// the Apply button: enabled as the Optimization panel enables it
Status ex_can_apply(ScriptCall& c) {
  const Snapshot& s = c.e.snap;
  return expect_bool(c, !s.best_theta.empty() && !s.opt_shac && s.opt_phase != OptPhase::running && c.e.opt_fits());
}
Status ex_grad_check_shown(ScriptCall& c) { return expect_bool(c, !c.e.snap.grad_check_text.empty()); }
Status ex_sim_error(ScriptCall& c) {  // the simulation's error ("none" when it runs clean)
  return expect_text(c, c.e.snap.sim_error.empty() ? "none" : c.e.snap.sim_error);
}

// a sanitizer build (ADJ_SANITIZE) runs several times slower than a user's build: a frame-time
// expectation is measured and printed there but not checked (the release build's tests check it)
bool timing_unchecked(const char* what) {
#ifdef ADJ_SANITIZE
  std::printf("script: expect %s: not checked in a sanitizer build\n", what);
  return true;
#else
  (void)what;
  return false;
#endif
}

Status ex_fps_above(ScriptCall& c) {  // UI frames per second while the last wait ran (mean, and the slowest)
  bool ok = false;
  int n = c.w.size() >= 3 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("expect fps-above N");
  const auto& all = c.wait_frame_ms();
  std::vector<double> ms(all.begin() + std::min<size_t>(1, all.size()), all.end());
  if (ms.empty()) return bad(c, "no frames were measured");
  double sum = 0, worst = 0;
  for (double m : ms) sum += m, worst = std::max(worst, m);
  double fps = 1000.0 * double(ms.size()) / sum;
  std::printf("script: %zu UI frames while waiting: mean %.1f fps, slowest frame %.1f ms, %d simulation frames\n",
              ms.size(), fps, worst, c.wait_sim_frames());
  return fps > n || timing_unchecked("fps-above") ? Status::ok() : bad(c, std::to_string(fps) + " fps");
}

Status ex_slowest_frame_below(ScriptCall& c) {  // no UI frame during the last wait took this long [ms]
  bool ok = false;
  int n = c.w.size() >= 3 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("expect slowest-frame-below MS");
  const auto& ms = c.wait_frame_ms();
  double worst = 0;
  for (size_t i = 1; i < ms.size(); ++i) worst = std::max(worst, ms[i]);
  if (ms.size() < 2) return bad(c, "no frames were measured");
  return worst < n || timing_unchecked("slowest-frame-below") ? Status::ok() : bad(c, std::to_string(worst) + " ms");
}

Status ex_data_path(ScriptCall& c) {  // Stats and About: how results reach the renderer (cpu staging interop)
  if (Status st = c.need(2); !st) return st;
  const std::string got = c.e.data_path(), &w = c.w[2];
  const bool same = (w == "cpu" && got.starts_with("CPU")) ||
                    (w == "staging" && got.find("staging") != std::string::npos) ||
                    (w == "interop" && got.find("interop") != std::string::npos);
  return same ? Status::ok() : bad(c, got);
}

Status ex_loss(ScriptCall& c) {  // expect loss I FIELD VALUE
  bool ok = false;
  int i = c.w.size() >= 5 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("expect loss I FIELD VALUE");
  const scene::Task* t = panel_task(c);
  if (!t || i < 0 || i >= int(t->loss.size())) return bad(c, "no term " + c.w[2]);
  std::string got = loss_field(t->loss[size_t(i)], c.w[3]);
  return same_value(got, c.w[4]) ? Status::ok() : bad(c, got);
}

Status ex_obs_terms(ScriptCall& c) {  // expect obs-terms N: the panel's policy observation terms
  const scene::Task* t = panel_task(c);
  return expect_int(c, t ? int(t->policy.observation.size()) : 0);
}

Status ex_obs(ScriptCall& c) {  // expect obs I kind|body|object|scale VALUE
  bool ok = false;
  int i = c.w.size() >= 5 ? c.arg_int(2, &ok) : 0;
  if (!ok) return Status::error("expect obs I kind|body|object|scale VALUE");
  const scene::Task* t = panel_task(c);
  if (!t || i < 0 || i >= int(t->policy.observation.size())) return bad(c, "no term " + c.w[2]);
  const scene::ObservationTerm& o = t->policy.observation[size_t(i)];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", o.scale);
  const std::string got = c.w[3] == "kind"     ? scene::to_string(o.kind)
                          : c.w[3] == "body"   ? o.body
                          : c.w[3] == "object" ? o.object
                          : c.w[3] == "scale"  ? std::string(buf)
                                               : "?";
  return same_value(got, c.w[4]) ? Status::ok() : bad(c, got);
}

Status ex_action_map(ScriptCall& c) {  // expect action-scale|action-offset LIST|none: the panel's policy's
  if (Status st = c.need(2); !st) return st;
  const scene::Task* t = panel_task(c);
  if (!t) return bad(c, "no task");
  const std::vector<double>& v = c.w[1] == "action-scale" ? t->policy.action_scale : t->policy.action_offset;
  const std::optional<std::vector<double>> want = parse_number_list(c.w[2] == "none" ? "" : c.w[2]);
  if (!want) return Status::error("expect " + c.w[1] + ": numbers separated by commas, or none");
  bool same = want->size() == v.size();
  for (std::size_t k = 0; same && k < v.size(); ++k) same = std::abs((*want)[k] - v[k]) <= 1e-12 * std::abs(v[k]);
  return same ? Status::ok() : bad(c, v.empty() ? "none" : number_list_text(v));
}

Status ex_termination(ScriptCall& c) {  // expect termination off|OBJECT BODY HEIGHT
  if (Status st = c.need(2); !st) return st;
  const scene::Task* t = panel_task(c);
  if (!t || t->termination.object.empty()) return c.w[2] == "off" ? Status::ok() : bad(c, "off");
  if (c.w.size() < 5) return bad(c, t->termination.object);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", t->termination.height);
  const std::string got = t->termination.object + " " + t->termination.body + " " + buf;
  return c.w[2] == t->termination.object && c.w[3] == t->termination.body && same_value(buf, c.w[4]) ? Status::ok()
                                                                                                     : bad(c, got);
}

Status ex_backend_available(ScriptCall& c) {  // expect backend-available NAME BOOL (prints why not)
  if (c.w.size() < 4) return Status::error("expect backend-available NAME BOOL");
  std::string why;
  bool ok = c.e.backend_available(c.w[2], &why);
  if (!ok) std::printf("script: backend %s disabled: %s\n", c.w[2].c_str(), why.c_str());
  return (ok ? "true" : "false") == c.w[3] ? Status::ok() : bad(c, (ok ? "true" : "false: " + why));
}

Status ex_loss_decreased(ScriptCall& c) {
  const auto& l = c.e.snap.loss;
  if (l.size() < 2) return bad(c, std::to_string(l.size()) + " iterations");
  return l.back() < l.front() ? Status::ok()
                              : bad(c, "loss " + std::to_string(l.front()) + " -> " + std::to_string(l.back()));
}

Status ex_grad_check_ok(ScriptCall& c) {
  double r = c.e.snap.grad_check_max_rel_err;
  return r >= 0 && r < 1e-2 ? Status::ok()
                            : bad(c, "max rel err " + std::to_string(r) + ": " + c.e.snap.grad_check_text);
}

Status ex_message(ScriptCall& c) {  // a message containing TEXT was shown
  if (Status st = c.need(2); !st) return st;
  const std::string text = c.rest(2);
  for (const auto& m : c.e.messages)
    if (m.text.find(text) != std::string::npos) return Status::ok();
  return bad(c, c.e.messages.empty() ? "no messages" : "last message \"" + c.e.messages.back().text + "\"");
}

Status ex_no_message(ScriptCall& c) {  // no message containing TEXT was shown
  if (Status st = c.need(2); !st) return st;
  const std::string text = c.rest(2);
  for (const auto& m : c.e.messages)
    if (m.text.find(text) != std::string::npos) return bad(c, "\"" + m.text + "\"");
  return Status::ok();
}

// File > Attach to run...: attached (a run's connection is open), its rollout in the viewport
Status ex_attached(ScriptCall& c) { return expect_bool(c, c.e.attachment.attached() && c.e.attached.error.empty()); }
Status ex_attach_replaying(ScriptCall& c) { return expect_bool(c, c.e.attach_replay.active); }
Status ex_attached_iterations_above(ScriptCall& c) {  // the loss plot's points (the attached run's iterations)
  if (Status st = c.need(2); !st) return st;
  const int got = int(c.e.snap.loss.size());
  return got > std::atoi(c.w[2].c_str()) ? Status::ok() : bad(c, std::to_string(got));
}

// the contacts and the gradient arrows the viewport is given now (particles' and robots';
// vectors that are not zero): more than N
int shown_contacts(Editor& e) {
  const Contacts* pc = e.display_contacts();
  const RigidContactsT<float>* bc = robot_display_contacts(e);
  return (pc ? pc->contact_count() + pc->body_particle.contact_count() : 0) + (bc ? bc->contact_count() : 0);
}
Status ex_shown_contacts(ScriptCall& c) { return expect_text(c, std::to_string(shown_contacts(c.e))); }
Status ex_shown_contacts_above(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const int got = shown_contacts(c.e);
  return got > std::atoi(c.w[2].c_str()) ? Status::ok() : bad(c, std::to_string(got));
}
// the |dL/dx_t| plot's points (frames of the last iteration's gradient)
Status ex_step_grad_norms(ScriptCall& c) { return expect_text(c, std::to_string(c.e.snap.step_grad_norms.size())); }
// SHAC, AHAC: the iterations whose training return is a number (an episode had ended), and
// whether the last such return is above the first
int finite_train_returns(const Editor& e) {
  return int(
      std::count_if(e.snap.train_return.begin(), e.snap.train_return.end(), [](double x) { return std::isfinite(x); }));
}
Status ex_train_returns_above(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const int got = finite_train_returns(c.e);
  return got > std::atoi(c.w[2].c_str()) ? Status::ok() : bad(c, std::to_string(got));
}
Status ex_train_return_rose(ScriptCall& c) {
  std::vector<double> v;
  for (double x : c.e.snap.train_return)
    if (std::isfinite(x)) v.push_back(x);
  if (v.size() >= 2 && v.back() > v.front()) return Status::ok();
  return bad(c, v.empty() ? "no training return" : std::to_string(v.front()) + " -> " + std::to_string(v.back()));
}
// optimizer.backtrack's rejected points so far
Status ex_rejected(ScriptCall& c) { return expect_text(c, std::to_string(c.e.snap.opt_rejected)); }
Status ex_shown_arrows_above(ScriptCall& c) {
  if (Status st = c.need(2); !st) return st;
  const Array<vec3<float>>* f = c.e.arrow_field(c.e.display_state());
  int got = 0;
  if (f)
    for (const auto& v : *f) got += v.x != 0 || v.y != 0 || v.z != 0;
  return got > std::atoi(c.w[2].c_str()) ? Status::ok() : bad(c, std::to_string(got));
}

const ScriptCommand k_expect[] = {
    {"shown-contacts", ex_shown_contacts},
    {"shown-contacts-above", ex_shown_contacts_above},
    {"step-grad-norms", ex_step_grad_norms},
    {"rejected", ex_rejected},
    {"train-returns-above", ex_train_returns_above},
    {"train-return-rose", ex_train_return_rose},
    {"shown-arrows-above", ex_shown_arrows_above},
    {"attached", ex_attached},
    {"attach-replaying", ex_attach_replaying},
    {"attached-iterations-above", ex_attached_iterations_above},
    {"shown-moved", ex_shown_moved},
    {"frame", ex_frame},
    {"timeline", ex_timeline},
    {"selected", ex_selected},
    {"fps-above", ex_fps_above},
    {"slowest-frame-below", ex_slowest_frame_below},
    {"data-path", ex_data_path},
    {"ghosts", ex_ghosts},
    {"ghosts-above", ex_ghosts_above},
    {"pull-paths", ex_pull_paths},
    {"replay-frames", ex_replay_frames},
    {"camera-on-selection", ex_camera_on_selection},
    {"left-panels", ex_left_panels},
    {"simulation-fits", ex_simulation_fits},
    {"scene-scale", ex_scene_scale},
    {"hint", ex_hint},
    {"right-panels", ex_right_panels},
    {"replay-iteration", ex_replay_iteration},
    {"shown-centre", ex_shown_centre},
    {"parameters", ex_parameters},
    {"task-values", ex_task_values},
    {"loss-terms", ex_loss_terms},
    {"loss", ex_loss},
    {"obs-terms", ex_obs_terms},
    {"obs", ex_obs},
    {"action-scale", ex_action_map},
    {"action-offset", ex_action_map},
    {"termination", ex_termination},
    {"save-as", ex_save_as},
    {"backend", ex_backend},
    {"sim-backend", ex_sim_backend},
    {"worlds", ex_worlds},
    {"worlds-differing", ex_worlds_differing},
    {"inspected", ex_inspected},
    {"backend-available", ex_backend_available},
    {"path", ex_path},
    {"title", ex_title},
    {"shown-iteration", ex_shown_iteration},
    {"param-bounds", ex_param_bounds},
    {"ui-inside", ex_ui_inside},
    {"ui-moved", ex_ui_moved},
    {"clipboard", ex_clipboard},
    {"method", ex_method},
    {"file", ex_file},
    {"recovery-offered", ex_recovery_offered},
    {"prompt", ex_prompt},
    {"recording", ex_recording},
    {"dirty", ex_dirty},
    {"objects", ex_objects},
    {"undo", ex_undo},
    {"tasks", ex_tasks},
    {"task", ex_task},
    {"iterations", ex_iterations},
    {"opt-phase", ex_opt_phase},
    {"can-apply", ex_can_apply},
    {"grad-check-shown", ex_grad_check_shown},
    {"sim-error", ex_sim_error},
    {"loss-decreased", ex_loss_decreased},
    {"grad-check-ok", ex_grad_check_ok},
    {"message", ex_message},
    {"no-message", ex_no_message},
};

Status cmd_expect_compare(ScriptCall& c) {  // expect-above|expect-below PATH VALUE
  if (Status st = c.need(2); !st) return st;
  auto got = get_by_path(c.e.doc.scene(), c.w[1]);
  if (!got) return got.status();
  const bool above = c.w[0] == "expect-above";
  double a = std::atof(got->c_str()), b = std::atof(c.w[2].c_str());
  return (above ? a > b : a < b)
             ? Status::ok()
             : Status::error("expected " + c.w[1] + (above ? " > " : " < ") + c.w[2] + ", got " + *got);
}

const ScriptCommand k_expect_commands[] = {
    {"expect", script_expect},
    {"expect-above", cmd_expect_compare},
    {"expect-below", cmd_expect_compare},
    {"note-shown-centre", cmd_note_shown_centre},
};

}  // namespace

Status script_expect(ScriptCall& c) {
  if (Status st = c.need(1); !st) return st;
  for (const ScriptCommand& x : k_expect)
    if (c.w[1] == x.name) return x.fn(c);
  // a document field
  if (Status st = c.need(2); !st) return st;
  auto got = get_by_path(c.e.doc.scene(), c.w[1]);
  if (!got) return got.status();
  return same_value(*got, c.w[2]) ? Status::ok() : bad(c, *got);
}

std::span<const ScriptCommand> script_expect_commands() { return k_expect_commands; }

}  // namespace adj::editor
