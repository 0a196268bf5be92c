// the Simulation panel's worlds drawn side by side: world 0 (selection, contacts, arrows, pulls
// and the timeline) where the scene is, worlds 1.. in a grid beside it, drawn bare (no overlays,
// not pickable); the inspected world is outlined on the ground, and the panel shows its
// randomized factors and where the selected object is in it. Each world's list comes from its own SceneView (the
// list's arrays live in the view) and is moved to its grid cell: meshes by their transform,
// spheres, shape instances and lines by copies of their points.
#include <imgui.h>
#include <glm/gtc/matrix_transform.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "app/editor/editor.h"
#include "engine/model/randomize.h"
#include "engine/scene/compile.h"

namespace adj::editor {

namespace {

// the grid: ceil(sqrt(n)) columns along the scene's first horizontal axis, rows along the other
glm::vec3 world_offset(int w, int n, float spacing, bool z_up) {
  const int cols = int(std::ceil(std::sqrt(double(n))));
  const float a = float(w % cols) * spacing, b = float(w / cols) * spacing;
  return z_up ? glm::vec3(a, -b, 0.0f) : glm::vec3(a, 0.0f, b);
}

}  // namespace

namespace {

// the centre of object `index`'s particles, else its robot's root body, in state s
std::optional<glm::vec3> object_centre_in(const scene::CompiledScene& cs, int index, const State& s) {
  if (index < 0 || index >= int(cs.objects.size())) return std::nullopt;
  const scene::ObjectRange& r = cs.objects[std::size_t(index)];
  if (r.particle_end > r.particle_begin && std::size_t(r.particle_end) <= s.particle_q.size()) {
    glm::vec3 c(0.0f);
    for (int p = r.particle_begin; p < r.particle_end; ++p)
      c += glm::vec3(s.particle_q[std::size_t(p)].x, s.particle_q[std::size_t(p)].y, s.particle_q[std::size_t(p)].z);
    return c / float(r.particle_end - r.particle_begin);
  }
  if (r.body_end > r.body_begin) {
    const int q = cs.model.rigid.joint_q_start[std::size_t(r.body_begin)];
    if (cs.model.rigid.joint_type[std::size_t(r.body_begin)] == RIGID_JOINT_FREE &&
        std::size_t(q + 3) <= s.joint_q.size())
      return glm::vec3(s.joint_q[std::size_t(q)], s.joint_q[std::size_t(q + 1)], s.joint_q[std::size_t(q + 2)]);
  }
  return std::nullopt;
}

}  // namespace

void Editor::draw_inspected_world() {
  if (world_count <= 1) return;
  inspected_world = std::clamp(inspected_world, 0, world_count - 1);
  ImGui::SetNextItemWidth(-80);
  ImGui::InputInt("inspect", &inspected_world, 1, 4);
  inspected_world = std::clamp(inspected_world, 0, world_count - 1);
  ui_items.note("simulation/inspect-world");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the world outlined in the grid, whose parameters and state show below");
  if (!compiled_) return;
  const scene::Scene& s = doc.scene();
  const std::uint64_t seed = s.tasks.empty() ? 0 : s.tasks.front().seed;  // as the worker draws them
  const std::string factors = describe_world(compiled_->randomize, seed, inspected_world);
  ImGui::TextWrapped("world %d: %s", inspected_world,
                     factors.empty() ? "the scene's parameters (nothing randomized)" : factors.c_str());
  const State* st = inspected_world == 0 ? &snap.state
                    : std::size_t(inspected_world - 1) < snap.world_states.size()
                        ? &snap.world_states[std::size_t(inspected_world - 1)]
                        : nullptr;
  if (!st || selected_ < 0 || !snap_current()) return;
  if (auto c = object_centre_in(*compiled_, selected_, *st))
    ImGui::Text("%s at (%.3f, %.3f, %.3f) m", s.objects[std::size_t(selected_)].name.c_str(), c->x, c->y, c->z);
}

void Editor::set_world_count(int n) {
  world_count = std::clamp(n, 1, Worker::k_max_worlds);
  inspected_world = std::min(inspected_world, world_count - 1);
  worker.set_world_count(world_count);
  timeline_frame = -1;
  if (world_count > 1)
    world_fit_pending = true;
  else
    camera_fit_pending = true;
}

void Editor::add_world_copies(render::DrawList& list, const app::Overlays& overlays,
                              const std::function<bool(render::ObjectId)>& hidden) {
  world_points_.clear();
  world_spheres_.clear();
  world_shapes_.clear();
  const int n = int(snap.world_states.size()) + 1;
  if (n <= 1 || !compiled_ || !snap_current()) return;
  const bool z_up = doc.scene().settings.up == "z";
  if (int(world_views_.size()) != n - 1 || world_views_revision_ != compiled_revision_) {
    world_views_.clear();
    for (int w = 1; w < n; ++w) world_views_.push_back(std::make_unique<app::SceneView>(doc.scene(), *compiled_));
    world_views_revision_ = compiled_revision_;
    world_spacing_ = 0;  // measured on the first copy below
  }
  app::Overlays bare = overlays;
  bare.contacts = bare.vectors = false;
  // reserve first: the copies' ArrayRefs point into these
  std::size_t points = 0, spheres = 0, shapes = 0;
  std::vector<const render::DrawList*> lists;
  for (int w = 1; w < n; ++w) {
    app::SceneView& v = *world_views_[std::size_t(w - 1)];
    const State& s = snap.world_states[std::size_t(w - 1)];
    v.set_selected(0);
    v.set_robot_highlight(-1);
    v.set_robot_contacts(nullptr);
    if (compiled_->has_robots()) v.set_robot_state(s);
    const render::DrawList& l = v.build(s, nullptr, nullptr, bare);
    lists.push_back(&l);
    for (const auto& d : l.lines) points += d.positions.count;
    for (const auto& d : l.spheres) spheres += d.spheres.count;
    for (const auto& d : l.shapes) shapes += d.instances.count;
  }
  if (world_spacing_ == 0) {
    // the cells: what a world draws (not the ground: planes are shared) across the ground, and a margin
    glm::vec3 lo(1e30f), hi(-1e30f);
    auto add = [&](glm::vec3 p) { lo = glm::min(lo, p), hi = glm::max(hi, p); };
    const render::DrawList& l = *lists[0];
    for (const auto& d : l.meshes)
      for (std::size_t k = 0; d.positions.host && k < d.positions.count; ++k)
        add(glm::vec3(d.transform * glm::vec4(d.positions.host[k], 1.0f)));
    for (const auto& d : l.spheres)
      for (std::size_t k = 0; d.spheres.host && k < d.spheres.count; ++k) {
        const glm::vec4 s = d.spheres.host[k];
        add(glm::vec3(s) - s.w), add(glm::vec3(s) + s.w);
      }
    for (const auto& d : l.shapes)
      for (std::size_t k = 0; d.kind != render::ShapeKind::plane && d.instances.host && k < d.instances.count; ++k) {
        const render::ShapeInstance& i = d.instances.host[k];
        const float r = glm::length(i.size);
        add(i.position - r), add(i.position + r);
      }
    const glm::vec3 size = hi - lo;
    const float extent = lo.x <= hi.x ? std::max(size.x, z_up ? size.y : size.z) : 1.0f;
    world_spacing_ = std::clamp(1.25f * extent + 0.2f, 0.3f, 50.0f);
    if (lo.x > hi.x) lo = hi = glm::vec3(0.0f);
    world_extent_lo_ = lo;
    world_extent_hi_ = hi;
  }
  if (std::exchange(world_fit_pending, false)) {  // the camera takes in every world, from where it looks
    glm::vec3 lo = world_extent_lo_, hi = world_extent_hi_;
    for (int w = 1; w < n; ++w) {
      const glm::vec3 off = world_offset(w, n, world_spacing_, z_up);
      lo = glm::min(lo, world_extent_lo_ + off);
      hi = glm::max(hi, world_extent_hi_ + off);
    }
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    camera.fit(lo, hi, free_aspect(vp->Size.x, vp->Size.y));
  }
  world_points_.reserve(points + 5);  // and the inspected world's outline
  world_spheres_.reserve(spheres);
  world_shapes_.reserve(shapes);
  for (int w = 1; w < n; ++w) {
    const render::DrawList& l = *lists[std::size_t(w - 1)];
    const glm::vec3 off = world_offset(w, n, world_spacing_, z_up);
    for (render::MeshDraw d : l.meshes) {
      if (hidden(d.id) || !d.positions.host) continue;
      d.transform = glm::translate(glm::mat4(1.0f), off) * d.transform;
      d.wireframe = false;
      d.id = 0;
      list.meshes.push_back(d);
    }
    for (render::SphereDraw d : l.spheres) {
      if (hidden(d.id) || !d.spheres.host) continue;
      const std::size_t first = world_spheres_.size();
      for (std::size_t k = 0; k < d.spheres.count; ++k)
        world_spheres_.push_back(d.spheres.host[k] + glm::vec4(off, 0.0f));
      d.spheres = render::ArrayRef<glm::vec4>(std::span(world_spheres_.data() + first, d.spheres.count));
      d.id = 0;
      list.spheres.push_back(d);
    }
    for (render::ShapeDraw d : l.shapes) {
      if (hidden(d.id) || !d.instances.host || d.kind == render::ShapeKind::plane) continue;
      const std::size_t first = world_shapes_.size();
      for (std::size_t k = 0; k < d.instances.count; ++k) {
        world_shapes_.push_back(d.instances.host[k]);
        world_shapes_.back().position += off;
      }
      d.instances = render::ArrayRef<render::ShapeInstance>(std::span(world_shapes_.data() + first, d.instances.count));
      d.id = 0;
      list.shapes.push_back(d);
    }
    for (render::LineDraw d : l.lines) {
      if (hidden(d.id) || !d.positions.host) continue;
      const std::size_t first = world_points_.size();
      for (std::size_t k = 0; k < d.positions.count; ++k) world_points_.push_back(d.positions.host[k] + off);
      d.positions = render::ArrayRef<glm::vec3>(std::span(world_points_.data() + first, d.positions.count));
      d.id = 0;
      list.lines.push_back(d);
    }
    if (l.bounds_lo.x <= l.bounds_hi.x) {
      list.bounds_lo = glm::min(list.bounds_lo, l.bounds_lo + off);
      list.bounds_hi = glm::max(list.bounds_hi, l.bounds_hi + off);
    }
  }
  // the inspected world's cell outlined at the height of what it draws lowest
  const int k = std::clamp(inspected_world, 0, n - 1);
  const glm::vec3 off = world_offset(k, n, world_spacing_, z_up), lo = world_extent_lo_ + off,
                  hi = world_extent_hi_ + off;
  const float margin = 0.1f * world_spacing_;
  const std::size_t first = world_points_.size();
  const float a0 = lo.x - margin, a1 = hi.x + margin;
  if (z_up) {
    const float b0 = lo.y - margin, b1 = hi.y + margin;
    for (glm::vec3 p : {glm::vec3(a0, b0, lo.z), glm::vec3(a1, b0, lo.z), glm::vec3(a1, b1, lo.z),
                        glm::vec3(a0, b1, lo.z), glm::vec3(a0, b0, lo.z)})
      world_points_.push_back(p);
  } else {
    const float b0 = lo.z - margin, b1 = hi.z + margin;
    for (glm::vec3 p : {glm::vec3(a0, lo.y, b0), glm::vec3(a1, lo.y, b0), glm::vec3(a1, lo.y, b1),
                        glm::vec3(a0, lo.y, b1), glm::vec3(a0, lo.y, b0)})
      world_points_.push_back(p);
  }
  render::LineDraw outline;
  outline.positions = render::ArrayRef<glm::vec3>(std::span(world_points_.data() + first, 5));
  outline.color = glm::vec4(1.0f, 0.8f, 0.2f, 1.0f);
  outline.width = 3.0f;
  outline.depth_test = false;
  list.lines.push_back(outline);
}

}  // namespace adj::editor
