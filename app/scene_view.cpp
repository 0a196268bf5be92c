#include "app/scene_view.h"

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>

#include "engine/rigid/rigid_vis.h"
#include "render/colormap.h"

namespace adj::app {

namespace {

// sRGB colours for objects, in document order
const glm::vec4 k_palette[] = {
    {0.90f, 0.47f, 0.22f, 1.0f}, {0.26f, 0.55f, 0.85f, 1.0f}, {0.35f, 0.72f, 0.45f, 1.0f},
    {0.80f, 0.35f, 0.55f, 1.0f}, {0.90f, 0.75f, 0.30f, 1.0f}, {0.55f, 0.45f, 0.85f, 1.0f},
};
const uint32_t k_collider_color = 0xff8c8a86;  // RGBA8 (R low byte): warm grey
const uint32_t k_target_color = 0xff4fc25a;    // green

glm::vec3 g3(const scene::V3& v) { return {float(v[0]), float(v[1]), float(v[2])}; }

// R = Rz Ry Rx from XYZ Euler degrees, as engine/scene/compile.cpp
glm::quat euler_quat(const scene::V3& deg) {
  const float k = 3.14159265358979f / 180.0f;
  glm::quat qx = glm::angleAxis(float(deg[0]) * k, glm::vec3(1, 0, 0));
  glm::quat qy = glm::angleAxis(float(deg[1]) * k, glm::vec3(0, 1, 0));
  glm::quat qz = glm::angleAxis(float(deg[2]) * k, glm::vec3(0, 0, 1));
  return qz * qy * qx;
}

// the rotation taking +y to n
glm::quat up_to(glm::vec3 n) {
  n = glm::normalize(n);
  glm::vec3 y(0, 1, 0);
  float c = glm::dot(y, n);
  if (c > 0.9999f) return glm::quat(1, 0, 0, 0);
  if (c < -0.9999f) return glm::angleAxis(3.14159265358979f, glm::vec3(1, 0, 0));
  glm::vec3 axis = glm::normalize(glm::cross(y, n));
  return glm::angleAxis(std::acos(c), axis);
}

// glm vectors as the packed floats engine/vis writes (null for an empty array, never UB)
static_assert(sizeof(glm::vec3) == 3 * sizeof(float) && sizeof(glm::vec4) == 4 * sizeof(float));
template <class V>
float* floats(std::vector<V>& v) {
  return reinterpret_cast<float*>(v.data());
}

void grow(glm::vec3& lo, glm::vec3& hi, glm::vec3 p, float r) {
  lo = glm::min(lo, p - glm::vec3(r));
  hi = glm::max(hi, p + glm::vec3(r));
}

}  // namespace

SceneView::SceneView(const scene::Scene& doc, const scene::CompiledScene& cs)
    : cs_(cs), robot_state_(cs.rigid_initial) {
  const Model& m = cs.model;
  for (size_t oi = 0; oi < cs.objects.size() && oi < doc.objects.size(); ++oi) {
    const scene::ObjectRange& r = cs.objects[oi];
    const scene::Object& o = doc.objects[oi];
    const uint32_t id = uint32_t(oi + 1);
    const glm::vec4 color = k_palette[oi % std::size(k_palette)];
    switch (o.kind) {
      case scene::ObjectKind::cloth:
      case scene::ObjectKind::soft:
        meshes_.push_back({vis::extract_surface(m, r.tri_begin, r.tri_end, r.tet_begin, r.tet_end), color,
                           o.kind == scene::ObjectKind::cloth, id});
        break;
      case scene::ObjectKind::particles:
        particle_objects_.push_back({r.particle_begin, r.particle_end, r.spring_begin, r.spring_end, id, color});
        break;
      case scene::ObjectKind::robot:
        if (body_object_.size() < size_t(r.body_end)) body_object_.resize(size_t(r.body_end), 0);
        for (int b = r.body_begin; b < r.body_end; ++b) body_object_[size_t(b)] = id;
        break;
      case scene::ObjectKind::target: {
        float rad = float(o.target.radius);
        glm::vec3 p = g3(o.target.position);
        shapes_.push_back({render::ShapeKind::ring, {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(rad, rad * 0.6f, 0.0f), k_target_color}}, id});
        shapes_.push_back({render::ShapeKind::sphere, {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(rad * 0.25f), k_target_color}}, id});
        grow(static_lo_, static_hi_, p, rad);
        break;
      }
      case scene::ObjectKind::collider: {
        const scene::Collider& c = o.collider;
        glm::vec3 p = g3(c.position);
        switch (c.kind) {
          case scene::ColliderKind::ground:
            ground_ = true;
            ground_height_ = float(c.position[1]);
            break;
          case scene::ColliderKind::plane:
            shapes_.push_back({render::ShapeKind::plane, {{p, 0.0f, up_to(g3(c.normal)), glm::vec3(2.0f, 0.0f, 2.0f), k_collider_color}}, id});
            break;
          case scene::ColliderKind::sphere:
            shapes_.push_back({render::ShapeKind::sphere, {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(float(c.size[0])), k_collider_color}}, id});
            grow(static_lo_, static_hi_, p, float(c.size[0]));
            break;
          case scene::ColliderKind::box:
            shapes_.push_back({render::ShapeKind::box, {{p, 0.0f, euler_quat(c.rotation), g3(c.size), k_collider_color}}, id});
            grow(static_lo_, static_hi_, p, glm::length(g3(c.size)));
            break;
          case scene::ColliderKind::capsule:
            shapes_.push_back({render::ShapeKind::capsule, {{p, 0.0f, euler_quat(c.rotation), glm::vec3(float(c.size[0]), float(c.size[1]), 0.0f),
                 k_collider_color}}, id});
            grow(static_lo_, static_hi_, p, float(c.size[0] + c.size[1]));
            break;
          case scene::ColliderKind::mesh:
            if (r.shape >= 0) {
              int start = m.shape_mesh_start[r.shape], count = m.shape_mesh_count[r.shape];
              for (int t = start; t < start + count; ++t) {
                const Idx3& f = m.mesh_tris[t];
                for (int v : {f.i, f.j, f.k}) {
                  const auto& q = m.mesh_vertices[v];
                  glm::vec3 gq(q.x, q.y, q.z);
                  collider_indices_.push_back(uint32_t(collider_vertices_.size()));
                  collider_vertices_.push_back(gq);
                  grow(static_lo_, static_hi_, gq, 0.0f);
                }
              }
            }
            break;
        }
        break;
      }
    }
  }
}

const render::DrawList& SceneView::build(const State& state, const Contacts* contacts,
                                         const Array<vec3<float>>* field, const Overlays& ov) {
  render::DrawList& l = list_;
  l = render::DrawList{};
  const Model& m = cs_.model;
  const int n = state.particle_count();

  // cloth and soft-body surfaces share one position and normal array over all particles
  positions_.resize(size_t(n));
  normals_.assign(size_t(n), glm::vec3(0, 1, 0));
  vis::write_positions(state, 0, n, floats(positions_));
  for (const MeshObject& mo : meshes_) {
    vis::write_normals(state, mo.surface, floats(normals_));
    render::MeshDraw d;
    d.positions = positions_;
    d.normals = normals_;
    d.indices = mo.surface.indices;
    d.color = mo.color;
    if (mo.two_sided) d.back_color = glm::vec4(glm::vec3(mo.color) * 0.55f, 1.0f);
    d.wireframe = ov.wireframe;
    d.id = mo.id;
    l.meshes.push_back(d);
  }

  // particle systems: spheres and spring lines
  spheres_.resize(particle_objects_.size());
  springs_.resize(particle_objects_.size());
  for (size_t k = 0; k < particle_objects_.size(); ++k) {
    const ParticleObject& po = particle_objects_[k];
    if (ov.particles && po.end > po.begin) {
      spheres_[k].resize(size_t(po.end - po.begin));
      vis::write_spheres(m, state, po.begin, po.end, floats(spheres_[k]));
      render::SphereDraw s;
      s.spheres = spheres_[k];
      s.color = po.color;
      s.id = po.id;
      l.spheres.push_back(s);
    }
    if (ov.springs && po.spring_end > po.spring_begin) {
      int count = po.spring_end - po.spring_begin;
      springs_[k].resize(size_t(2 * count));
      vis::write_springs(m, state, po.spring_begin, po.spring_end, floats(springs_[k]));
      if (spring_indices_.size() < springs_[k].size()) {
        spring_indices_.resize(springs_[k].size());
        for (size_t i = 0; i < spring_indices_.size(); ++i) spring_indices_[i] = uint32_t(i);
      }
      render::LineDraw line;
      line.positions = springs_[k];
      line.indices = std::span<const uint32_t>(spring_indices_.data(), springs_[k].size());
      line.color = glm::vec4(0.15f, 0.16f, 0.18f, 0.9f);
      line.width = 2.0f;
      line.id = po.id;
      l.lines.push_back(line);
    }
  }

  // colliders and targets
  for (const ShapeObject& so : shapes_) {
    render::ShapeDraw s;
    s.kind = so.kind;
    s.instances = so.instances;
    s.cast_shadow = s.kind != render::ShapeKind::ring;
    s.id = so.id;
    l.shapes.push_back(s);
  }
  if (!collider_vertices_.empty()) {
    render::MeshDraw d;
    d.positions = collider_vertices_;
    d.indices = collider_indices_;
    d.color = glm::vec4(0.55f, 0.54f, 0.52f, 1.0f);
    l.meshes.push_back(d);
  }
  l.ground.visible = ground_;
  l.ground.height = ground_height_;

  glm::vec3 lo, hi;
  bounds(state, lo, hi);

  // overlays: contacts, a vector field
  if (ov.contacts && contacts && contacts->contact_count() > 0) {
    size_t c = size_t(contacts->contact_count());
    contact_points_.resize(c);
    contact_normals_.resize(c);
    contact_forces_.resize(c);
    vis::write_contacts(*contacts, floats(contact_points_), floats(contact_normals_), floats(contact_forces_));
    render::DiscDraw d;
    d.positions = contact_points_;
    d.normals = contact_normals_;
    d.radius = 0.015f;
    l.discs.push_back(d);
    render::ArrowDraw a;
    a.origins = contact_points_;
    a.vectors = contact_forces_;
    a.length = render::ArrowLength::log;
    a.length_scale = ov.arrow_scale;
    a.scale = {render::Colormap::viridis, 0.0f, 1.0f};
    a.radius = 0.004f;
    l.arrows.push_back(a);
  }
  if (ov.vectors && field && int(field->size()) == n && n > 0) {
    arrow_origins_.resize(size_t(n));
    arrow_vectors_.resize(size_t(n));
    arrow_magnitudes_.resize(size_t(n));
    float largest = vis::write_vectors(state, *field, 0, n, floats(arrow_origins_), floats(arrow_vectors_),
                                       arrow_magnitudes_.data());
    render::ArrowDraw a;
    a.origins = arrow_origins_;
    a.vectors = arrow_vectors_;
    a.scalars = arrow_magnitudes_;
    a.scale = {render::Colormap::viridis, 0.0f, largest > 0 ? largest : 1.0f};
    a.length = render::ArrowLength::log;
    a.reference = largest > 0 ? largest * 0.1f : 1.0f;
    a.length_scale = ov.arrow_scale;
    a.radius = 0.004f;
    l.arrows.push_back(a);
  }

  // robots: body shapes (sphere, box, capsule), centres of mass, joint axes
  const RigidModelT<float>& rm = cs_.rigid;
  if (cs_.has_robots() && robot_state_.joint_q.size() == cs_.rigid_initial.joint_q.size()) {
    rigid_shapes_.resize(size_t(rm.shape_count()) * kRigidShapeFloats);
    rigid_joints_.resize(size_t(rm.body_count()) * kRigidJointFloats);
    rigid_vis_shapes(rm, robot_state_, rigid_shapes_.data());
    rigid_vis_joints(rm, robot_state_, rigid_joints_.data());
    for (auto& v : robot_instances_) v.clear();
    const render::ShapeKind kinds[3] = {render::ShapeKind::sphere, render::ShapeKind::box, render::ShapeKind::capsule};
    for (int k = 0; k < rm.shape_count(); ++k) {
      const float* f = &rigid_shapes_[size_t(k) * kRigidShapeFloats];
      int type = int(f[10]);
      if (type < 0 || type > 2) continue;
      uint32_t body = uint32_t(f[11]);
      uint32_t colour = render::pack_rgba8(body % 2 ? glm::vec4(0.33f, 0.50f, 0.80f, 1) : glm::vec4(0.85f, 0.55f, 0.25f, 1));
      robot_instances_[type].push_back({glm::vec3(f[0], f[1], f[2]), 0.0f, glm::quat(f[3], f[4], f[5], f[6]),
                                        glm::vec3(f[7], f[8], f[9]), colour});
    }
    for (int type = 0; type < 3; ++type)
      if (!robot_instances_[type].empty()) {
        render::ShapeDraw d;
        d.kind = kinds[type];
        d.instances = robot_instances_[type];
        d.id = body_object_.empty() ? 0 : body_object_.front();
        l.shapes.push_back(d);
      }
    robot_axes_.clear();
    for (int b = 0; b < rm.body_count(); ++b) {
      const float* f = &rigid_joints_[size_t(b) * kRigidJointFloats];
      glm::vec3 anchor(f[0], f[1], f[2]), axis(f[3], f[4], f[5]);
      if (glm::dot(axis, axis) > 0) {
        robot_axes_.push_back(anchor - 0.08f * axis);
        robot_axes_.push_back(anchor + 0.08f * axis);
      }
    }
    if (!robot_axes_.empty()) {
      render::LineDraw axes;
      axes.positions = robot_axes_;
      axes.color = glm::vec4(0.95f, 0.85f, 0.2f, 1.0f);
      axes.width = 3.0f;
      axes.depth_test = false;  // joint axes read through the bodies
      if (spring_indices_.size() < robot_axes_.size()) {
        spring_indices_.resize(robot_axes_.size());
        for (size_t i = 0; i < spring_indices_.size(); ++i) spring_indices_[i] = uint32_t(i);
      }
      axes.indices = std::span<const uint32_t>(spring_indices_.data(), robot_axes_.size());
      l.lines.push_back(axes);
    }
  }

  l.bounds_lo = lo;
  l.bounds_hi = hi;
  return l;
}

void SceneView::bounds(const State& state, glm::vec3& lo, glm::vec3& hi) const {
  lo = static_lo_;
  hi = static_hi_;
  float plo[3], phi[3];
  if (vis::bounds(state, 0, state.particle_count(), plo, phi)) {
    lo = glm::min(lo, glm::vec3(plo[0], plo[1], plo[2]));
    hi = glm::max(hi, glm::vec3(phi[0], phi[1], phi[2]));
  }
  // robots: their bodies' centres of mass, with room for the limbs
  if (cs_.has_robots() && robot_state_.joint_q.size() == cs_.rigid_initial.joint_q.size()) {
    std::vector<float> joints(size_t(cs_.rigid.body_count()) * kRigidJointFloats);
    rigid_vis_joints(cs_.rigid, robot_state_, joints.data());
    for (int b = 0; b < cs_.rigid.body_count(); ++b) {
      const float* f = &joints[size_t(b) * kRigidJointFloats];
      for (int k : {0, 6}) {  // joint anchor and centre of mass
        lo = glm::min(lo, glm::vec3(f[k], f[k + 1], f[k + 2]) - glm::vec3(0.2f));
        hi = glm::max(hi, glm::vec3(f[k], f[k + 1], f[k + 2]) + glm::vec3(0.2f));
      }
    }
  }
  if (lo.x > hi.x) {  // nothing at all
    lo = glm::vec3(-1.0f);
    hi = glm::vec3(1.0f);
  }
  if (ground_) {
    lo.y = std::min(lo.y, ground_height_);
    hi.y = std::max(hi.y, ground_height_);
  }
}

render::Camera SceneView::fit_camera(const State& state, float aspect) const {
  glm::vec3 lo, hi;
  bounds(state, lo, hi);
  render::Camera cam;
  cam.yaw = 0.45f;
  cam.pitch = 0.38f;
  cam.fit(lo, hi, aspect);
  return cam;
}

}  // namespace adj::app
