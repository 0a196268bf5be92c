#include "engine/scene/compile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "engine/model/builder.h"

namespace adj::scene {

namespace {

template <class S>
vec3<S> v(const V3& a) {
  return {S(a[0]), S(a[1]), S(a[2])};
}

// XYZ Euler angles in degrees: rotate about x, then y, then z (R = Rz Ry Rx)
template <class S>
mat33<S> rotation(const V3& deg) {
  const double k = 3.14159265358979323846 / 180.0;
  double cx = std::cos(deg[0] * k), sx = std::sin(deg[0] * k);
  double cy = std::cos(deg[1] * k), sy = std::sin(deg[1] * k);
  double cz = std::cos(deg[2] * k), sz = std::sin(deg[2] * k);
  double r[3][3] = {{cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx},
                    {sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx},
                    {-sy, cy * sx, cy * cx}};
  return mat33<S>::from_cols({S(r[0][0]), S(r[1][0]), S(r[2][0])}, {S(r[0][1]), S(r[1][1]), S(r[2][1])},
                             {S(r[0][2]), S(r[1][2]), S(r[2][2])});
}

std::string resolve(const std::string& base_dir, const std::string& rel) {
  std::filesystem::path p(rel);
  if (p.is_absolute() || base_dir.empty()) return rel;
  return (std::filesystem::path(base_dir) / p).string();
}

// particles and elements an object will add, for the limits
void estimate(const Object& o, long long& particles, long long& elements) {
  switch (o.kind) {
    case ObjectKind::particles:
      particles += (long long)o.particles.particles.size();
      elements += (long long)o.particles.springs.size();
      break;
    case ObjectKind::cloth:
      if (o.cloth.mesh.empty()) {
        particles += (long long)(o.cloth.nx + 1) * (o.cloth.ny + 1);
        elements += 4LL * o.cloth.nx * o.cloth.ny;
      }
      break;
    case ObjectKind::soft:
      if (o.soft.mesh.empty()) {
        particles += (long long)(o.soft.nx + 1) * (o.soft.ny + 1) * (o.soft.nz + 1);
        elements += 5LL * o.soft.nx * o.soft.ny * o.soft.nz;
      }
      break;
    default:
      break;
  }
}

}  // namespace

template <class S>
const ObjectRange* CompiledSceneT<S>::find(const std::string& name) const {
  for (const ObjectRange& r : objects)
    if (r.name == name) return &r;
  return nullptr;
}

// cloth and soft objects' optimized initial state (particle_positions/velocities) into the model
template <class S>
Status apply_particle_state(const Scene& scene, CompiledSceneT<S>& out);

template <class S>
Result<CompiledSceneT<S>> compile(const Scene& scene, const std::string& base_dir, const CompileLimits& limits) {
  long long particles = 0, elements = 0;
  for (const Object& o : scene.objects) estimate(o, particles, elements);
  if (particles > limits.max_particles)
    return Status::error("scene \"" + scene.name + "\" would have " + std::to_string(particles) +
                         " particles; at most " + std::to_string(limits.max_particles) + " are allowed");
  if (elements > limits.max_elements)
    return Status::error("scene \"" + scene.name + "\" would have " + std::to_string(elements) + " elements; at most " +
                         std::to_string(limits.max_elements) + " are allowed");

  ModelBuilderT<S> b;
  ModelT<S>& m = b.settings();
  const Settings& st = scene.settings;
  m.gravity = v<S>(st.gravity);
  m.particle_damping = S(st.damping);
  m.integrator = st.integrator == "implicit" ? INTEGRATOR_IMPLICIT : INTEGRATOR_EXPLICIT;
  m.contact_ke = S(st.contact.ke);
  m.contact_kd = S(st.contact.kd);
  m.contact_kf = S(st.contact.kf);
  m.contact_mu = S(st.contact.mu);
  m.contact_eps = S(st.contact.eps);
  m.particle_contact = st.contact.particle_contact;

  CompiledSceneT<S> out;
  out.frame_dt = S(st.dt);
  out.substeps = st.substeps;
  out.up_axis = st.up_index();
  out.randomize = st.randomize;

  for (size_t oi = 0; oi < scene.objects.size(); ++oi) {
    const Object& o = scene.objects[oi];
    const std::string where = "objects[" + std::to_string(oi) + "] (\"" + o.name + "\")";
    ObjectRange r;
    r.name = o.name;
    r.kind = o.kind;
    r.particle_begin = b.particle_count();
    r.spring_begin = m.spring_count();
    r.tri_begin = m.tri_count();
    r.edge_begin = m.edge_count();
    r.tet_begin = m.tet_count();

    switch (o.kind) {
      case ObjectKind::particles: {
        for (const Particle& p : o.particles.particles)
          b.add_particle(v<S>(p.position), v<S>(p.velocity), S(p.mass), S(p.radius));
        for (const Spring& s : o.particles.springs) {
          int k = b.add_spring(r.particle_begin + s.i, r.particle_begin + s.j, S(s.ke), S(s.kd), S(s.rest));
          if (s.actuated) out.actuated_springs.push_back(k);
        }
        break;
      }
      case ObjectKind::cloth: {
        const ClothObject& c = o.cloth;
        ClothMaterial<S> mat;
        mat.tri_ke = S(c.material.tri_ke);
        mat.tri_ka = S(c.material.tri_ka);
        mat.tri_kd = S(c.material.tri_kd);
        mat.edge_ke = S(c.material.edge_ke);
        mat.edge_kd = S(c.material.edge_kd);
        // aerodynamics are scene-wide in the model: the last cloth that sets them wins
        if (c.material.lift > 0) m.tri_lift = S(c.material.lift);
        if (c.material.drag > 0) m.tri_drag = S(c.material.drag);
        if (c.mesh.empty()) {
          const int first = b.particle_count();
          b.add_cloth_grid(v<S>(c.position), rotation<S>(c.rotation), c.nx, c.ny, S(c.cell), S(c.particle_mass),
                           v<S>(c.velocity), mat, c.pin_left, S(c.radius));
          if (c.pin_right)
            for (int y = 0; y <= c.ny; ++y) b.pin_particle(first + y * (c.nx + 1) + c.nx);
        } else {
          Placement<S> place{v<S>(c.position), rotation<S>(c.rotation), S(c.scale)};
          Status s = b.add_cloth_mesh(resolve(base_dir, c.mesh), place, S(c.particle_mass), v<S>(c.velocity), mat,
                                      S(c.radius));
          if (!s) return Status::error(where + ": " + s.message());
        }
        break;
      }
      case ObjectKind::soft: {
        const SoftObject& so = o.soft;
        SoftMaterial<S> mat;
        mat.density = S(so.material.density);
        mat.mu = S(so.material.mu);
        mat.lambda = S(so.material.lambda);
        mat.kd = S(so.material.kd);
        if (so.mesh.empty()) {
          b.add_soft_grid(v<S>(so.position), so.nx, so.ny, so.nz, S(so.cell), v<S>(so.velocity), mat, so.pin_left,
                          S(so.radius));
        } else {
          Placement<S> place{v<S>(so.position), rotation<S>(so.rotation), S(so.scale)};
          Status s =
              b.add_soft_mesh(resolve(base_dir, so.mesh), place, S(so.cell), v<S>(so.velocity), mat, S(so.radius));
          if (!s) return Status::error(where + ": " + s.message());
        }
        break;
      }
      case ObjectKind::collider: {
        const Collider& c = o.collider;
        switch (c.kind) {
          case ColliderKind::ground:  // a plane across the up axis at its height
            if (scene.settings.up_index() == 2)
              r.shape = b.add_plane(vec3<S>(S(0), S(0), S(c.position[1])), vec3<S>(S(0), S(0), S(1)));
            else
              r.shape = b.add_ground(S(c.position[1]));
            break;
          case ColliderKind::plane:
            r.shape = b.add_plane(v<S>(c.position), v<S>(c.normal));
            break;
          case ColliderKind::sphere:
            r.shape = b.add_sphere(v<S>(c.position), S(c.size[0]));
            break;
          case ColliderKind::box:
            r.shape = b.add_box(v<S>(c.position), v<S>(c.size), rotation<S>(c.rotation));
            break;
          case ColliderKind::capsule:
            r.shape = b.add_capsule(v<S>(c.position), S(c.size[0]), S(c.size[1]), rotation<S>(c.rotation));
            break;
          case ColliderKind::mesh: {
            int before = m.shape_count();
            Placement<S> place{v<S>(c.position), rotation<S>(c.rotation), S(c.scale)};
            Status s = b.add_mesh_collider(resolve(base_dir, c.mesh), place);
            if (!s) return Status::error(where + ": " + s.message());
            r.shape = before;
            break;
          }
        }
        break;
      }
      case ObjectKind::robot:
        break;  // compile_robots, below
      case ObjectKind::target:
        r.target = o.target.position;
        r.target_points = o.target.points;
        break;
    }
    r.particle_end = b.particle_count();
    r.spring_end = m.spring_count();
    r.tri_end = m.tri_count();
    r.edge_end = m.edge_count();
    r.tet_end = m.tet_count();
    if (o.kind == ObjectKind::soft && o.soft.actuated)
      for (int t = r.tet_begin; t < r.tet_end; ++t) out.actuated_tets.push_back(t);
    out.objects.push_back(r);
  }

  // every scene has its Model, empty ones too (a ground to start authoring on)
  auto model = b.finalize();
  if (!model) return Status::error("scene \"" + scene.name + "\": " + model.status().message());
  out.model = std::move(model.value());
  if (Status s = apply_particle_state(scene, out); !s) return s;
  if (Status s = compile_robots(scene, base_dir, out); !s) return s;
  return out;
}

template <class S>
Status apply_particle_state(const Scene& scene, CompiledSceneT<S>& out) {
  for (size_t oi = 0; oi < scene.objects.size(); ++oi) {
    const Object& o = scene.objects[oi];
    if (o.kind != ObjectKind::cloth && o.kind != ObjectKind::soft) continue;
    const auto& q = o.kind == ObjectKind::cloth ? o.cloth.particle_positions : o.soft.particle_positions;
    const auto& qd = o.kind == ObjectKind::cloth ? o.cloth.particle_velocities : o.soft.particle_velocities;
    const ObjectRange& r = out.objects[oi];
    const size_t n = size_t(r.particle_end - r.particle_begin);
    const std::string where = "objects[" + std::to_string(oi) + "] (\"" + o.name + "\")";
    for (auto [list, key] : {std::pair{&q, "particle_positions"}, std::pair{&qd, "particle_velocities"}}) {
      if (list->empty()) continue;
      if (list->size() != n)
        return Status::error(where + "." + key + ": " + std::to_string(list->size()) + " entries for " +
                             std::to_string(n) + " particles");
      auto& dst = list == &q ? out.model.particle_q : out.model.particle_qd;
      for (size_t i = 0; i < n; ++i) dst[size_t(r.particle_begin) + i] = v<S>((*list)[i]);
    }
  }
  return Status::ok();
}

template struct CompiledSceneT<float>;
template struct CompiledSceneT<double>;
template Result<CompiledSceneT<float>> compile<float>(const Scene&, const std::string&, const CompileLimits&);
template Result<CompiledSceneT<double>> compile<double>(const Scene&, const std::string&, const CompileLimits&);

}  // namespace adj::scene
