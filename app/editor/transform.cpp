// The viewport's transform tools: a translate gizmo (three axis handles drawn with ImGui
// over the scene) and Blender's grab key (G, X/Y/Z, typed numbers).
#include <GLFW/glfw3.h>  // key codes: ImGui 1.86 indexes keys by the GLFW backend's codes
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "app/editor/editor.h"
#include "engine/scene/compile.h"

namespace adj::editor {

namespace {

constexpr uint64_t k_gizmo_merge = 0x6a0b1e5ull;  // one drag of the gizmo: one undo step
constexpr uint64_t k_grab_merge = 0x6a0b1e6ull;
const ImU32 k_axis_colors[3] = {IM_COL32(230, 70, 70, 255), IM_COL32(90, 200, 80, 255), IM_COL32(70, 120, 240, 255)};

scene::Object translated(scene::Object o, const glm::dvec3& d) {
  auto add = [&](scene::V3& p) {
    for (int k = 0; k < 3; ++k) p[size_t(k)] += d[k];
  };
  switch (o.kind) {
    case scene::ObjectKind::cloth:
      add(o.cloth.position);
      break;
    case scene::ObjectKind::soft:
      add(o.soft.position);
      break;
    case scene::ObjectKind::collider:
      add(o.collider.position);
      break;
    case scene::ObjectKind::target:
      add(o.target.position);
      break;
    case scene::ObjectKind::particles:
      for (auto& p : o.particles.particles) add(p.position);
      break;
    case scene::ObjectKind::robot:
      add(o.robot.position);
      break;
  }
  return o;
}

// rotation R = Rz Ry Rx from XYZ Euler degrees (engine/scene/compile.cpp), and back
glm::dmat3 euler_matrix(const scene::V3& deg) {
  const double k = 3.14159265358979323846 / 180.0;
  const double a = deg[0] * k, b = deg[1] * k, c = deg[2] * k;
  glm::dmat3 rx(1, 0, 0, 0, std::cos(a), std::sin(a), 0, -std::sin(a), std::cos(a));  // columns
  glm::dmat3 ry(std::cos(b), 0, -std::sin(b), 0, 1, 0, std::sin(b), 0, std::cos(b));
  glm::dmat3 rz(std::cos(c), std::sin(c), 0, -std::sin(c), std::cos(c), 0, 0, 0, 1);
  return rz * ry * rx;
}

scene::V3 matrix_euler(const glm::dmat3& m) {  // m[col][row]
  const double k = 180.0 / 3.14159265358979323846;
  const double s = std::clamp(-m[0][2], -1.0, 1.0);
  double a, b = std::asin(s), c;
  if (std::abs(s) < 0.9999999) {
    a = std::atan2(m[1][2], m[2][2]);
    c = std::atan2(m[0][1], m[0][0]);
  } else {  // gimbal lock: all of the x turn goes to z
    a = 0;
    c = std::atan2(-m[1][0], m[1][1]);
  }
  auto clean = [&](double r) {  // 1e-12 noise from the trigonometry is not an edit
    double d = r * k;
    return std::abs(d - std::round(d)) < 1e-9 ? std::round(d) : d;
  };
  return {clean(a), clean(b), clean(c)};
}

glm::dvec3 d3(const scene::V3& v) { return {v[0], v[1], v[2]}; }
scene::V3 v3(const glm::dvec3& v) { return {v.x, v.y, v.z}; }

// turned by r about the point c (a placed object turns its placement: origin and axes)
Result<scene::Object> rotated(scene::Object o, const glm::dmat3& r, const glm::dvec3& c) {
  auto place = [&](scene::V3& p, scene::V3* rot) {
    p = v3(c + r * (d3(p) - c));
    if (rot) *rot = matrix_euler(r * euler_matrix(*rot));
  };
  switch (o.kind) {
    case scene::ObjectKind::cloth:
      place(o.cloth.position, &o.cloth.rotation);
      break;
    case scene::ObjectKind::soft:
      if (o.soft.mesh.empty()) return Status::error(o.name + ": a soft-body grid cannot turn (a soft mesh can)");
      place(o.soft.position, &o.soft.rotation);
      break;
    case scene::ObjectKind::collider:
      if (o.collider.kind == scene::ColliderKind::plane)
        o.collider.normal = v3(r * d3(o.collider.normal));
      else
        place(o.collider.position, &o.collider.rotation);
      break;
    case scene::ObjectKind::target:
      place(o.target.position, nullptr);
      for (auto& p : o.target.points) place(p, nullptr);
      break;
    case scene::ObjectKind::particles:
      for (auto& p : o.particles.particles) {
        place(p.position, nullptr);
        p.velocity = v3(r * d3(p.velocity));
      }
      break;
    case scene::ObjectKind::robot:
      place(o.robot.position, &o.robot.rotation);
      break;
  }
  return o;
}

// scaled by k about the point c: positions, sizes and mesh scales
Result<scene::Object> scaled(scene::Object o, double k, const glm::dvec3& c) {
  if (!(k > 1e-6) || !std::isfinite(k)) return Status::error("scale factor must be > 0");
  auto place = [&](scene::V3& p) { p = v3(c + k * (d3(p) - c)); };
  switch (o.kind) {
    case scene::ObjectKind::cloth:
      place(o.cloth.position);
      if (o.cloth.mesh.empty())
        o.cloth.cell *= k;
      else
        o.cloth.scale *= k;
      break;
    case scene::ObjectKind::soft:  // the same cells, bigger: the same particles
      place(o.soft.position);
      o.soft.cell *= k;
      if (!o.soft.mesh.empty()) o.soft.scale *= k;
      break;
    case scene::ObjectKind::collider: {
      auto& cl = o.collider;
      place(cl.position);
      if (cl.kind == scene::ColliderKind::mesh)
        cl.scale *= k;
      else if (cl.kind == scene::ColliderKind::box || cl.kind == scene::ColliderKind::capsule)
        for (double& v : cl.size) v *= k;
      else if (cl.kind == scene::ColliderKind::sphere)
        cl.size[0] *= k;
      break;
    }
    case scene::ObjectKind::target:
      o.target.radius *= k;
      for (auto& p : o.target.points) place(p);
      break;
    case scene::ObjectKind::particles:
      for (auto& p : o.particles.particles) place(p.position);
      break;
    case scene::ObjectKind::robot:
      return Status::error(o.name + ": a robot cannot be scaled");
  }
  return o;
}

float distance_to_segment(glm::vec2 p, glm::vec2 a, glm::vec2 b) {
  glm::vec2 ab = b - a;
  float t = glm::clamp(glm::dot(p - a, ab) / std::max(glm::dot(ab, ab), 1e-6f), 0.0f, 1.0f);
  return glm::length(p - (a + t * ab));
}

}  // namespace

bool Editor::selection_center(glm::vec3* c) {
  if (!compiled_ || selected_ < 0 || selected_ >= int(doc.scene().objects.size()) ||
      selected_ >= int(compiled_->objects.size()))
    return false;
  const scene::Object& o = doc.scene().objects[size_t(selected_)];
  const scene::ObjectRange& r = compiled_->objects[size_t(selected_)];
  if (o.kind == scene::ObjectKind::collider && o.collider.kind == scene::ColliderKind::ground) return false;
  if (r.particle_end > r.particle_begin) {
    // the initial state: what the document says, and what a move changes
    const auto& q = compiled_->model.particle_q;
    glm::vec3 sum(0.0f);
    for (int i = r.particle_begin; i < r.particle_end; ++i)
      sum += glm::vec3(q[size_t(i)].x, q[size_t(i)].y, q[size_t(i)].z);
    *c = sum / float(r.particle_end - r.particle_begin);
    return true;
  }
  const scene::V3& p = o.kind == scene::ObjectKind::target  ? o.target.position
                       : o.kind == scene::ObjectKind::robot ? o.robot.position  // its root joint frames
                                                            : o.collider.position;
  *c = glm::vec3(float(p[0]), float(p[1]), float(p[2]));
  return true;
}

std::string Editor::grab_label() const {
  const char* what[] = {"Move ", "Rotate ", "Scale "};
  return what[int(grab_mode_)] + grab_start_.name;
}

// rotate or scale: the typed value, or the mouse about the selection's centre on screen
void Editor::apply_grab(bool typed, glm::vec2 c2, const glm::vec2* tips, float len) {
  (void)tips;
  (void)len;
  const glm::vec2 a = grab_start_px_ - c2, b = grab_start_px_ + grab_mouse_ - c2;
  glm::dvec3 c(grab_center_);
  // shapes turn and scale about their own position, exactly (the centre on screen is float)
  if (grab_start_.kind == scene::ObjectKind::collider) c = d3(grab_start_.collider.position);
  if (grab_start_.kind == scene::ObjectKind::target) c = d3(grab_start_.target.position);
  Result<scene::Object> out = Status::error("");
  if (grab_mode_ == GrabMode::rotate) {
    double deg = 0;
    if (typed) {
      deg = std::atof(grab_typed_.c_str());
    } else if (glm::length(a) > 1 && glm::length(b) > 1) {  // the turn of the mouse around the centre
      deg = double(std::atan2(a.x * b.y - a.y * b.x, glm::dot(a, b))) * 180.0 / 3.14159265358979323846;
      deg = -deg;  // screen y points down
    }
    glm::dvec3 axis = grab_axis_ >= 0 ? glm::dvec3(0.0) : -glm::dvec3(camera.forward());
    if (grab_axis_ >= 0) axis[grab_axis_] = 1.0;
    const double t = deg * 3.14159265358979323846 / 180.0;
    // Rodrigues: R = cos t I + sin t [axis]x + (1 - cos t) axis axis^T
    glm::dmat3 r = glm::dmat3(std::cos(t));
    glm::dmat3 kx(0, axis.z, -axis.y, -axis.z, 0, axis.x, axis.y, -axis.x, 0);
    r += std::sin(t) * kx + (1.0 - std::cos(t)) * glm::outerProduct(axis, axis);
    if (deg == 0 && !grab_moved_) return;
    out = rotated(grab_start_, r, c);
  } else {
    double k = 1;
    if (typed)
      k = std::atof(grab_typed_.c_str());
    else if (glm::length(a) > 1)
      k = double(glm::length(b) / glm::length(a));
    if (k == 1 && !grab_moved_) return;
    out = scaled(grab_start_, k, c);
  }
  if (!out) {
    if (!grab_moved_) message(Severity::warning, out.status().message());
    grab_active_ = false;
    return;
  }
  doc.set_object(selected_, *out, grab_label(), k_grab_merge);
  grab_moved_ = true;
}

void Editor::move_selection(const glm::dvec3& delta, uint64_t key) {
  const scene::Object& start = key == k_grab_merge ? grab_start_ : drag_start_;
  doc.set_object(selected_, translated(start, delta), "Move " + start.name, key);
}

bool Editor::gizmo_handle(int axis, glm::vec2* centre, glm::vec2* tip) const {
  if (!gizmo_shown_ || axis < 0 || axis > 2) return false;
  *centre = gizmo_px_[0];
  *tip = gizmo_px_[axis + 1];
  return true;
}

bool Editor::transform_tools(float width, float height) {
  ImGuiIO& io = ImGui::GetIO();
  gizmo_shown_ = false;
  glm::vec3 center;
  if (!selection_center(&center)) {
    grab_active_ = false;
    gizmo_axis_ = -1;
    return false;
  }
  const glm::vec2 viewport(width, height);
  const float len = 0.18f * camera.distance;  // handle length [m]
  glm::vec3 c_px = camera.project(center, viewport);
  if (c_px.z < 0.0f || c_px.z > 1.0f) return false;  // behind the camera
  glm::vec2 c2(c_px.x, c_px.y), tips[3];
  for (int a = 0; a < 3; ++a) {
    glm::vec3 axis(0.0f);
    axis[a] = 1.0f;
    glm::vec3 t = camera.project(center + axis * len, viewport);
    tips[a] = glm::vec2(t.x, t.y);
  }

  gizmo_shown_ = true;
  gizmo_px_[0] = c2;
  for (int a = 0; a < 3; ++a) gizmo_px_[a + 1] = tips[a];

  // Blender's G/R/S, then X/Y/Z, digits; Enter or click confirms, Esc or right click cancels
  const bool keys_free = !grab_active_ && gizmo_axis_ < 0 && !io.WantTextInput && !io.KeyCtrl;
  int start = -1;
  if (keys_free && ImGui::IsKeyPressed(GLFW_KEY_G, false)) start = int(GrabMode::move);
  if (keys_free && ImGui::IsKeyPressed(GLFW_KEY_R, false)) start = int(GrabMode::rotate);
  if (keys_free && ImGui::IsKeyPressed(GLFW_KEY_S, false)) start = int(GrabMode::scale);
  if (start >= 0) {
    grab_mode_ = GrabMode(start);
    grab_center_ = center;
    grab_start_px_ = glm::vec2(io.MousePos.x, io.MousePos.y);
    grab_active_ = true;
    grab_axis_ = -1;
    grab_typed_.clear();
    grab_mouse_ = glm::vec2(0.0f);
    grab_moved_ = false;
    grab_start_ = doc.scene().objects[size_t(selected_)];
    doc.end_merge();
  }
  if (grab_active_) {
    run_grab(c2, tips, len, height);
    return true;
  }
  return drag_gizmo(c2, tips, len);
}

// one frame of a G/R/S grab: its keys (axis, typed value, confirm, cancel), the move or the
// rotation/scale (apply_grab), and the hint at the bottom of the view
void Editor::run_grab(glm::vec2 c2, const glm::vec2* tips, float len, float height) {
  ImGuiIO& io = ImGui::GetIO();
  for (int a = 0; a < 3; ++a)
    if (ImGui::IsKeyPressed(GLFW_KEY_X + a, false)) grab_axis_ = grab_axis_ == a ? -1 : a;
  for (int k = 0; k <= 9; ++k)
    if (ImGui::IsKeyPressed(GLFW_KEY_0 + k, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_0 + k, false))
      grab_typed_ += char('0' + k);
  if (ImGui::IsKeyPressed(GLFW_KEY_PERIOD, false)) grab_typed_ += '.';
  if (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false))
    grab_typed_ = grab_typed_.starts_with("-") ? grab_typed_.substr(1) : "-" + grab_typed_;
  if (ImGui::IsKeyPressed(GLFW_KEY_BACKSPACE, false) && !grab_typed_.empty()) grab_typed_.pop_back();
  grab_mouse_ += glm::vec2(io.MouseDelta.x, io.MouseDelta.y);

  const bool typed = !grab_typed_.empty() && grab_typed_ != "-" && grab_typed_ != ".";
  if (grab_mode_ != GrabMode::move) {
    apply_grab(typed, c2, tips, len);
  } else {
    glm::dvec3 delta(0.0);
    if (typed) {
      double v = std::atof(grab_typed_.c_str());
      if (grab_axis_ >= 0)
        delta[grab_axis_] = v;
      else
        delta = glm::dvec3(camera.right()) * v;  // no axis: along the view's x
    } else {
      // the mouse, in world units at the selection's depth
      float world_per_px = 2.0f * camera.distance * std::tan(camera.fov_y * 0.5f) / height;
      glm::vec3 d = (camera.right() * grab_mouse_.x - camera.up() * grab_mouse_.y) * world_per_px;
      if (grab_axis_ >= 0) {
        glm::vec2 s = tips[grab_axis_] - c2;
        float along = glm::dot(grab_mouse_, s) / std::max(glm::dot(s, s), 1e-6f) * len;
        d = glm::vec3(0.0f);
        d[grab_axis_] = along;
      }
      delta = glm::dvec3(d);
    }
    if (delta != glm::dvec3(0.0) || grab_moved_) {
      move_selection(delta, k_grab_merge);
      grab_moved_ = true;
    }
  }
  bool confirm = ImGui::IsKeyPressed(GLFW_KEY_ENTER, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ENTER, false) ||
                 (!io.WantCaptureMouse && ImGui::IsMouseClicked(ImGuiMouseButton_Left));
  bool cancel = ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false) || ImGui::IsMouseClicked(ImGuiMouseButton_Right);
  if (cancel) {
    if (grab_moved_ && doc.undo_label() == grab_label()) doc.undo();
    grab_active_ = false;
  } else if (confirm) {
    doc.end_merge();
    grab_active_ = false;
  }
  // what is happening, at the bottom of the view
  char buf[160];
  const char* axes[] = {"X", "Y", "Z"};
  const char* what[] = {"Move", "Rotate", "Scale"};
  const char* unit[] = {"distance ", "degrees ", "factor "};
  const char* hint[] = {"type a distance", "type degrees", "type a factor"};
  const int m = int(grab_mode_);
  std::snprintf(buf, sizeof buf, "%s %s  %s%s   (X/Y/Z axis, %s, Enter confirms, Esc cancels)", what[m],
                grab_mode_ == GrabMode::scale    ? "uniform"
                : grab_axis_ >= 0                ? axes[grab_axis_]
                : grab_mode_ == GrabMode::rotate ? "view"
                                                 : "free",
                grab_typed_.empty() ? "" : unit[m], grab_typed_.c_str(), hint[m]);
  ImGui::GetBackgroundDrawList()->AddText(ImVec2(c2.x - 120, c2.y + 40), IM_COL32(255, 240, 200, 255), buf);
  if (grab_axis_ >= 0) {  // the constraint line through the selection
    glm::vec2 d = tips[grab_axis_] - c2;
    ImGui::GetBackgroundDrawList()->AddLine(ImVec2(c2.x - d.x * 20, c2.y - d.y * 20),
                                            ImVec2(c2.x + d.x * 20, c2.y + d.y * 20), k_axis_colors[grab_axis_], 1.5f);
  }
}

// the gizmo's three arrows: hover, drag along one axis, and draw them; true while the mouse
// is on a handle or drags one
bool Editor::drag_gizmo(glm::vec2 c2, const glm::vec2* tips, float len) {
  ImGuiIO& io = ImGui::GetIO();
  const glm::vec2 mouse(io.MousePos.x, io.MousePos.y);
  if (gizmo_axis_ < 0) {
    gizmo_hover_ = -1;
    if (!io.WantCaptureMouse) {
      float best = 7.0f;
      for (int a = 0; a < 3; ++a) {
        float d = distance_to_segment(mouse, c2 + (tips[a] - c2) * 0.15f, tips[a]);
        if (d < best) best = d, gizmo_hover_ = a;
      }
    }
    if (gizmo_hover_ >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      gizmo_axis_ = gizmo_hover_;
      gizmo_drag_ = 0.0f;
      drag_start_ = doc.scene().objects[size_t(selected_)];
      doc.end_merge();
    }
  }
  if (gizmo_axis_ >= 0) {
    glm::vec2 s = tips[gizmo_axis_] - c2;
    gizmo_drag_ += glm::dot(glm::vec2(io.MouseDelta.x, io.MouseDelta.y), s) / std::max(glm::dot(s, s), 1e-6f) * len;
    glm::dvec3 delta(0.0);
    delta[gizmo_axis_] = gizmo_drag_;
    if (gizmo_drag_ != 0.0f) move_selection(delta, k_gizmo_merge);
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      doc.end_merge();
      gizmo_axis_ = -1;
    }
  }
  // draw: three arrows from the centre
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  for (int a = 0; a < 3; ++a) {
    bool hot = a == gizmo_axis_ || (gizmo_axis_ < 0 && a == gizmo_hover_);
    ImU32 col = hot ? IM_COL32(255, 230, 120, 255) : k_axis_colors[a];
    dl->AddLine(ImVec2(c2.x, c2.y), ImVec2(tips[a].x, tips[a].y), col, hot ? 4.0f : 2.5f);
    dl->AddCircleFilled(ImVec2(tips[a].x, tips[a].y), hot ? 6.0f : 4.5f, col);
  }
  dl->AddCircleFilled(ImVec2(c2.x, c2.y), 3.0f, IM_COL32(255, 255, 255, 220));
  return gizmo_axis_ >= 0 || gizmo_hover_ >= 0;
}

void Editor::start_pull(const render::DrawList& list, render::ObjectId object, uint32_t element) {
  pull_particle_ = -1;
  if (!compiled_ || object == 0 || object > compiled_->objects.size() || element == ~0u) return;
  const scene::ObjectRange& r = compiled_->objects[object - 1];
  int particle = -1;
  for (const auto& m : list.meshes)  // a triangle of a cloth or soft-body surface: its first corner
    if (m.id == object && m.indices.host && 3 * size_t(element) < m.indices.count)
      particle = int(m.indices.host[3 * element]);
  for (const auto& sp : list.spheres)  // a particle of a particle system
    if (sp.id == object) particle = r.particle_begin + int(element);
  const State& st = display_state();
  if (particle < r.particle_begin || particle >= r.particle_end || particle >= st.particle_count()) return;
  pull_particle_ = particle;
  message(Severity::info, "pulling particle " + std::to_string(particle - r.particle_begin) + " of " + r.name);
  const auto& q = st.particle_q[size_t(particle)];
  pull_anchor_ = glm::vec3(q.x, q.y, q.z);
  timeline_frame = -1;
}

bool Editor::update_pull(float width, float height) {
  if (pull_particle_ < 0) return false;
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) || !compiled_ || pull_particle_ >= display_state().particle_count()) {
    worker.pull(-1, {});
    pull_particle_ = -1;
    return false;
  }
  // the mouse on the plane through the grabbed point, facing the camera
  const ImVec2 m = ImGui::GetIO().MousePos;
  render::Ray ray = camera.ray(glm::vec2(m.x, m.y), glm::vec2(width, height));
  glm::vec3 n = camera.forward();
  float denom = glm::dot(ray.direction, n);
  if (std::abs(denom) < 1e-6f) return true;
  glm::vec3 target = ray.origin + ray.direction * (glm::dot(pull_anchor_ - ray.origin, n) / denom);
  worker.pull(pull_particle_, {target.x, target.y, target.z});
  // the spring, drawn from the particle to the cursor
  const auto& q = display_state().particle_q[size_t(pull_particle_)];
  glm::vec3 a = camera.project(glm::vec3(q.x, q.y, q.z), glm::vec2(width, height));
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  dl->AddLine(ImVec2(a.x, a.y), m, IM_COL32(255, 220, 90, 255), 2.0f);
  dl->AddCircleFilled(ImVec2(a.x, a.y), 4.0f, IM_COL32(255, 220, 90, 255));
  return true;
}

}  // namespace adj::editor
