#include "engine/model/rigid_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace adj {

namespace {
constexpr double kPi = 3.14159265358979323846;

template <class S>
vec3<S> to(const vec3<double>& v) {
  return {S(v.x), S(v.y), S(v.z)};
}
template <class S>
mat33<S> to(const mat33<double>& a) {
  mat33<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = S(a.m[i][j]);
  return r;
}
bool finite3(const vec3<double>& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
}  // namespace

void rigid_shape_mass(const RigidShapeDesc& s, double& mass, mat33<double>& I) {
  I = mat33<double>();
  double r = s.size.x, rho = s.density;
  if (s.type == GEOM_SPHERE) {
    mass = rho * 4.0 / 3.0 * kPi * r * r * r;
    I.m[0][0] = I.m[1][1] = I.m[2][2] = 0.4 * mass * r * r;
  } else if (s.type == GEOM_BOX) {
    double a = s.size.x, b = s.size.y, c = s.size.z;
    mass = rho * 8 * a * b * c;
    I.m[0][0] = mass / 3 * (b * b + c * c);
    I.m[1][1] = mass / 3 * (a * a + c * c);
    I.m[2][2] = mass / 3 * (a * a + b * b);
  } else {
    // cylinder of height H = 2h plus two hemispheres, axis along y
    double h = s.size.y, H = 2 * h;
    double mc = rho * kPi * r * r * H, ms = rho * 4.0 / 3.0 * kPi * r * r * r;
    mass = mc + ms;
    I.m[1][1] = mc * r * r / 2 + ms * 0.4 * r * r;
    I.m[0][0] = I.m[2][2] = mc * (H * H / 12 + r * r / 4) + ms * (0.4 * r * r + H * H / 4 + 3 * H * r / 8);
  }
}

int RigidBuilder::add_body(std::string name, const RigidJointDesc& joint) {
  Body b;
  b.name = std::move(name);
  b.joint = joint;
  bodies_.push_back(b);
  return int(bodies_.size()) - 1;
}

void RigidBuilder::set_mass(int body, double mass, const vec3<double>& com, const mat33<double>& inertia) {
  if (body < 0 || body >= body_count()) {
    if (error_.empty()) error_ = "rigid builder: set_mass on missing body " + std::to_string(body);
    return;
  }
  Body& b = bodies_[std::size_t(body)];
  b.given = true;
  b.given_mass = mass;
  b.given_com = com;
  b.given_inertia = inertia;
}

int RigidBuilder::add_shape(int body, const RigidShapeDesc& shape) {
  shapes_.push_back(shape);
  shape_body_.push_back(body);
  meshes_.emplace_back();
  vec3<double> mesh_com;  // mesh shapes: centre of mass in the shape frame
  if (shape.type == GEOM_MESH) {
    std::string who = "rigid builder: shape " + std::to_string(shapes_.size() - 1);
    if (body >= 0 && body < body_count()) who += " of body " + bodies_[std::size_t(body)].name;
    if (!shape.mesh_name.empty()) who += " (mesh " + shape.mesh_name + ")";
    auto g = rigid_mesh_geometry(shape.mesh_vertices, shape.mesh_tris, shape.scale, who);
    if (!g) {
      if (error_.empty()) error_ = g.status().message();
      return int(shapes_.size()) - 1;
    }
    meshes_.back() = std::move(g.value());
    shapes_.back().mesh_vertices.clear();  // kept welded and scaled in meshes_
    shapes_.back().mesh_tris.clear();
  }
  if (shape.density > 0 && body >= 0 && body < body_count()) {
    // parallel axis theorem, accumulated about the body origin
    double m;
    mat33<double> Ic;
    if (shape.type == GEOM_MESH) {
      const RigidMeshGeometry& g = meshes_.back();
      std::string who =
          "rigid builder: shape " + std::to_string(shapes_.size() - 1) + " of body " + bodies_[std::size_t(body)].name;
      if (!shape.mesh_name.empty()) who += " (mesh " + shape.mesh_name + ")";
      if (Status st = rigid_mesh_mass(g.vertices, g.tris, shape.density, m, mesh_com, Ic, who); !st) {
        if (error_.empty()) error_ = st.message();
        return int(shapes_.size()) - 1;
      }
    } else {
      rigid_shape_mass(shape, m, Ic);
    }
    mat33<double> R = rigid::qmat(shape.rot);
    mat33<double> Iw = R * Ic * transpose(R);
    const vec3<double> c = shape.pos + R * mesh_com;
    Body& b = bodies_[std::size_t(body)];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        b.inertia_origin.m[i][j] += Iw.m[i][j] + m * ((i == j ? dot(c, c) : 0.0) - c[i] * c[j]);
    b.mass += m;
    b.moment += c * m;
  }
  return int(shapes_.size()) - 1;
}

int RigidBuilder::add_actuator(int body, const RigidActuatorDesc& actuator) {
  actuators_.push_back(actuator);
  actuator_body_.push_back(body);
  return int(actuators_.size()) - 1;
}

// the tree: each body's mass properties and joint, the coordinates' and dofs' starts
template <class S>
Status RigidBuilder::finalize_bodies(RigidModelT<S>& m) const {
  const int nb = body_count();
  int q = 0, d = 0;
  for (int i = 0; i < nb; ++i) {
    const Body& b = bodies_[std::size_t(i)];
    const RigidJointDesc& j = b.joint;
    std::string who = "rigid builder: body " + std::to_string(i) + " (" + b.name + ")";
    if (j.parent < -1 || j.parent >= i)
      return Status::error(who + ": parent " + std::to_string(j.parent) + " must be added before it");
    if (j.type < RIGID_JOINT_REVOLUTE || j.type > RIGID_JOINT_FIXED) return Status::error(who + ": unknown joint type");
    double al = length(j.axis);
    bool one_dof = j.type == RIGID_JOINT_REVOLUTE || j.type == RIGID_JOINT_PRISMATIC;
    if (one_dof && !(al > 1e-12)) return Status::error(who + ": joint axis is zero");
    if (!finite3(j.pos)) return Status::error(who + ": joint position is not finite");
    if (!(j.lower <= j.upper)) return Status::error(who + ": joint lower limit above upper limit");
    if ((j.limit_ke > 0 || j.limit_kd > 0) && !one_dof)
      return Status::error(who + ": limits need a revolute or prismatic joint");
    if (!(j.limit_ke >= 0) || !(j.limit_kd >= 0))
      return Status::error(who + ": limit stiffness and damping must be >= 0");
    if (!(j.damping >= 0) || !std::isfinite(j.damping)) return Status::error(who + ": joint damping must be >= 0");
    if (!(j.armature >= 0) || !std::isfinite(j.armature)) return Status::error(who + ": joint armature must be >= 0");
    if (!(j.stiffness >= 0) || !std::isfinite(j.stiffness) || !std::isfinite(j.spring_q))
      return Status::error(who + ": joint stiffness must be >= 0 (and its rest coordinate finite)");
    if (j.stiffness > 0 && !one_dof) return Status::error(who + ": stiffness needs a revolute or prismatic joint");
    double mass = b.given ? b.given_mass : b.mass;
    vec3<double> com = b.given ? b.given_com : (b.mass > 0 ? b.moment / b.mass : vec3<double>());
    mat33<double> I = b.given_inertia;
    if (!b.given) {
      I = b.inertia_origin;  // back from the origin to the centre of mass
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) I.m[r][c] -= mass * ((r == c ? dot(com, com) : 0.0) - com[r] * com[c]);
    }
    if (!(mass >= 0) || !std::isfinite(mass)) return Status::error(who + ": mass must be >= 0");
    m.body_name.push_back(b.name);
    m.body_mass.push_back(S(mass));
    m.body_com.push_back(to<S>(com));
    m.body_inertia.push_back(to<S>(I));
    m.joint_type.push_back(j.type);
    m.joint_parent.push_back(j.parent);
    m.joint_pos.push_back(to<S>(j.pos));
    m.joint_rot.push_back(to<S>(rigid::qmat(j.rot)));
    m.joint_axis.push_back(to<S>(one_dof ? j.axis / al : j.axis));
    m.joint_q_start.push_back(q);
    m.joint_dof_start.push_back(d);
    m.joint_lower.push_back(S(std::isfinite(j.lower) ? j.lower : -1e30));
    m.joint_upper.push_back(S(std::isfinite(j.upper) ? j.upper : 1e30));
    m.joint_limit_ke.push_back(S(j.limit_ke));
    m.joint_limit_kd.push_back(S(j.limit_kd));
    m.joint_stiffness.push_back(S(j.stiffness));
    m.joint_spring_q.push_back(S(j.spring_q));
    for (int k = 0; k < rigid_joint_dof_count(j.type); ++k) {
      m.dof_damping.push_back(S(j.damping));
      m.dof_armature.push_back(S(j.armature));
      m.dof_joint.push_back(i);
    }
    q += rigid_joint_q_count(j.type);
    d += rigid_joint_dof_count(j.type);
  }
  m.joint_q_start.push_back(q);
  m.joint_dof_start.push_back(d);
  m.joint_limit_eps = S(joint_limit_eps);
  return Status::ok();
}

// the collision shapes on the bodies, their mesh and hull geometry in the shared arrays
template <class S>
Status RigidBuilder::finalize_shapes(RigidModelT<S>& m) const {
  const int nb = body_count();
  for (std::size_t s = 0; s < shapes_.size(); ++s) {
    const RigidShapeDesc& sh = shapes_[s];
    if (shape_body_[s] < 0 || shape_body_[s] >= nb)
      return Status::error("rigid builder: shape " + std::to_string(s) + " is on a missing body");
    m.shape_body.push_back(shape_body_[s]);
    m.shape_type.push_back(sh.type);
    m.shape_pos.push_back(to<S>(sh.pos));
    m.shape_rot.push_back(to<S>(rigid::qmat(sh.rot)));
    m.shape_group.push_back(sh.group);
    m.shape_mask.push_back(sh.mask);
    // mesh geometry: triangles index the whole mesh_vertex array, hull faces the hull_vertex one
    const RigidMeshGeometry& g = meshes_[s];
    m.shape_size.push_back(sh.type == GEOM_MESH ? vec3<S>(S(g.bound), S(0), S(0)) : to<S>(sh.size));
    m.shape_mesh_tri_start.push_back(int(m.mesh_tri.size()));
    m.shape_hull_vertex_start.push_back(int(m.hull_vertex.size()));
    m.shape_hull_tri_start.push_back(int(m.hull_tri.size()));
    const int v0 = int(m.mesh_vertex.size()), h0 = int(m.hull_vertex.size());
    for (const auto& p : g.vertices) m.mesh_vertex.push_back(to<S>(p));
    for (const Idx3& t : g.tris) m.mesh_tri.push_back({v0 + t.i, v0 + t.j, v0 + t.k});
    for (const auto& p : g.hull_vertices) m.hull_vertex.push_back(to<S>(p));
    for (std::size_t f = 0; f < g.hull_tris.size(); ++f) {
      const Idx3& t = g.hull_tris[f];
      m.hull_tri.push_back({h0 + t.i, h0 + t.j, h0 + t.k});
      m.hull_normal.push_back(to<S>(g.hull_normals[f]));
      m.hull_offset.push_back(S(g.hull_offsets[f]));
    }
  }
  m.shape_mesh_tri_start.push_back(int(m.mesh_tri.size()));
  m.shape_hull_vertex_start.push_back(int(m.hull_vertex.size()));
  m.shape_hull_tri_start.push_back(int(m.hull_tri.size()));
  return Status::ok();
}

// the static colliders (plane normals normalized)
template <class S>
Status RigidBuilder::finalize_colliders(RigidModelT<S>& m) const {
  for (std::size_t c = 0; c < colliders.size(); ++c) {
    const RigidColliderDesc& cd = colliders[c];
    std::string who = "rigid builder: collider " + std::to_string(c);
    if (cd.type < 0 || cd.type > GEOM_MESH) return Status::error(who + ": unknown type " + std::to_string(cd.type));
    if (!finite3(cd.pos) || !finite3(cd.size)) return Status::error(who + ": position or size is not finite");
    vec3<double> size = cd.size;
    m.collider_mesh_start.push_back(int(m.collider_mesh_tris.size()));
    m.collider_mesh_count.push_back(cd.type == GEOM_MESH ? int(cd.mesh_tris.size()) : 0);
    if (cd.type == GEOM_MESH) {
      if (cd.mesh_tris.empty()) return Status::error(who + ": a mesh with no triangles");
      const int base = int(m.collider_mesh_vertices.size()), nv = int(cd.mesh_vertices.size());
      for (const vec3<double>& v : cd.mesh_vertices) {
        if (!finite3(v)) return Status::error(who + ": a mesh vertex is not finite");
        m.collider_mesh_vertices.push_back(to<S>(v));
      }
      for (const Idx3& t : cd.mesh_tris) {
        if (t.i < 0 || t.j < 0 || t.k < 0 || t.i >= nv || t.j >= nv || t.k >= nv)
          return Status::error(who + ": a mesh triangle's vertex index is out of range");
        m.collider_mesh_tris.push_back({base + t.i, base + t.j, base + t.k});
      }
      size = {0, 0, 0};
    } else if (cd.type == 0) {
      double nl = length(size);
      if (!(nl > 1e-12)) return Status::error(who + ": plane normal is zero");
      size = size / nl;
    } else if (!(size.x > 0) || (cd.type == 2 && !(size.y > 0 && size.z > 0)) || (cd.type == 3 && !(size.y >= 0))) {
      return Status::error(who + ": sizes must be positive");
    }
    m.collider_type.push_back(cd.type);
    m.collider_pos.push_back(to<S>(cd.pos));
    m.collider_rot.push_back(to<S>(rigid::qmat(cd.rot)));
    m.collider_size.push_back(to<S>(size));
  }
  return Status::ok();
}

// the actuators, each on one dof of its body's joint
template <class S>
Status RigidBuilder::finalize_actuators(RigidModelT<S>& m) const {
  const int nb = body_count();
  for (std::size_t a = 0; a < actuators_.size(); ++a) {
    const RigidActuatorDesc& ad = actuators_[a];
    int b = actuator_body_[a];
    std::string who = "rigid builder: actuator " + std::to_string(a);
    if (b < 0 || b >= nb) return Status::error(who + " is on a missing body");
    int t = bodies_[std::size_t(b)].joint.type;
    if (ad.dof < 0 || ad.dof >= rigid_joint_dof_count(t))
      return Status::error(who + ": joint of body " + bodies_[std::size_t(b)].name + " has no dof " +
                           std::to_string(ad.dof));
    if ((ad.type == RIGID_ACTUATOR_PD || ad.type == RIGID_ACTUATOR_VELOCITY) && t != RIGID_JOINT_REVOLUTE &&
        t != RIGID_JOINT_PRISMATIC)
      return Status::error(who + ": PD and velocity actuators need a revolute or prismatic joint");
    if (ad.type < RIGID_ACTUATOR_TORQUE || ad.type > RIGID_ACTUATOR_VELOCITY)
      return Status::error(who + ": unknown actuator type");
    if (!(ad.kp >= 0) || !(ad.kd >= 0) || !std::isfinite(ad.kp) || !std::isfinite(ad.kd))
      return Status::error(who + ": gains kp and kd must be >= 0 (got " + std::to_string(ad.kp) + ", " +
                           std::to_string(ad.kd) + ")");
    if (!std::isfinite(ad.gear)) return Status::error(who + ": gear is not finite");
    m.actuator_dof.push_back(m.joint_dof_start[std::size_t(b)] + ad.dof);
    m.actuator_type.push_back(ad.type);
    m.actuator_gear.push_back(S(ad.gear));
    m.actuator_kp.push_back(S(ad.kp));
    m.actuator_kd.push_back(S(ad.kd));
    double al = std::sqrt(dot(ad.axis, ad.axis));
    if (ad.type == RIGID_ACTUATOR_THRUST && !(al > 1e-12)) return Status::error(who + ": thrust axis is zero");
    m.actuator_pos.push_back(to<S>(ad.pos));
    m.actuator_axis.push_back(to<S>(al > 1e-12 ? ad.axis / al : ad.axis));
  }
  return Status::ok();
}

// the joint couplings (a follower joint at ratio x its leader's coordinate)
template <class S>
Status RigidBuilder::finalize_couplings(RigidModelT<S>& m) const {
  const int nb = body_count();
  for (std::size_t c = 0; c < couplings.size(); ++c) {
    const RigidCouplingDesc& cd = couplings[c];
    std::string who = "rigid builder: coupling " + std::to_string(c);
    auto one_dof = [&](int b) {
      return b >= 0 && b < nb &&
             (bodies_[std::size_t(b)].joint.type == RIGID_JOINT_REVOLUTE ||
              bodies_[std::size_t(b)].joint.type == RIGID_JOINT_PRISMATIC);
    };
    if (!one_dof(cd.joint) || !one_dof(cd.leader) || cd.joint == cd.leader)
      return Status::error(who + ": needs two different revolute or prismatic joints");
    if (!std::isfinite(cd.ratio) || !std::isfinite(cd.offset) || !(cd.ke >= 0) || !(cd.kd >= 0) ||
        !std::isfinite(cd.ke) || !std::isfinite(cd.kd))
      return Status::error(who + " (body " + bodies_[std::size_t(cd.joint)].name +
                           "): ratio and offset must be finite, ke and kd >= 0");
    m.coupling_joint.push_back(cd.joint);
    m.coupling_leader.push_back(cd.leader);
    m.coupling_ratio.push_back(S(cd.ratio));
    m.coupling_offset.push_back(S(cd.offset));
    m.coupling_ke.push_back(S(cd.ke));
    m.coupling_kd.push_back(S(cd.kd));
  }
  return Status::ok();
}

template <class S>
Result<RigidModelT<S>> RigidBuilder::finalize() const {
  RigidModelT<S> m;
  if (!error_.empty()) return Status::error(error_);
  for (auto part :
       {&RigidBuilder::finalize_bodies<S>, &RigidBuilder::finalize_shapes<S>, &RigidBuilder::finalize_colliders<S>,
        &RigidBuilder::finalize_actuators<S>, &RigidBuilder::finalize_couplings<S>})
    if (Status st = (this->*part)(m); !st) return st;
  m.gravity = to<S>(gravity);
  m.ground = ground;
  m.contact_ke = S(contact_ke);
  m.contact_kd = S(contact_kd);
  m.contact_kf = S(contact_kf);
  m.contact_mu = S(contact_mu);
  m.contact_eps = S(contact_eps);
  m.contact_law = contact_law;
  m.body_contact = body_contact;
  m.self_collision = self_collision;
  return m;
}

template Result<RigidModelT<float>> RigidBuilder::finalize<float>() const;
template Result<RigidModelT<double>> RigidBuilder::finalize<double>() const;

}  // namespace adj

namespace adj {

std::string rigid_inertia_problem(const mat33<double>& I) {
  const auto& a = I.m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (!std::isfinite(a[i][j])) return "inertia is not finite";
      if (std::abs(a[i][j] - a[j][i]) > 1e-9 * (std::abs(a[i][j]) + std::abs(a[j][i])) + 1e-300)
        return "inertia is not symmetric";
    }
  // principal moments: eigenvalues of a symmetric 3x3 (trigonometric form)
  double e[3];
  const double p1 = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
  const double q = (a[0][0] + a[1][1] + a[2][2]) / 3;
  const double p2 =
      (a[0][0] - q) * (a[0][0] - q) + (a[1][1] - q) * (a[1][1] - q) + (a[2][2] - q) * (a[2][2] - q) + 2 * p1;
  const double p = std::sqrt(p2 / 6);
  if (p1 == 0 || p == 0) {
    e[0] = a[0][0], e[1] = a[1][1], e[2] = a[2][2];
  } else {
    mat33<double> B = I;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) B.m[i][j] /= p;
      B.m[i][i] -= q / p;
    }
    const double r = std::clamp(determinant(B) / 2, -1.0, 1.0);
    const double phi = std::acos(r) / 3;
    e[0] = q + 2 * p * std::cos(phi);
    e[2] = q + 2 * p * std::cos(phi + 2 * 3.14159265358979323846 / 3);
    e[1] = 3 * q - e[0] - e[2];
  }
  const double scale = std::max({std::abs(e[0]), std::abs(e[1]), std::abs(e[2])});
  const double slack = 1e-9 * scale;
  char buf[160];
  for (int k = 0; k < 3; ++k) {
    if (e[k] < -slack) {
      std::snprintf(buf, sizeof buf, "inertia has a negative principal moment (%.6g)", e[k]);
      return buf;
    }
    if (e[(k + 1) % 3] + e[(k + 2) % 3] < e[k] - slack) {
      std::snprintf(buf, sizeof buf, "principal moments %.6g, %.6g, %.6g violate A + B >= C", e[0], e[1], e[2]);
      return buf;
    }
  }
  return {};
}

mat33<double> rigid_balance_inertia(const mat33<double>& I) {
  if (rigid_inertia_problem(I).empty()) return I;
  const double mean = (I.m[0][0] + I.m[1][1] + I.m[2][2]) / 3;
  mat33<double> out{};
  for (int k = 0; k < 3; ++k) out.m[k][k] = mean;
  return out;
}

}  // namespace adj
