#include "app/scene_view.h"

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>

#include "engine/vis/rigid_vis.h"
#include "render/colormap.h"

namespace adj::app {

namespace {

// sRGB colours for objects, in document order
const glm::vec4 k_palette[] = {
    {0.90f, 0.47f, 0.22f, 1.0f}, {0.26f, 0.55f, 0.85f, 1.0f}, {0.35f, 0.72f, 0.45f, 1.0f},
    {0.80f, 0.35f, 0.55f, 1.0f}, {0.90f, 0.75f, 0.30f, 1.0f}, {0.55f, 0.45f, 0.85f, 1.0f},
};
const uint32_t k_collider_color = 0xff8c8a86;   // RGBA8 (R low byte): warm grey
const uint32_t k_target_color = 0xff4fc25a;     // green
const uint32_t k_robot_highlight = 0xffffcc1a;  // the selected robot body: cyan, a colour no object has

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
    : cs_(cs), robot_state_(cs.model.make_state()) {
  const Model& m = cs.model;
  z_up_ = doc.settings.up_index() == 2;
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
        shapes_.push_back({render::ShapeKind::ring,
                           {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(rad, rad * 0.6f, 0.0f), k_target_color}},
                           id});
        shapes_.push_back({render::ShapeKind::sphere,
                           {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(rad * 0.25f), k_target_color}},
                           id});
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
            shapes_.push_back({render::ShapeKind::plane,
                               {{p, 0.0f, up_to(g3(c.normal)), glm::vec3(2.0f, 0.0f, 2.0f), k_collider_color}},
                               id});
            break;
          case scene::ColliderKind::sphere:
            shapes_.push_back({render::ShapeKind::sphere,
                               {{p, 0.0f, glm::quat(1, 0, 0, 0), glm::vec3(float(c.size[0])), k_collider_color}},
                               id});
            grow(static_lo_, static_hi_, p, float(c.size[0]));
            break;
          case scene::ColliderKind::box:
            shapes_.push_back(
                {render::ShapeKind::box, {{p, 0.0f, euler_quat(c.rotation), g3(c.size), k_collider_color}}, id});
            grow(static_lo_, static_hi_, p, glm::length(g3(c.size)));
            break;
          case scene::ColliderKind::capsule:
            shapes_.push_back({render::ShapeKind::capsule,
                               {{p, 0.0f, euler_quat(c.rotation), glm::vec3(float(c.size[0]), float(c.size[1]), 0.0f),
                                 k_collider_color}},
                               id});
            grow(static_lo_, static_hi_, p, float(c.size[0] + c.size[1]));
            break;
          case scene::ColliderKind::mesh:
            if (r.shape >= 0) {
              collider_meshes_.push_back({collider_indices_.size(), 0, id});
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
              collider_meshes_.back().count = collider_indices_.size() - collider_meshes_.back().first;
            }
            break;
        }
        break;
      }
    }
  }
  // robots' triangle-mesh shapes: one vertex array, each shape's triangles (drawn per shape)
  const RigidModelT<float>& rm = cs.model.rigid;
  for (const vec3<float>& v : rm.mesh_vertex) robot_mesh_vertices_.emplace_back(v.x, v.y, v.z);
  for (int k = 0; k < rm.shape_count(); ++k) {
    if (rm.shape_type[size_t(k)] != GEOM_MESH || size_t(k + 1) >= rm.shape_mesh_tri_start.size()) continue;
    RobotMesh mesh{k, robot_mesh_indices_.size(), 0};
    for (int t = rm.shape_mesh_tri_start[size_t(k)]; t < rm.shape_mesh_tri_start[size_t(k + 1)]; ++t) {
      const Idx3& tri = rm.mesh_tri[size_t(t)];
      robot_mesh_indices_.insert(robot_mesh_indices_.end(), {uint32_t(tri.i), uint32_t(tri.j), uint32_t(tri.k)});
    }
    mesh.count = robot_mesh_indices_.size() - mesh.first;
    if (mesh.count > 0) robot_meshes_.push_back(mesh);
  }
}

vis::Surface SceneView::surface() const {
  std::vector<const vis::Surface*> parts;
  for (const MeshObject& mo : meshes_) parts.push_back(&mo.surface);
  return vis::merge_surfaces(parts);
}

bool SceneView::has_particle_spheres() const {
  for (const ParticleObject& po : particle_objects_)
    if (po.end > po.begin) return true;
  return false;
}

namespace {

struct ContactMarkStyle {
  float disc_radius, arrow_radius;
  float largest_force;  // the colour scale's top [N]
  float arrow_scale;    // Overlays::arrow_scale
};

// contact points as discs on their normals and forces as log-length arrows (viridis by size)
void add_contact_marks(render::DrawList& l, const std::vector<glm::vec3>& points, const std::vector<glm::vec3>& normals,
                       const std::vector<glm::vec3>& forces, const ContactMarkStyle& st) {
  render::DiscDraw d;
  d.positions = points;
  d.normals = normals;
  d.radius = st.disc_radius;
  l.discs.push_back(d);
  render::ArrowDraw a;
  a.origins = points;
  a.vectors = forces;
  a.length = render::ArrowLength::log;
  a.length_scale = st.arrow_scale;
  a.scale = {render::Colormap::viridis, 0.0f, st.largest_force};
  a.radius = st.arrow_radius;
  a.cast_shadow = false;  // marks, not objects: no shadows (half their cost on a CPU rasterizer)
  l.arrows.push_back(a);
}

// a vector field's arrows and the contact marks on at most about `most` (Overlays::max_marks)
// particles or contacts, 0 = all. The kept ones are scattered by a multiplicative hash of the
// index, not a stride that a grid's width could turn into stripes: a vector field keeps the
// same particles every frame; contacts are numbered as they are found, so the kept marks change
// as contacts come and go. Compacts three parallel arrays of n entries to the kept ones
template <class A, class B, class C>
void keep_scattered(int n, int most, A& a, B& b, C& c) {
  if (most <= 0 || n <= most) return;
  const uint32_t every = uint32_t((n + most - 1) / most);
  size_t kept = 0;
  for (int i = 0; i < n; ++i)
    if (((uint32_t(i) * 2654435761u) >> 8) % every == 0) {
      a[kept] = a[size_t(i)];
      b[kept] = b[size_t(i)];
      c[kept++] = c[size_t(i)];
    }
  a.resize(kept);
  b.resize(kept);
  c.resize(kept);
}

}  // namespace

const render::DrawList& SceneView::build(const State& state, const Contacts* contacts, const Array<vec3<float>>* field,
                                         const Overlays& ov) {
  render::DrawList& l = list_;
  l = render::DrawList{};
  const Model& m = cs_.model;
  const int n = state.particle_count();
  // line index lists share one 0, 1, 2, ... array: sized once here, so that no span into it
  // taken below is left dangling by a later growth (springs, centre-of-mass crosses, joint axes)
  size_t indices_needed =
      std::max(size_t(6) * size_t(cs_.model.rigid.body_count()), size_t(2) * size_t(robot_contacts_.contact_count()));
  for (const ParticleObject& po : particle_objects_)
    indices_needed = std::max(indices_needed, size_t(2) * size_t(po.spring_end - po.spring_begin));
  if (spring_indices_.size() < indices_needed) {
    spring_indices_.resize(indices_needed);
    for (size_t i = 0; i < spring_indices_.size(); ++i) spring_indices_[i] = uint32_t(i);
  }

  // cloth and soft-body surfaces share one position and normal array over all particles
  if (!use_device_) {
    positions_.resize(size_t(n));
    normals_.assign(size_t(n), glm::vec3(0, 1, 0));
    vis::write_positions(state, 0, n, floats(positions_));
  }
  for (const MeshObject& mo : meshes_) {
    render::MeshDraw d;
    if (use_device_) {
      d.positions = device_.positions;
      d.normals = device_.normals;
    } else {
      vis::write_normals(state, mo.surface, floats(normals_));
      d.positions = positions_;
      d.normals = normals_;
    }
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
      render::SphereDraw s;
      if (use_device_) {
        s.spheres = render::ArrayRef<glm::vec4>::device(device_.spheres.buffer, size_t(po.end - po.begin),
                                                        device_.spheres.offset + size_t(po.begin) * sizeof(glm::vec4));
      } else {
        spheres_[k].resize(size_t(po.end - po.begin));
        vis::write_spheres(m, state, po.begin, po.end, floats(spheres_[k]));
        s.spheres = spheres_[k];
      }
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
  for (const ColliderMesh& cm : collider_meshes_) {
    render::MeshDraw d;
    d.positions = collider_vertices_;
    d.indices = std::span<const uint32_t>(collider_indices_.data() + cm.first, cm.count);
    d.color = glm::vec4(0.55f, 0.54f, 0.52f, 1.0f);
    d.id = cm.id;
    l.meshes.push_back(d);
  }
  l.ground.visible = ground_;
  l.ground.height = ground_height_;
  l.ground.z_up = z_up_;
  // the key light from above, whichever axis is up (y-up's default turned onto +Z)
  if (z_up_) l.lighting.direction = {l.lighting.direction.x, -l.lighting.direction.z, l.lighting.direction.y};

  glm::vec3 lo, hi;
  bounds(state, lo, hi);

  // overlays: contacts, a vector field
  // (particles against colliders and each other, then bodies against particles: a box on cloth)
  const size_t body_particle = contacts ? size_t(contacts->body_particle.contact_count()) : 0;
  if (ov.contacts && contacts && contacts->contact_count() + body_particle > 0) {
    const size_t np = size_t(contacts->contact_count()), c = np + body_particle;
    contact_points_.resize(c);
    contact_normals_.resize(c);
    contact_forces_.resize(c);
    vis::write_contacts(*contacts, floats(contact_points_), floats(contact_normals_), floats(contact_forces_));
    for (size_t k = 0; k < body_particle; ++k) {
      const auto& bp = contacts->body_particle;
      contact_points_[np + k] = {bp.point[k].x, bp.point[k].y, bp.point[k].z};
      contact_normals_[np + k] = {bp.normal[k].x, bp.normal[k].y, bp.normal[k].z};
      contact_forces_[np + k] = {bp.force[k].x, bp.force[k].y, bp.force[k].z};
    }
    keep_scattered(int(c), ov.max_marks, contact_points_, contact_normals_, contact_forces_);
    add_contact_marks(l, contact_points_, contact_normals_, contact_forces_, {0.015f, 0.004f, 1.0f, ov.arrow_scale});
  }
  if (ov.vectors && field && int(field->size()) == n && n > 0) {
    arrow_origins_.resize(size_t(n));
    arrow_vectors_.resize(size_t(n));
    arrow_magnitudes_.resize(size_t(n));
    float largest = vis::write_vectors(state, *field, 0, n, floats(arrow_origins_), floats(arrow_vectors_),
                                       arrow_magnitudes_.data());
    keep_scattered(n, ov.max_marks, arrow_origins_, arrow_vectors_, arrow_magnitudes_);
    render::ArrowDraw a;
    a.origins = arrow_origins_;
    a.vectors = arrow_vectors_;
    a.scalars = arrow_magnitudes_;
    a.scale = {render::Colormap::viridis, 0.0f, largest > 0 ? largest : 1.0f};
    a.length = render::ArrowLength::log;
    a.reference = largest > 0 ? largest * 0.1f : 1.0f;
    a.length_scale = ov.arrow_scale;
    a.radius = 0.004f;
    a.cast_shadow = false;
    l.arrows.push_back(a);
  }

  // robots: body shapes (sphere, box, capsule), centres of mass, joint axes
  const RigidModelT<float>& rm = cs_.model.rigid;
  if (cs_.has_robots() && robot_state_.joint_q.size() == cs_.model.joint_q.size()) {
    rigid_shapes_.resize(size_t(rm.shape_count()) * kRigidShapeFloats);
    rigid_joints_.resize(size_t(rm.body_count()) * kRigidJointFloats);
    rigid_vis_shapes(rm, robot_state_, rigid_shapes_.data());
    rigid_vis_joints(rm, robot_state_, rigid_joints_.data());
    for (auto& d : robot_draws_) d.instances.clear();
    // GEOM_SPHERE, GEOM_BOX, GEOM_CAPSULE (mesh shapes are drawn below)
    const render::ShapeKind kinds[3] = {render::ShapeKind::sphere, render::ShapeKind::box, render::ShapeKind::capsule};
    for (int k = 0; k < rm.shape_count(); ++k) {
      const float* f = &rigid_shapes_[size_t(k) * kRigidShapeFloats];
      const int type = int(f[10]) - GEOM_SPHERE;
      if (type < 0 || type > 2) continue;
      const int body = int(f[11]);
      const uint32_t id = size_t(body) < body_object_.size() ? body_object_[size_t(body)] : 0;
      // bodies alternate a light and a dark tone of the robot's colour, so that links read apart;
      // the highlighted (selected) body is cyan, a colour no object has
      glm::vec4 base = id > 0 ? k_palette[(id - 1) % std::size(k_palette)] : glm::vec4(0.85f, 0.55f, 0.25f, 1);
      glm::vec4 c = body % 2 ? glm::vec4(glm::vec3(base) * 0.42f, 1.0f) : base;
      auto it = std::find_if(robot_draws_.begin(), robot_draws_.end(),
                             [&](const RobotDraw& d) { return d.id == id && d.kind == kinds[type]; });
      if (it == robot_draws_.end()) it = robot_draws_.insert(robot_draws_.end(), RobotDraw{id, kinds[type], {}});
      it->instances.push_back({glm::vec3(f[0], f[1], f[2]), 0.0f, glm::quat(f[3], f[4], f[5], f[6]),
                               glm::vec3(f[7], f[8], f[9]),
                               body == robot_highlight_ ? k_robot_highlight : render::pack_rgba8(c)});
    }
    for (const RobotDraw& rd : robot_draws_)
      if (!rd.instances.empty()) {
        render::ShapeDraw d;
        d.kind = rd.kind;
        d.instances = rd.instances;
        d.id = rd.id;
        l.shapes.push_back(d);
      }
    // triangle-mesh shapes: their triangles in the shape frame, placed by the shape's pose,
    // flat shaded (as they are imported: STL and OBJ parts rarely carry usable normals)
    for (const RobotMesh& rmesh : robot_meshes_) {
      const float* f = &rigid_shapes_[size_t(rmesh.shape) * kRigidShapeFloats];
      const int body = int(f[11]);
      const uint32_t id = size_t(body) < body_object_.size() ? body_object_[size_t(body)] : 0;
      glm::vec4 base = id > 0 ? k_palette[(id - 1) % std::size(k_palette)] : glm::vec4(0.85f, 0.55f, 0.25f, 1);
      render::MeshDraw d;
      d.positions = robot_mesh_vertices_;
      d.indices = std::span<const uint32_t>(robot_mesh_indices_.data() + rmesh.first, rmesh.count);
      d.transform = glm::translate(glm::mat4(1.0f), glm::vec3(f[0], f[1], f[2])) *
                    glm::mat4_cast(glm::quat(f[3], f[4], f[5], f[6]));
      d.color = body == robot_highlight_ ? glm::vec4(0x1a / 255.0f, 0xcc / 255.0f, 1.0f, 1.0f)  // k_robot_highlight
                                         : (body % 2 ? glm::vec4(glm::vec3(base) * 0.42f, 1.0f) : base);
      d.id = id;
      l.meshes.push_back(d);
    }
    // centres of mass: small crosses, read through the bodies
    robot_coms_.clear();
    for (int b = 0; b < rm.body_count(); ++b) {
      const float* f = &rigid_joints_[size_t(b) * kRigidJointFloats];
      if (!(rm.body_mass[size_t(b)] > 0)) continue;
      const glm::vec3 c(f[6], f[7], f[8]);
      for (int k = 0; k < 3; ++k) {
        glm::vec3 d(0.0f);
        d[k] = 0.035f;
        robot_coms_.push_back(c - d);
        robot_coms_.push_back(c + d);
      }
    }
    // contacts with the ground: points and force arrows
    const int nc = robot_contacts_.contact_count();
    if (ov.contacts && nc > 0) {
      rigid_contacts_.resize(size_t(nc) * kRigidContactFloats);
      rigid_vis_contacts(robot_contacts_, rigid_contacts_.data(), nc);
      robot_contact_points_.resize(size_t(nc));
      robot_contact_forces_.resize(size_t(nc));
      robot_contact_normals_.resize(size_t(nc));
      float largest = 0.0f;
      for (int c = 0; c < nc; ++c) {
        const float* f = &rigid_contacts_[size_t(c) * kRigidContactFloats];
        largest = std::max(largest, std::sqrt(f[3] * f[3] + f[4] * f[4] + f[5] * f[5]));
        robot_contact_points_[size_t(c)] = glm::vec3(f[0], f[1], f[2]);
        robot_contact_forces_[size_t(c)] = glm::vec3(f[3], f[4], f[5]);
        const auto& n = robot_contacts_.normal[size_t(c)];
        robot_contact_normals_[size_t(c)] = glm::vec3(n.x, n.y, n.z);
      }
      add_contact_marks(l, robot_contact_points_, robot_contact_normals_, robot_contact_forces_,
                        {0.02f, 0.006f, largest > 0 ? largest : 1.0f, ov.arrow_scale});
      // the forces again as lines read through the bodies they push (the arrows start inside them)
      robot_contact_lines_.clear();
      for (int c = 0; c < nc; ++c) {
        const glm::vec3 p = robot_contact_points_[size_t(c)], f = robot_contact_forces_[size_t(c)];
        const float mag = glm::length(f);
        if (!(mag > 0)) continue;
        robot_contact_lines_.push_back(p);
        robot_contact_lines_.push_back(p + f * (ov.arrow_scale * std::log1p(mag) / mag));
      }
      if (!robot_contact_lines_.empty()) {
        render::LineDraw lines;
        lines.positions = robot_contact_lines_;
        lines.color = glm::vec4(0.95f, 0.25f, 0.2f, 0.9f);
        lines.width = 3.0f;
        lines.depth_test = false;
        lines.indices = std::span<const uint32_t>(spring_indices_.data(),
                                                  std::min(spring_indices_.size(), robot_contact_lines_.size()));
        l.lines.push_back(lines);
      }
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
    if (!robot_coms_.empty()) {
      render::LineDraw coms;
      coms.positions = robot_coms_;
      coms.color = glm::vec4(0.1f, 0.1f, 0.12f, 1.0f);
      coms.width = 2.0f;
      coms.depth_test = false;
      if (spring_indices_.size() < robot_coms_.size()) {
        spring_indices_.resize(robot_coms_.size());
        for (size_t i = 0; i < spring_indices_.size(); ++i) spring_indices_[i] = uint32_t(i);
      }
      coms.indices = std::span<const uint32_t>(spring_indices_.data(), robot_coms_.size());
      l.lines.push_back(coms);
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

  highlight_selection(l);
  l.bounds_lo = lo;
  l.bounds_hi = hi;
  return l;
}

namespace {

const glm::vec4 k_selection_color(1.0f, 0.75f, 0.2f, 1.0f);  // sRGB, as the selected mesh's edges

// the edges of a shape instance as segment pairs: box edges, three great circles of a
// sphere, a capsule's rims and sides, a ring's rim, a plane's border
void outline(const render::ShapeKind kind, const render::ShapeInstance& in, std::vector<glm::vec3>& out) {
  auto at = [&](glm::vec3 local) { return in.position + in.rotation * local; };
  auto circle = [&](glm::vec3 centre, glm::vec3 u, glm::vec3 v, float r) {
    const int n = 32;
    for (int i = 0; i < n; ++i) {
      float a = 6.2831853f * float(i) / n, b = 6.2831853f * float(i + 1) / n;
      out.push_back(at(centre + r * (std::cos(a) * u + std::sin(a) * v)));
      out.push_back(at(centre + r * (std::cos(b) * u + std::sin(b) * v)));
    }
  };
  const glm::vec3 x(1, 0, 0), y(0, 1, 0), z(0, 0, 1), s = in.size;
  switch (kind) {
    case render::ShapeKind::box:
      for (int axis = 0; axis < 3; ++axis)
        for (int i = 0; i < 4; ++i) {  // four parallel edges along each axis
          glm::vec3 a = s, b = s;
          int u = (axis + 1) % 3, v = (axis + 2) % 3;
          a[u] = b[u] = (i & 1) ? s[u] : -s[u];
          a[v] = b[v] = (i & 2) ? s[v] : -s[v];
          a[axis] = -s[axis];
          out.push_back(at(a));
          out.push_back(at(b));
        }
      break;
    case render::ShapeKind::sphere:
      circle({}, x, y, s.x * 1.02f);
      circle({}, y, z, s.x * 1.02f);
      circle({}, z, x, s.x * 1.02f);
      break;
    case render::ShapeKind::capsule:
      circle(y * s.y, z, x, s.x * 1.02f);
      circle(-y * s.y, z, x, s.x * 1.02f);
      for (glm::vec3 side : {x, -x, z, -z}) {
        out.push_back(at(side * s.x * 1.02f + y * s.y));
        out.push_back(at(side * s.x * 1.02f - y * s.y));
      }
      break;
    case render::ShapeKind::ring:
      circle({}, z, x, s.x * 1.05f);
      break;
    case render::ShapeKind::plane: {
      glm::vec3 c[4] = {{-s.x, 0, -s.z}, {s.x, 0, -s.z}, {s.x, 0, s.z}, {-s.x, 0, s.z}};
      for (int i = 0; i < 4; ++i) out.push_back(at(c[i])), out.push_back(at(c[(i + 1) % 4]));
      break;
    }
  }
}

uint32_t tint(uint32_t rgba) {  // halfway to the selection colour
  glm::vec4 c = render::unpack_rgba8(rgba);
  return render::pack_rgba8(glm::vec4(glm::mix(glm::vec3(c), glm::vec3(k_selection_color), 0.5f), 1.0f));
}

}  // namespace

void SceneView::highlight_selection(render::DrawList& l) {
  if (selected_ == 0) return;
  outline_.clear();
  selected_instances_.clear();
  for (const render::ShapeDraw& d : l.shapes)
    if (d.id == selected_ && d.instances.host)
      selected_instances_.insert(selected_instances_.end(), d.instances.host, d.instances.host + d.instances.count);
  size_t k = 0;
  for (render::ShapeDraw& d : l.shapes) {
    if (d.id != selected_ || !d.instances.host) continue;
    const size_t n = d.instances.count;
    // a robot with a selected body: only that body is outlined, and it keeps its own colour
    const bool body_selected = robot_highlight_ >= 0 && size_t(robot_highlight_) < body_object_.size() &&
                               body_object_[size_t(robot_highlight_)] == d.id;
    for (size_t i = 0; i < n; ++i) {
      render::ShapeInstance& in = selected_instances_[k + i];
      if (body_selected) {
        if (in.color == k_robot_highlight) outline(d.kind, in, outline_);
        continue;
      }
      outline(d.kind, in, outline_);
      in.color = tint(in.color);
    }
    d.instances = std::span<const render::ShapeInstance>(selected_instances_.data() + k, n);
    k += n;
  }
  for (render::MeshDraw& m : l.meshes)
    if (m.id == selected_) {
      m.wireframe = true;
      m.wire_color = glm::vec4(glm::vec3(k_selection_color), 0.9f);
    }
  for (render::SphereDraw& sp : l.spheres)
    if (sp.id == selected_) sp.color = glm::mix(sp.color, k_selection_color, 0.5f);
  for (render::LineDraw& ln : l.lines)
    if (ln.id == selected_) ln.color = glm::vec4(glm::vec3(k_selection_color), 1.0f);
  if (outline_.empty()) return;
  outline_indices_.resize(outline_.size());
  for (size_t i = 0; i < outline_indices_.size(); ++i) outline_indices_[i] = uint32_t(i);
  render::LineDraw line;
  line.positions = outline_;
  line.indices = outline_indices_;
  line.color = glm::vec4(glm::vec3(k_selection_color), 1.0f);
  line.width = 2.0f;
  line.depth_test = false;  // the whole outline, through whatever is in front
  line.id = selected_;
  l.lines.push_back(line);
}

std::optional<glm::vec3> SceneView::robot_root() const {
  if (!cs_.has_robots() || cs_.model.rigid.body_count() == 0 || robot_state_.joint_q.size() != cs_.model.joint_q.size())
    return std::nullopt;
  std::vector<float> joints(size_t(cs_.model.rigid.body_count()) * kRigidJointFloats);
  rigid_vis_joints(cs_.model.rigid, robot_state_, joints.data());
  return glm::vec3(joints[6], joints[7], joints[8]);  // body 0's centre of mass (as bounds() reads it)
}

void SceneView::bounds(const State& state, glm::vec3& lo, glm::vec3& hi) const {
  lo = static_lo_;
  hi = static_hi_;
  float plo[3], phi[3];
  if (vis::bounds(state, 0, state.particle_count(), plo, phi)) {
    lo = glm::min(lo, glm::vec3(plo[0], plo[1], plo[2]));
    hi = glm::max(hi, glm::vec3(phi[0], phi[1], phi[2]));
    // a scene not much larger than its largest particle (a lone ball) is given room around it,
    // so that the camera is not put inside the ball
    float radius = 0.0f;
    for (float r : cs_.model.particle_radius) radius = std::max(radius, r);
    const glm::vec3 size = hi - lo;
    if (std::max({size.x, size.y, size.z}) < 4.0f * radius)
      for (int k = 0; k < 3; ++k) {
        const float pad = 2.0f * radius - 0.5f * size[k];
        lo[k] -= pad, hi[k] += pad;
      }
  }
  // robots: their bodies' centres of mass, with room for the limbs
  if (cs_.has_robots() && robot_state_.joint_q.size() == cs_.model.joint_q.size()) {
    std::vector<float> joints(size_t(cs_.model.rigid.body_count()) * kRigidJointFloats);
    rigid_vis_joints(cs_.model.rigid, robot_state_, joints.data());
    for (int b = 0; b < cs_.model.rigid.body_count(); ++b) {
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
    const int up = z_up_ ? 2 : 1;
    lo[up] = std::min(lo[up], ground_height_);
    hi[up] = std::max(hi[up], ground_height_);
  }
}

render::Camera SceneView::fit_camera(const State& state, float aspect) const {
  glm::vec3 lo, hi;
  bounds(state, lo, hi);
  render::Camera cam;
  cam.yaw = 0.45f;
  cam.pitch = 0.38f;
  cam.z_up = z_up_;
  cam.fit(lo, hi, aspect);
  return cam;
}

}  // namespace adj::app
