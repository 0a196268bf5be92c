#include "app/editor/robot_ui.h"

#include <imgui.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "app/editor/authoring.h"
#include "app/editor/editor.h"
#include "app/editor/fields.h"
#include "app/editor/robot_fields.h"
#include "engine/io/mjcf.h"
#include "engine/io/urdf.h"
#include "engine/model/rigid_builder.h"
#include "engine/scene/compile.h"
#include "engine/vis/rigid_vis.h"

namespace adj::editor {

namespace {

constexpr double k_pi = 3.14159265358979323846;

const char* joint_type_name(int type) {
  switch (type) {
    case RIGID_JOINT_REVOLUTE:
      return "revolute";
    case RIGID_JOINT_PRISMATIC:
      return "prismatic";
    case RIGID_JOINT_BALL:
      return "ball";
    case RIGID_JOINT_FREE:
      return "free";
    case RIGID_JOINT_FIXED:
      return "fixed";
  }
  return "?";
}

const char* actuator_type_name(int type) {
  return type == RIGID_ACTUATOR_PD ? "pd" : type == RIGID_ACTUATOR_THRUST ? "thrust" : "torque";
}

// the compiled range of a robot object, or null
const scene::ObjectRange* robot_range(const Editor& e, int object) {
  const scene::CompiledScene* cs = e.compiled();
  if (!cs || object < 0 || object >= int(cs->objects.size()) || object >= int(e.doc.scene().objects.size()))
    return nullptr;
  const scene::ObjectRange& r = cs->objects[size_t(object)];
  if (r.kind != scene::ObjectKind::robot || r.body_end > cs->model.rigid.body_count()) return nullptr;
  return &r;
}

// a body of the robot by name (global rigid index), or -1
int find_body(const Editor& e, int object, const std::string& name) {
  const scene::ObjectRange* r = robot_range(e, object);
  if (!r) return -1;
  for (int b = r->body_begin; b < r->body_end; ++b)
    if (e.compiled()->model.rigid.body_name[size_t(b)] == name) return b;
  return -1;
}

int find_object(const Editor& e, const std::string& name) {
  const auto& objs = e.doc.scene().objects;
  for (size_t i = 0; i < objs.size(); ++i)
    if (objs[i].name == name) return int(i);
  return -1;
}

// the URDF joint attaching each link of a URDF robot (listed robots: the body names)
const std::vector<std::string>* urdf_joint_names(Editor& e, const scene::Object& o) {
  if (o.robot.urdf.empty()) return nullptr;
  namespace fs = std::filesystem;
  fs::path p(o.robot.urdf);
  std::string full =
      p.is_absolute() || e.doc.base_dir().empty() ? o.robot.urdf : (fs::path(e.doc.base_dir()) / p).string();
  auto it = e.robot.urdf_joints.find(full);
  if (it == e.robot.urdf_joints.end()) {
    RigidBuilder b;
    auto imp = rigid_import_urdf(full, b, {});
    it = e.robot.urdf_joints.emplace(full, imp ? imp->joints : std::vector<std::string>{}).first;
  }
  return &it->second;
}

uint64_t merge_key(const char* what, int object, int item) {
  return (uint64_t(ImGui::GetID(what)) << 20) ^ (uint64_t(object) << 12) ^ uint64_t(item) ^ 0x5bd1e995ull;
}

// one field's value widget; true while it changed
bool draw_value(const Field& f, void* value) {
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::PushID(f.name);
  bool changed = false;
  const double* lo = std::isfinite(f.min) ? &f.min : nullptr;
  const double* hi = std::isfinite(f.max) ? &f.max : nullptr;
  switch (f.type) {
    case FieldType::number: {
      double* v = static_cast<double*>(value);
      float speed = f.speed > 0 ? f.speed : float(std::max(std::abs(*v), 1e-3) * 0.005);
      changed = ImGui::DragScalar("##v", ImGuiDataType_Double, v, speed, lo, hi, "%.5g");
      break;
    }
    case FieldType::integer:
      changed = ImGui::DragInt("##v", static_cast<int*>(value), f.speed, int(f.min), int(f.max));
      break;
    case FieldType::boolean:
      changed = ImGui::Checkbox("##v", static_cast<bool*>(value));
      break;
    case FieldType::vec3: {
      double* v = static_cast<double*>(value);
      float speed =
          f.speed > 0 ? f.speed : float(std::max({std::abs(v[0]), std::abs(v[1]), std::abs(v[2]), 1e-4}) * 0.005);
      changed = ImGui::DragScalarN("##v", ImGuiDataType_Double, v, 3, speed, lo, hi, "%.4g");
      break;
    }
    case FieldType::text:
      ImGui::TextUnformatted(static_cast<std::string*>(value)->c_str());
      break;
  }
  if (f.unit[0] && ImGui::IsItemHovered()) ImGui::SetTooltip("%s [%s]\nCtrl+click to type a value", f.name, f.unit);
  ImGui::PopID();
  return changed;
}

void label_cell(const char* name) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(name);
  ImGui::TableSetColumnIndex(1);
}

void read_only(const char* name, const char* fmt, double v) {
  label_cell(name);
  ImGui::TextDisabled(fmt, v);
}

// slider range of a joint: its limits, else a turn either way (revolute) or a metre
void slider_range(const RigidModel& m, int b, double* lo, double* hi) {
  *lo = double(m.joint_lower[size_t(b)]);
  *hi = double(m.joint_upper[size_t(b)]);
  if (!std::isfinite(*lo) || !std::isfinite(*hi) || !(*lo < *hi)) {
    const double span = m.joint_type[size_t(b)] == RIGID_JOINT_REVOLUTE ? k_pi : 1.0;
    *lo = -span;
    *hi = span;
  }
}

}  // namespace

// ---- what the viewport draws

const State& robot_display_state(Editor& e) {
  const scene::CompiledScene* cs = e.compiled();
  if (!cs) return e.robot.scrub;
  const size_t n = cs->model.joint_q.size();
  const Snapshot& s = e.snap;
  if (const State* a = e.attach_display_state(); a && a->joint_q.size() == n) return *a;  // an attached run's replay
  if (e.replay_ready()) {  // the replayed rollout's joints (Editor::display_state reads the frame)
    const State& r = e.display_state();
    if (r.joint_q.size() == n) return r;
  }
  // the optimized result of this very document (a pose edited since is shown as edited)
  if (e.view_settings.show_optimized && s.has_opt_final_state && s.opt_final_state.joint_q.size() == n && e.opt_fits())
    return s.opt_final_state;
  if (e.timeline_frame >= 0) {
    if (e.robot.scrub_frame != e.timeline_frame || e.robot.scrub.joint_q.size() != n) {
      e.robot.scrub_frame = -1;
      if (e.worker.recorded_state(e.timeline_frame, e.robot.scrub)) e.robot.scrub_frame = e.timeline_frame;
    }
    if (e.robot.scrub_frame == e.timeline_frame && e.robot.scrub.joint_q.size() == n) return e.robot.scrub;
  } else {
    e.robot.scrub_frame = -1;  // the next scrub reads the worker's timeline again
  }
  if (s.generation == e.doc.revision() && s.state.joint_q.size() == n) return s.state;
  e.robot.rest.joint_q = cs->model.joint_q;  // the compiled initial pose
  e.robot.rest.joint_qd = cs->model.joint_qd;
  return e.robot.rest;
}

const RigidContactsT<float>* robot_display_contacts(Editor& e) {
  if (e.attach_replay.active) return e.attach_display_body_contacts();  // what the attached run sent
  const Snapshot& s = e.snap;
  if (e.timeline_frame >= 0 || e.replay.active || s.generation != e.doc.revision()) return nullptr;
  if (e.view_settings.show_optimized && s.has_opt_final_state && e.opt_fits()) return nullptr;
  return &s.rigid_contacts;
}

void robot_prepare_view(Editor& e) {
  if (!e.view() || !e.compiled() || !e.compiled()->has_robots()) return;
  e.view()->set_robot_state(robot_display_state(e));
  e.view()->set_robot_contacts(robot_display_contacts(e));
  e.view()->set_robot_highlight(robot_selected_body(e));
}

// ---- selection

int robot_selected_body(const Editor& e) {
  if (e.robot.body < 0 || e.robot.body_object != e.selected()) return -1;
  const scene::ObjectRange* r = robot_range(e, e.selected());
  return r && e.robot.body >= r->body_begin && e.robot.body < r->body_end ? e.robot.body : -1;
}

void robot_select_body(Editor& e, int object, int body) {
  e.select(object);
  e.robot.body_object = object;
  e.robot.reveal_body = e.robot.body != body;
  e.robot.body = body;
}

namespace {

// where a ray (origin o, unit direction d) first enters a shape, as a distance along it (-1:
// it misses). f: the shape's kRigidShapeFloats (engine/vis/rigid_vis.h)
float ray_sphere(glm::vec3 o, glm::vec3 d, glm::vec3 c, float r) {
  const glm::vec3 m = o - c;
  const float b = glm::dot(m, d), q = glm::dot(m, m) - r * r, disc = b * b - q;
  if (disc < 0) return -1;
  const float t = -b - std::sqrt(disc);
  return t >= 0 ? t : (q <= 0 ? 0.0f : -1.0f);  // inside: at once
}

float ray_shape(glm::vec3 o, glm::vec3 d, const float* f) {
  const glm::vec3 c(f[0], f[1], f[2]);
  const glm::quat q(f[3], f[4], f[5], f[6]);
  const int type = int(f[10]);
  if (type == GEOM_BOX) {  // slabs in the box's frame
    const glm::vec3 lo = glm::conjugate(q) * (o - c), ld = glm::conjugate(q) * d, h(f[7], f[8], f[9]);
    float t0 = 0, t1 = FLT_MAX;
    for (int k = 0; k < 3; ++k) {
      if (std::abs(ld[k]) < 1e-12f) {
        if (std::abs(lo[k]) > h[k]) return -1;
        continue;
      }
      float a = (-h[k] - lo[k]) / ld[k], b = (h[k] - lo[k]) / ld[k];
      if (a > b) std::swap(a, b);
      t0 = std::max(t0, a);
      t1 = std::min(t1, b);
      if (t0 > t1) return -1;
    }
    return t0;
  }
  if (type == GEOM_CAPSULE) {  // the nearest of the two end spheres and the side
    const glm::vec3 axis = q * glm::vec3(0, 1, 0), a = c - axis * f[8], b = c + axis * f[8];
    const float r = f[7];
    float best = -1;
    for (glm::vec3 e : {a, b})
      if (float t = ray_sphere(o, d, e, r); t >= 0 && (best < 0 || t < best)) best = t;
    // the cylinder between them: |(p - a) x axis| = r with 0 <= (p - a).axis <= 2 h
    const glm::vec3 m = o - a, dp = d - axis * glm::dot(d, axis), mp = m - axis * glm::dot(m, axis);
    const float A = glm::dot(dp, dp), B = glm::dot(dp, mp), C = glm::dot(mp, mp) - r * r, disc = B * B - A * C;
    if (A > 1e-12f && disc >= 0) {
      const float t = (-B - std::sqrt(disc)) / A, s = glm::dot(m + d * t, axis);
      if (t >= 0 && s >= 0 && s <= 2 * f[8] && (best < 0 || t < best)) best = t;
    }
    return best;
  }
  return ray_sphere(o, d, c, f[7]);  // a sphere; a mesh by its bounding sphere
}

}  // namespace

void robot_pick_body(Editor& e, int object, glm::vec2 px, glm::vec2 view) {
  const scene::ObjectRange* r = robot_range(e, object);
  if (!r) return;
  const scene::CompiledScene& cs = *e.compiled();
  const RigidModel& m = cs.model.rigid;
  std::vector<float> shapes(size_t(m.shape_count()) * kRigidShapeFloats);
  rigid_vis_shapes(m, robot_display_state(e), shapes.data());
  // screen distance from the click to a point, and to a segment (a capsule's axis)
  auto to_point = [&](glm::vec3 w) {
    glm::vec3 p = e.camera.project(w, view);
    return glm::length(glm::vec2(p) - px);
  };
  auto to_segment = [&](glm::vec3 a, glm::vec3 b) {
    glm::vec2 pa = glm::vec2(e.camera.project(a, view)), pb = glm::vec2(e.camera.project(b, view));
    glm::vec2 d = pb - pa;
    float t = glm::dot(d, d) > 0 ? std::clamp(glm::dot(px - pa, d) / glm::dot(d, d), 0.0f, 1.0f) : 0.0f;
    return glm::length(pa + t * d - px);
  };
  // the nearest surface under the cursor: the first shape the pixel's ray enters
  const render::Ray ray = e.camera.ray(px, view);
  int hit = -1;
  float hit_t = FLT_MAX;
  for (int k = 0; k < m.shape_count(); ++k) {
    const float* f = &shapes[size_t(k) * kRigidShapeFloats];
    const int body = int(f[11]);
    if (body < r->body_begin || body >= r->body_end) continue;
    if (float t = ray_shape(ray.origin, ray.direction, f); t >= 0 && t < hit_t) hit_t = t, hit = body;
  }
  if (hit >= 0) return robot_select_body(e, object, hit);
  // the ray misses every shape (a click beside a thin link): the shape nearest on screen
  int best = -1;
  float best_d = 1e30f;
  for (int k = 0; k < m.shape_count(); ++k) {
    const float* f = &shapes[size_t(k) * kRigidShapeFloats];
    const int body = int(f[11]);
    if (body < r->body_begin || body >= r->body_end) continue;
    const glm::vec3 c(f[0], f[1], f[2]);
    float d = to_point(c);
    if (int(f[10]) == GEOM_CAPSULE) {  // along local y, half length f[8]
      const glm::vec3 axis = glm::quat(f[3], f[4], f[5], f[6]) * glm::vec3(0, f[8], 0);
      d = to_segment(c - axis, c + axis);
    }
    if (d < best_d) best_d = d, best = body;
  }
  if (best >= 0) robot_select_body(e, object, best);
}

std::optional<glm::vec3> robot_body_centre(Editor& e, int object, const std::string& body) {
  const int b = find_body(e, object, body);
  if (b < 0) return std::nullopt;
  const RigidModel& m = e.compiled()->model.rigid;
  std::vector<float> joints(size_t(m.body_count()) * kRigidJointFloats);
  rigid_vis_joints(m, robot_display_state(e), joints.data());
  const float* f = &joints[size_t(b) * kRigidJointFloats];
  return glm::vec3(f[6], f[7], f[8]);
}

// ---- outliner

void draw_robot_tree(Editor& e, int object) {
  const scene::ObjectRange* r = robot_range(e, object);
  if (!r) return;
  const RigidModel& m = e.compiled()->model.rigid;
  const scene::Object& o = e.doc.scene().objects[size_t(object)];
  const std::vector<std::string>* joints = urdf_joint_names(e, o);
  const int selected = robot_selected_body(e);
  ImGui::Indent(26.0f);
  auto draw = [&](auto&& self, int b) -> void {
    bool leaf = true;
    for (int c = b + 1; c < r->body_end; ++c) leaf = leaf && m.joint_parent[size_t(c)] != b;
    ImGuiTreeNodeFlags flags =
        ImGuiTreeNodeFlags_OpenOnArrow | ImGuiTreeNodeFlags_DefaultOpen | ImGuiTreeNodeFlags_SpanAvailWidth;
    if (leaf) flags |= ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen;
    if (b == selected) flags |= ImGuiTreeNodeFlags_Selected;
    const int local = b - r->body_begin;
    const std::string jn = joints && size_t(local) < joints->size() ? (*joints)[size_t(local)] : std::string();
    const int type = m.joint_type[size_t(b)];
    bool open = ImGui::TreeNodeEx(reinterpret_cast<void*>(intptr_t(b)), flags, "%s", m.body_name[size_t(b)].c_str());
    if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) robot_select_body(e, object, b);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "body \"%s\", %.3g kg\njoint %s%s%s to %s", m.body_name[size_t(b)].c_str(), double(m.body_mass[size_t(b)]),
          jn.empty() ? "" : "\"", jn.c_str(), jn.empty() ? "" : "\" ",
          m.joint_parent[size_t(b)] < 0 ? "the world" : m.body_name[size_t(m.joint_parent[size_t(b)])].c_str());
    ImGui::SameLine();
    if (jn.empty())
      ImGui::TextDisabled("%s", joint_type_name(type));
    else
      ImGui::TextDisabled("%s %s", joint_type_name(type), jn.c_str());
    if (open && !leaf) {
      for (int c = b + 1; c < r->body_end; ++c)
        if (m.joint_parent[size_t(c)] == b) self(self, c);
      ImGui::TreePop();
    }
  };
  for (int b = r->body_begin; b < r->body_end; ++b) {
    const int p = m.joint_parent[size_t(b)];
    if (p < r->body_begin || p >= r->body_end) draw(draw, b);  // a root of this robot
  }
  ImGui::Unindent(26.0f);
}

int robot_outliner_rows(const Editor& e) {
  int rows = 0;
  for (int i = 0; i < int(e.doc.scene().objects.size()); ++i)
    if (const scene::ObjectRange* r = robot_range(e, i)) rows += r->body_end - r->body_begin;
  return rows;
}

// ---- inspector

Status robot_set_joint(Editor& e, int object, const std::string& body, double value, uint64_t key) {
  const auto& objs = e.doc.scene().objects;
  if (object < 0 || object >= int(objs.size()) || objs[size_t(object)].kind != scene::ObjectKind::robot)
    return Status::error("set-joint: not a robot");
  scene::Object o = objs[size_t(object)];
  if (const scene::ObjectRange* r = robot_range(e, object)) {
    int b = find_body(e, object, body);
    if (b < 0) return Status::error(o.name + ": no body named \"" + body + "\"");
    int type = e.compiled()->model.rigid.joint_type[size_t(b)];
    if (type != RIGID_JOINT_REVOLUTE && type != RIGID_JOINT_PRISMATIC)
      return Status::error(o.name + "." + body + ": a " + joint_type_name(type) + " joint has no slider");
    (void)r;
  }
  auto ref = resolve_robot_field(o, "q." + body);
  if (!ref) return Status::error(o.name + ": " + ref.status().message());
  *static_cast<double*>(ref->value) = value;
  e.doc.set_object(object, o, "Pose " + o.name + "." + body, key);
  return Status::ok();
}

namespace {

// a two-column table (name, value) of the robot inspector; false: not drawn (EndTable not needed)
bool name_value_table(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.45f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.55f);
  return true;
}

// the robot inspector's sections: the robot object `o` (a copy: edits replace the scene), its
// range `r` in the compiled model `m`
void draw_robot_joints(Editor& e, int index, const scene::ObjectRange* r, const RigidModel& m, const scene::Object& o) {
  const std::vector<std::string>* joints = urdf_joint_names(e, o);
  // joint sliders: the initial pose, each drag one undo step
  if (ImGui::CollapsingHeader("Joints (initial pose)", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (name_value_table("joints")) {
      for (int b = r->body_begin; b < r->body_end; ++b) {
        const int type = m.joint_type[size_t(b)];
        const std::string& name = m.body_name[size_t(b)];
        const int local = b - r->body_begin;
        std::string label = joints && size_t(local) < joints->size() && !(*joints)[size_t(local)].empty()
                                ? (*joints)[size_t(local)]
                                : name;
        ImGui::PushID(b);
        label_cell(label.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s joint of body \"%s\"", joint_type_name(type), name.c_str());
        if (type == RIGID_JOINT_REVOLUTE || type == RIGID_JOINT_PRISMATIC) {
          scene::Object copy = o;
          const std::vector<double>* q = robot_initial(copy.robot, name, false, false, 1);
          double v = q && !q->empty() ? (*q)[0] : 0.0, lo = 0, hi = 0;
          slider_range(m, b, &lo, &hi);
          ImGui::SetNextItemWidth(-FLT_MIN);
          if (ImGui::SliderScalar("##q", ImGuiDataType_Double, &v, &lo, &hi,
                                  type == RIGID_JOINT_REVOLUTE ? "%.3f rad" : "%.3f m"))
            (void)robot_set_joint(e, index, name, v, merge_key("q", index, b));
          if (ImGui::IsItemDeactivated()) e.doc.end_merge();
          if (ImGui::IsItemHovered())
            ImGui::SetTooltip("initial %s of \"%s\" within its limits [%.3g, %.3g]\nCtrl+click to type a value",
                              type == RIGID_JOINT_REVOLUTE ? "angle" : "offset", label.c_str(), lo, hi);
        } else {
          ImGui::TextDisabled("%s", joint_type_name(type));
        }
        ImGui::PopID();
      }
      ImGui::EndTable();
    }
  }
}

void draw_robot_bodies(Editor& e, int index, const scene::ObjectRange* r, const RigidModel& m, const scene::Object& o,
                       int sel, bool reveal) {
  const bool urdf = !o.robot.urdf.empty();
  // bodies: joint, limits, damping, armature, mass and inertia (listed robots edit them; a
  // URDF robot's come from its file)
  if (reveal) ImGui::SetNextItemOpen(true);
  if (ImGui::CollapsingHeader("Bodies")) {
    if (urdf) ImGui::TextDisabled("from %s (edit the file)", o.robot.urdf.c_str());
    for (int b = r->body_begin; b < r->body_end; ++b) {
      const int local = b - r->body_begin;
      ImGui::PushID(b);
      ImGuiTreeNodeFlags flags = b == sel ? ImGuiTreeNodeFlags_Selected : 0;
      if (reveal) ImGui::SetNextItemOpen(b == sel);  // the picked body's entry open, the others shut
      bool open = ImGui::TreeNodeEx("##body", flags, "%s (%s)", m.body_name[size_t(b)].c_str(),
                                    joint_type_name(m.joint_type[size_t(b)]));
      if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) robot_select_body(e, index, b);
      if (reveal && b == sel) ImGui::SetScrollHereY(0.2f);
      if (open) {
        if (!urdf && local < int(o.robot.bodies.size())) {
          scene::Object copy = o;
          scene::RobotBody& body = copy.robot.bodies[size_t(local)];
          if (name_value_table("body")) {
            for (const Field& f : robot_body_fields()) {
              label_cell(f.name);
              if (draw_value(f, robot_body_value(body, f)))
                e.doc.set_object(index, copy, "Set " + o.name + "." + body.name + "." + f.name,
                                 merge_key(f.name, index, b));
              if (ImGui::IsItemDeactivated()) e.doc.end_merge();
            }
            for (size_t k = 0; k < body.shapes.size(); ++k) {
              ImGui::PushID(int(k));
              std::string n = "shape " + std::to_string(k) + " " + scene::to_string(body.shapes[k].kind) + " density";
              label_cell(n.c_str());
              const Field density{"density", FieldType::number, 1.0f, 0, 1e6, "kg/m^3 (mass from the shape's volume)",
                                  nullptr,   nullptr,           {}};
              if (draw_value(density, &body.shapes[k].density))
                e.doc.set_object(index, copy, "Set " + o.name + "." + body.name + " density",
                                 merge_key("density", index, b * 64 + int(k)));
              if (ImGui::IsItemDeactivated()) e.doc.end_merge();
              ImGui::PopID();
            }
            ImGui::EndTable();
          }
        }
        // the compiled values (what the simulation uses)
        if (name_value_table("compiled")) {
          read_only("mass", "%.4g kg", double(m.body_mass[size_t(b)]));
          const auto& I = m.body_inertia[size_t(b)];
          label_cell("inertia");
          ImGui::TextDisabled("%.3g %.3g %.3g", double(I.m[0][0]), double(I.m[1][1]), double(I.m[2][2]));
          if (m.joint_type[size_t(b)] == RIGID_JOINT_REVOLUTE || m.joint_type[size_t(b)] == RIGID_JOINT_PRISMATIC) {
            const int d = m.joint_dof_start[size_t(b)];
            label_cell("limits");
            ImGui::TextDisabled("%.3g .. %.3g", double(m.joint_lower[size_t(b)]), double(m.joint_upper[size_t(b)]));
            read_only("damping", "%.4g", double(m.dof_damping[size_t(d)]));
            if (m.dof_armature[size_t(d)] != 0) read_only("armature", "%.4g", double(m.dof_armature[size_t(d)]));
          }
          ImGui::EndTable();
        }
        ImGui::TreePop();
      }
      ImGui::PopID();
    }
  }
}

void draw_robot_actuators(Editor& e, int index, const scene::ObjectRange* r, const RigidModel& m,
                          const scene::Object& o) {
  const bool urdf = !o.robot.urdf.empty();
  // actuators: kind, gains, targets
  if (ImGui::CollapsingHeader("Actuators", ImGuiTreeNodeFlags_DefaultOpen)) {
    const char* kinds[] = {"torque", "pd", "thrust"};
    if (urdf) {
      scene::Object copy = o;
      int k = int(copy.robot.default_actuator.kind);
      ImGui::SetNextItemWidth(120);
      if (ImGui::Combo("default kind", &k, kinds, 2)) {
        copy.robot.default_actuator.kind = scene::RobotActuatorKind(k);
        e.doc.end_merge();
        e.doc.set_object(index, copy, "Actuator kind of " + o.name);
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("of the default actuators (one per revolute/prismatic joint);\ntheir gains are above");
    }
    const int listed_begin = r->actuator_end - int(o.robot.actuators.size());
    for (int a = r->actuator_begin; a < r->actuator_end; ++a) {
      ImGui::PushID(a + 100000);
      const int dof = m.actuator_dof[size_t(a)];
      const int joint = m.dof_joint[size_t(dof)];
      const int type = m.actuator_type[size_t(a)];
      ImGui::Text("%d %s on %s", a - r->actuator_begin, actuator_type_name(type), m.body_name[size_t(joint)].c_str());
      if (type == RIGID_ACTUATOR_PD) {
        ImGui::SameLine();
        ImGui::TextDisabled("kp %.3g kd %.3g", double(m.actuator_kp[size_t(a)]), double(m.actuator_kd[size_t(a)]));
      } else {
        ImGui::SameLine();
        ImGui::TextDisabled("gear %.3g", double(m.actuator_gear[size_t(a)]));
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(type == RIGID_ACTUATOR_PD
                              ? "target: the joint's initial coordinate while the editor plays (holds the pose);\n"
                                "per-frame targets when a task optimizes actuator_control"
                              : "input: zero while the editor plays; per-frame inputs when a task optimizes "
                                "actuator_control");
      const int li = a - listed_begin;
      if (li >= 0 && li < int(o.robot.actuators.size())) {
        scene::Object copy = o;
        scene::RobotActuator& act = copy.robot.actuators[size_t(li)];
        int k = int(act.kind);
        ImGui::SetNextItemWidth(120);
        if (ImGui::Combo("kind", &k, kinds, 3)) {
          act.kind = scene::RobotActuatorKind(k);
          e.doc.end_merge();
          e.doc.set_object(index, copy, "Actuator kind of " + o.name);
        }
        if (name_value_table("actuator")) {
          for (const Field& f : robot_actuator_fields()) {
            label_cell(f.name);
            if (draw_value(f, robot_actuator_value(act, f)))
              e.doc.set_object(index, copy, "Set " + o.name + ".actuators[" + std::to_string(li) + "]." + f.name,
                               merge_key(f.name, index, 1000 + li));
            if (ImGui::IsItemDeactivated()) e.doc.end_merge();
          }
          ImGui::EndTable();
        }
      }
      ImGui::PopID();
    }
    if (r->actuator_end == r->actuator_begin) ImGui::TextDisabled("no actuators");
  }
}

}  // namespace

void draw_robot_inspector(Editor& e, int index) {
  const scene::ObjectRange* r = robot_range(e, index);
  if (!r) {
    ImGui::TextDisabled("the robot is not compiled (see Messages)");
    return;
  }
  const RigidModel& m = e.compiled()->model.rigid;
  const scene::Object o = e.doc.scene().objects[size_t(index)];  // a copy: edits replace the scene
  // the selected body (a click in the viewport or the outliner), first: what it is in its robot
  const int sel = robot_selected_body(e);
  if (sel >= r->body_begin && sel < r->body_end) {
    ImGui::TextColored(ImVec4(0.1f, 0.8f, 1.0f, 1.0f), "body %s", m.body_name[size_t(sel)].c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("(%s joint, %.4g kg; Bodies below)", joint_type_name(m.joint_type[size_t(sel)]),
                        double(m.body_mass[size_t(sel)]));
  }
  const bool reveal = std::exchange(e.robot.reveal_body, false) && sel >= 0;
  draw_robot_joints(e, index, r, m, o);
  draw_robot_bodies(e, index, r, m, o, sel, reveal);
  draw_robot_actuators(e, index, r, m, o);
}

// ---- URDF import

namespace {

// an imported robot's initial pose inside its joints' limits: a coordinate the file leaves
// outside its range (the Gymnasium Ant's ankles at 0 rad, limited to 30..100 degrees) starts
// at the nearer limit instead of being thrown out by the limit penalty; returns the joints
// moved, for the warning. Also the truth about the base: a free root joint is not fixed.
std::vector<std::string> start_inside_limits(scene::Object& o, const scene::CompiledScene& cs) {
  const scene::ObjectRange& r = cs.objects.back();
  const RigidModel& m = cs.model.rigid;
  const State s0 = cs.model.make_state();
  std::vector<std::string> moved;
  for (int b = r.body_begin; b < r.body_end; ++b) {
    const int type = m.joint_type[size_t(b)];
    if (b == r.body_begin && type == RIGID_JOINT_FREE) o.robot.fixed_base = false;
    if ((type != RIGID_JOINT_REVOLUTE && type != RIGID_JOINT_PRISMATIC) || !(m.joint_limit_ke[size_t(b)] > 0)) continue;
    const double q = double(s0.joint_q[size_t(m.joint_q_start[size_t(b)])]);
    const double lo = double(m.joint_lower[size_t(b)]), hi = double(m.joint_upper[size_t(b)]);
    if (q >= lo && q <= hi) continue;
    const double inside = std::clamp(q, lo, hi);
    o.robot.initial.push_back({m.body_name[size_t(b)], {inside}, {}});
    char text[160];
    std::snprintf(text, sizeof text, "%s %.3g -> %.3g", m.body_name[size_t(b)].c_str(),
                  type == RIGID_JOINT_REVOLUTE ? q * 180 / 3.14159265358979 : q,
                  type == RIGID_JOINT_REVOLUTE ? inside * 180 / 3.14159265358979 : inside);
    moved.emplace_back(text);
  }
  return moved;
}

// an imported MJCF robot's initial pose as its file gives it (a keyframe, or Gymnasium's and
// DiffRL's init_qpos): the hinge and slide coordinates, relative to their refs, as the object's
// initial joint state (the free root keeps the placement); false when the file gives none
bool file_initial_pose(const std::string& file, scene::Object& o, const scene::CompiledScene& cs) {
  RigidBuilder b;
  MjcfOptions mo;
  mo.world_geoms = false;
  auto imp = rigid_import_mjcf(file, b, mo);
  if (!imp || imp->qpos0.empty()) return false;
  std::map<int, std::string> names;  // builder body -> name
  for (size_t i = 0; i < imp->bodies.size(); ++i) names[imp->bodies[i]] = imp->names[i];
  const scene::ObjectRange& r = cs.objects.back();
  const RigidModel& m = cs.model.rigid;
  size_t at = 0;
  std::vector<scene::RobotInitial> initial;
  for (const MujocoJointMap& j : imp->layout.joints) {
    int body = -1;
    for (int k = r.body_begin; k < r.body_end && body < 0; ++k)
      if (m.body_name[size_t(k)] == names[j.body]) body = k;
    if (body < 0) return false;
    const int type = m.joint_type[size_t(body)];
    const size_t width = type == RIGID_JOINT_FREE ? 7 : type == RIGID_JOINT_BALL ? 4 : 1;
    if (at + width > imp->qpos0.size()) return false;  // a qpos of another model
    if (type == RIGID_JOINT_REVOLUTE || type == RIGID_JOINT_PRISMATIC)
      initial.push_back({m.body_name[size_t(body)], {imp->qpos0[at] - j.ref}, {}});
    at += width;
  }
  o.robot.initial = std::move(initial);
  return true;
}

}  // namespace

namespace {

// a URDF robot's inputs, one bound each: PD targets by the joint's range, torques by its effort
std::optional<RobotInputBounds> urdf_input_bounds(const Editor& e, const scene::Object& o, const std::string& file) {
  const scene::CompiledScene* cs = e.compiled();
  const scene::ObjectRange* r = cs ? cs->find(o.name) : nullptr;
  if (!r || r->actuator_end <= r->actuator_begin) return std::nullopt;
  RigidBuilder b;
  UrdfOptions uo;
  uo.balance_inertia = true;  // read for its limits only
  auto imp = rigid_import_urdf(file, b, uo);
  if (!imp) return std::nullopt;
  const RigidModel& m = cs->model.rigid;
  RobotInputBounds out;
  bool bounded = false;
  for (int a = r->actuator_begin; a < r->actuator_end; ++a) {
    const int body = m.dof_joint[size_t(m.actuator_dof[size_t(a)])];
    double lo = -INFINITY, hi = INFINITY;
    for (size_t l = 0; l < imp->links.size(); ++l) {  // the file's link of this body, its values in double
      if (imp->links[l] != m.body_name[size_t(body)]) continue;
      const RigidJointDesc& j = *b.joint(imp->bodies[l]);
      if (m.actuator_type[size_t(a)] == RIGID_ACTUATOR_PD && j.lower < j.upper) {  // a limited joint
        lo = j.lower, hi = j.upper;
      } else if (m.actuator_type[size_t(a)] == RIGID_ACTUATOR_TORQUE && imp->effort[l] > 0) {
        const double g = std::abs(double(m.actuator_gear[size_t(a)]));
        if (g > 0) hi = imp->effort[l] / g, lo = -hi;
      }
    }
    bounded |= std::isfinite(lo) || std::isfinite(hi);
    out.lower_each.push_back(lo), out.upper_each.push_back(hi);
  }
  if (!bounded) return std::nullopt;
  out.why = "each by its joint (PD targets: the joint's range; torques: its <limit effort>)";
  return out;
}

}  // namespace

std::optional<RobotInputBounds> robot_input_bounds(const Editor& e, const scene::Object& o) {
  if (o.kind != scene::ObjectKind::robot || o.robot.urdf.empty()) return std::nullopt;
  namespace fs = std::filesystem;
  const fs::path file =
      fs::path(o.robot.urdf).is_absolute() ? fs::path(o.robot.urdf) : fs::path(e.doc.base_dir()) / o.robot.urdf;
  if (!o.robot.mjcf) return urdf_input_bounds(e, o, file.string());
  RigidBuilder b;
  MjcfOptions mo;
  mo.world_geoms = false;
  auto imp = rigid_import_mjcf(file.string(), b, mo);
  if (!imp || imp->layout.actuators.empty()) return std::nullopt;
  RobotInputBounds out;
  out.lower = INFINITY, out.upper = -INFINITY;
  for (const MujocoActuatorMap& a : imp->layout.actuators) {
    if (!a.ctrl_limited || a.scale != 1 || a.offset != 0) return std::nullopt;  // a servo's input is its target
    out.lower = std::min(out.lower, a.ctrl_lower), out.upper = std::max(out.upper, a.ctrl_upper);
  }
  char text[80];
  std::snprintf(text, sizeof text, "to [%g, %g], its file's ctrlrange", out.lower, out.upper);
  out.why = text;
  return out;
}

bool import_robot(Editor& e, const std::string& path) {
  namespace fs = std::filesystem;
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const bool mjcf = ext == ".xml" || ext == ".mjcf";
  const char* what = mjcf ? "import MJCF: " : "import URDF: ";
  const int up = e.doc.scene().settings.up_index();
  scene::Object o;
  o.name = fs::path(path).stem().string();
  o.kind = scene::ObjectKind::robot;
  std::error_code ec;
  fs::path rel = e.doc.path().empty() ? fs::path() : fs::relative(fs::absolute(path), e.doc.base_dir(), ec);
  o.robot.urdf = rel.empty() || ec ? fs::absolute(path).string() : rel.string();
  o.robot.mjcf = mjcf;
  if (mjcf && up == 1) o.robot.rotation = {-90, 0, 0};           // MJCF is z-up (as Add > MJCF robot)
  o.robot.default_actuator.kind = scene::RobotActuatorKind::pd;  // posable: they hold the pose
  o.robot.default_actuator.kp = 50;
  o.robot.default_actuator.kd = 5;
  if (!mjcf) o.robot.cylinder_segments = 24;  // a URDF's cylinders touch as cylinders (wheels, hips), as MJCF's do
  scene::Scene trial = e.doc.scene();
  trial.objects.push_back(o);
  auto cs = scene::compile<float>(trial, e.doc.base_dir());
  if (!cs && cs.status().message().find("balance_inertia") != std::string::npos) {
    // an inertia no rigid body has (A + B < C, as the xArm6's link2): balanced as MuJoCo's
    // balanceinertia would, and the warning below says which link
    o.robot.balance_inertia = true;
    trial.objects.back() = o;
    cs = scene::compile<float>(trial, e.doc.base_dir());
  }
  if (!cs) {
    e.message(Severity::error, what + cs.status().message());  // names the file and the element
    return false;
  }
  // the importer's warnings about this object (ignored elements, approximations), located
  const std::string mine = "objects[" + std::to_string(trial.objects.size() - 1) + "]";
  for (const std::string& w : cs->warnings)
    if (w.find(mine) != std::string::npos) e.message(Severity::warning, what + w);
  // the file's initial pose, then inside the joints' limits
  if (mjcf && file_initial_pose(fs::absolute(path).string(), o, *cs)) {
    trial.objects.back() = o;
    auto posed = scene::compile<float>(trial, e.doc.base_dir());
    if (posed) {
      cs = std::move(posed);
      e.message(Severity::info, what + path + ": starts from the file's initial pose (keyframe or init_qpos)");
    } else {
      o.robot.initial.clear();
      trial.objects.back() = o;
      e.message(Severity::warning,
                std::string(what) + "the file's initial pose is not used: " + posed.status().message());
    }
  }
  if (std::vector<std::string> moved = start_inside_limits(o, *cs); !moved.empty()) {
    trial.objects.back() = o;
    auto inside = scene::compile<float>(trial, e.doc.base_dir());
    if (!inside) {
      e.message(Severity::error, what + inside.status().message());
      return false;
    }
    cs = std::move(inside);
    std::string list;
    for (const std::string& s : moved) list += (list.empty() ? "" : ", ") + s;
    e.message(Severity::warning, what + path + ": the initial pose puts " + std::to_string(moved.size()) +
                                     " joint(s) outside their limits; they start at the nearer limit (" + list +
                                     "; degrees for hinges, m for slides)");
  } else {
    trial.objects.back() = o;  // fixed_base as the file has it
  }
  // lift it so that its lowest joint, centre of mass or shape clears the ground by 5 cm
  const scene::ObjectRange& r = cs->objects.back();
  const RigidModel& m = cs->model.rigid;
  std::vector<float> joints(size_t(m.body_count()) * kRigidJointFloats),
      shapes(size_t(m.shape_count()) * kRigidShapeFloats);
  rigid_vis_joints(m, cs->model.make_state(), joints.data());
  rigid_vis_shapes(m, cs->model.make_state(), shapes.data());
  float low = 1e30f;
  for (int b = r.body_begin; b < r.body_end; ++b)
    low = std::min({low, joints[size_t(b) * kRigidJointFloats + size_t(up)],
                    joints[size_t(b) * kRigidJointFloats + 6 + size_t(up)]});
  for (int k = 0; k < m.shape_count(); ++k) {
    const float* f = &shapes[size_t(k) * kRigidShapeFloats];
    if (int(f[11]) < r.body_begin || int(f[11]) >= r.body_end) continue;
    low = std::min(low, f[up] - std::sqrt(f[7] * f[7] + f[8] * f[8] + f[9] * f[9]));
  }
  if (low < 1e29f && low < 0.05f) o.robot.position[size_t(up)] = 0.05 - double(low);
  const std::optional<scene::Settings> settings = settings_for_added(e.doc.scene(), o);
  int index = e.doc.add_object(o, "Import " + path, settings ? &*settings : nullptr);
  if (settings) e.message(Severity::info, robot_contact_note());
  e.select(index);
  e.message(Severity::info, "imported " + path + " as robot \"" + e.doc.scene().objects[size_t(index)].name + "\" (" +
                                std::to_string(r.body_end - r.body_begin) + " bodies)");
  return true;
}

// ---- script commands

std::optional<RobotScriptResult> robot_script_command(Editor& e, const std::vector<std::string>& w) {
  const std::string& cmd = w[0];
  auto parse = [](const std::string& s, double* v) {
    char* end = nullptr;
    *v = std::strtod(s.c_str(), &end);
    return !s.empty() && !*end;
  };
  auto compare = [](double a, const std::string& op, double b) {
    const bool same = std::abs(a - b) <= 1e-6;
    return op == "<" ? a < b : op == ">" ? a > b : op == "=" ? same : op == "!=" ? !same : false;
  };
  if (cmd == "set-joint") {  // one drag of the slider: a few steps, one undo step
    double v = 0;
    if (w.size() < 4 || !parse(w[3], &v)) return RobotScriptResult{Status::error("set-joint ROBOT BODY VALUE")};
    int object = find_object(e, w[1]);
    if (object < 0) return RobotScriptResult{Status::error("set-joint: no object named \"" + w[1] + "\"")};
    scene::Object o = e.doc.scene().objects[size_t(object)];
    double from = 0;
    if (o.kind == scene::ObjectKind::robot)
      if (const std::vector<double>* q = robot_initial(o.robot, w[2], false, false, 1); q && !q->empty())
        from = (*q)[0];
    e.doc.end_merge();
    const uint64_t key = 0x6a09e667f3bcc908ull ^ uint64_t(object);
    for (int i = 1; i <= 4; ++i)
      if (Status st = robot_set_joint(e, object, w[2], from + (v - from) * i / 4.0, key); !st)
        return RobotScriptResult{st};
    e.doc.end_merge();
    e.sync();
    return RobotScriptResult{Status::ok(), RobotScriptWait::worker};
  }
  if (cmd == "select-body") {
    if (w.size() < 3) return RobotScriptResult{Status::error("select-body ROBOT BODY")};
    int object = find_object(e, w[1]);
    int b = find_body(e, object, w[2]);
    if (b < 0) return RobotScriptResult{Status::error("select-body: no body \"" + w[2] + "\" in \"" + w[1] + "\"")};
    robot_select_body(e, object, b);
    return RobotScriptResult{Status::ok(), RobotScriptWait::frames};
  }
  if (cmd == "import-urdf") {
    if (w.size() < 2) return RobotScriptResult{Status::error("import-urdf PATH")};
    import_robot(e, w[1]);  // a bad file becomes a message, as from the menu
    e.sync();
    return RobotScriptResult{Status::ok(), RobotScriptWait::worker};
  }
  if (cmd == "expect-joint") {
    double v = 0;
    if (w.size() < 5 || !parse(w[4], &v))
      return RobotScriptResult{Status::error("expect-joint ROBOT BODY <|>|=|!= VALUE")};
    int object = find_object(e, w[1]);
    int b = find_body(e, object, w[2]);
    if (b < 0) return RobotScriptResult{Status::error("expect-joint: no body \"" + w[2] + "\" in \"" + w[1] + "\"")};
    const State& s = robot_display_state(e);
    const size_t q = size_t(e.compiled()->model.rigid.joint_q_start[size_t(b)]);
    if (q >= s.joint_q.size()) return RobotScriptResult{Status::error("expect-joint: the joint has no coordinate")};
    const double got = double(s.joint_q[q]);
    std::printf("script: %s.%s q = %.6g\n", w[1].c_str(), w[2].c_str(), got);
    if (compare(got, w[3], v)) return RobotScriptResult{Status::ok()};
    return RobotScriptResult{
        Status::error("expected " + w[1] + "." + w[2] + " q " + w[3] + " " + w[4] + ", got " + std::to_string(got))};
  }
  if (cmd == "expect-contacts") {
    double n = 0;
    if (w.size() < 3 || !parse(w[2], &n)) return RobotScriptResult{Status::error("expect-contacts <|>|= N")};
    const RigidContactsT<float>* c = robot_display_contacts(e);
    const int got = c ? c->contact_count() : 0;
    if (compare(got, w[1], n)) return RobotScriptResult{Status::ok()};
    return RobotScriptResult{
        Status::error("expected robot contacts " + w[1] + " " + w[2] + ", got " + std::to_string(got))};
  }
  if (cmd == "expect-body") {
    if (w.size() < 2) return RobotScriptResult{Status::error("expect-body NAME|none")};
    int b = robot_selected_body(e);
    std::string got = b < 0 ? "none" : e.compiled()->model.rigid.body_name[size_t(b)];
    if (got == w[1]) return RobotScriptResult{Status::ok()};
    return RobotScriptResult{Status::error("expected body " + w[1] + " selected, got " + got)};
  }
  return std::nullopt;
}

}  // namespace adj::editor
