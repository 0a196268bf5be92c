#include "engine/model/builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "engine/forces/bending.h"

namespace adj {

namespace {

template <class S>
bool finite3(const vec3<S>& v) {
  return is_finite(v.x) && is_finite(v.y) && is_finite(v.z);
}

template <class S>
vec3<S> place_point(const Placement<S>& p, const vec3<S>& x) {
  return p.pos + p.rot * (x * p.scale);
}

// inside test for a closed mesh: parity of crossings of a ray along +x (slightly tilted)
template <class S>
bool inside_mesh(const TriMesh<S>& mesh, const vec3<S>& p) {
  vec3<double> o(p.x, p.y, p.z), dir(1.0, 1.234e-3, 2.345e-3);
  int crossings = 0;
  for (const Idx3& t : mesh.tris) {
    vec3<double> a(mesh.vertices[t.i].x, mesh.vertices[t.i].y, mesh.vertices[t.i].z);
    vec3<double> b(mesh.vertices[t.j].x, mesh.vertices[t.j].y, mesh.vertices[t.j].z);
    vec3<double> c(mesh.vertices[t.k].x, mesh.vertices[t.k].y, mesh.vertices[t.k].z);
    // moeller-trumbore
    vec3<double> e1 = b - a, e2 = c - a, pv = cross(dir, e2);
    double det = dot(e1, pv);
    if (std::fabs(det) < 1e-14) continue;
    double inv = 1.0 / det;
    vec3<double> tv = o - a;
    double u = dot(tv, pv) * inv;
    if (u < 0 || u > 1) continue;
    vec3<double> qv = cross(tv, e1);
    double v = dot(dir, qv) * inv;
    if (v < 0 || u + v > 1) continue;
    if (dot(e2, qv) * inv > 0) ++crossings;
  }
  return crossings % 2 == 1;
}

}  // namespace

template <class S>
int ModelBuilderT<S>::add_particle(V pos, V vel, S mass, S radius) {
  m_.particle_q.push_back(pos);
  m_.particle_qd.push_back(vel);
  m_.particle_mass.push_back(mass);
  m_.particle_radius.push_back(radius);
  return m_.particle_count() - 1;
}

template <class S>
int ModelBuilderT<S>::add_spring(int i, int j, S ke, S kd, S rest) {
  if (rest < S(0) && i >= 0 && j >= 0 && i < m_.particle_count() && j < m_.particle_count())
    rest = length(m_.particle_q[i] - m_.particle_q[j]);
  m_.spring_indices.push_back({i, j});
  m_.spring_ke.push_back(ke);
  m_.spring_kd.push_back(kd);
  m_.spring_rest.push_back(rest);
  return m_.spring_count() - 1;
}

template <class S>
int ModelBuilderT<S>::add_triangle(int i, int j, int k, const ClothMaterial<S>& mat) {
  m_.tri_indices.push_back({i, j, k});
  m_.tri_ke.push_back(mat.tri_ke);
  m_.tri_ka.push_back(mat.tri_ka);
  m_.tri_kd.push_back(mat.tri_kd);
  tri_mat_.push_back(mat);
  return m_.tri_count() - 1;
}

template <class S>
int ModelBuilderT<S>::add_edge(int i, int j, int k, int l, S ke, S kd) {
  m_.edge_indices.push_back({i, j, k, l});
  m_.edge_ke.push_back(ke);
  m_.edge_kd.push_back(kd);
  return m_.edge_count() - 1;
}

template <class S>
int ModelBuilderT<S>::add_tet(int i, int j, int k, int l, S mu, S lambda, S kd) {
  m_.tet_indices.push_back({i, j, k, l});
  m_.tet_mu.push_back(mu);
  m_.tet_lambda.push_back(lambda);
  m_.tet_kd.push_back(kd);
  return m_.tet_count() - 1;
}

// bending edges between triangles sharing an edge, for the triangles from `first_tri` on
template <class S>
static void add_bending_edges(ModelBuilderT<S>& b, const Array<Idx3>& tris, const ClothMaterial<S>& mat) {
  if (mat.edge_ke <= S(0) && mat.edge_kd <= S(0)) return;
  std::map<std::pair<int, int>, std::pair<int, int>> edges;  // edge -> (opposite vertex, count)
  Array<Idx4> out;
  for (const Idx3& t : tris) {
    int v[3] = {t.i, t.j, t.k};
    for (int e = 0; e < 3; ++e) {
      int a = v[e], c = v[(e + 1) % 3], o = v[(e + 2) % 3];
      auto key = std::make_pair(std::min(a, c), std::max(a, c));
      auto it = edges.find(key);
      if (it == edges.end()) {
        edges[key] = {o, 1};
      } else if (it->second.second == 1) {
        out.push_back({it->second.first, o, key.first, key.second});
        it->second.second = 2;
      }
    }
  }
  for (const Idx4& e : out) b.add_edge(e.i, e.j, e.k, e.l, mat.edge_ke, mat.edge_kd);
}

template <class S>
void ModelBuilderT<S>::add_cloth_grid(V origin, const mat33<S>& rot, int nx, int ny, S cell, S particle_mass, V vel,
                                      const ClothMaterial<S>& mat, bool pin_left, S radius) {
  int base = particle_count();
  for (int y = 0; y <= ny; ++y)
    for (int x = 0; x <= nx; ++x) {
      V local(S(x) * cell, S(y) * cell, S(0));
      add_particle(origin + rot * local, vel, (pin_left && x == 0) ? S(0) : particle_mass, radius);
    }
  Array<Idx3> tris;
  auto id = [&](int x, int y) { return base + y * (nx + 1) + x; };
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      // alternate the diagonal for symmetry
      if ((x + y) % 2 == 0) {
        tris.push_back({id(x, y), id(x + 1, y), id(x + 1, y + 1)});
        tris.push_back({id(x, y), id(x + 1, y + 1), id(x, y + 1)});
      } else {
        tris.push_back({id(x, y), id(x + 1, y), id(x, y + 1)});
        tris.push_back({id(x + 1, y), id(x + 1, y + 1), id(x, y + 1)});
      }
    }
  for (const Idx3& t : tris) add_triangle(t.i, t.j, t.k, mat);
  add_bending_edges(*this, tris, mat);
}

template <class S>
Status ModelBuilderT<S>::add_cloth_mesh(const std::string& obj_path, const Placement<S>& place, S particle_mass, V vel,
                                        const ClothMaterial<S>& mat, S radius) {
  auto mesh = load_obj<S>(obj_path);
  if (!mesh) return mesh.status();
  int base = particle_count();
  for (const V& v : mesh->vertices) add_particle(place_point(place, v), vel, particle_mass, radius);
  Array<Idx3> tris;
  for (const Idx3& t : mesh->tris) {
    if (t.i == t.j || t.j == t.k || t.i == t.k) continue;
    tris.push_back({base + t.i, base + t.j, base + t.k});
  }
  for (const Idx3& t : tris) add_triangle(t.i, t.j, t.k, mat);
  add_bending_edges(*this, tris, mat);
  return Status::ok();
}

// 5 tets per cube (corners c[0..7], bit 0 = x, bit 1 = y, bit 2 = z), alternating parity
template <class S>
static void add_cube_tets(ModelBuilderT<S>& b, const int c[8], bool odd, const SoftMaterial<S>& mat) {
  int v0 = c[0], v1 = c[1], v2 = c[5], v3 = c[4], v4 = c[2], v5 = c[3], v6 = c[7], v7 = c[6];
  const int even_tets[5][4] = {
      {v1, v2, v5, v0}, {v3, v0, v7, v2}, {v4, v7, v0, v5}, {v6, v5, v2, v7}, {v5, v2, v7, v0}};
  const int odd_tets[5][4] = {{v0, v1, v4, v3}, {v2, v3, v6, v1}, {v5, v4, v1, v6}, {v7, v6, v3, v4}, {v4, v1, v6, v3}};
  const int(*t)[4] = odd ? odd_tets : even_tets;
  for (int k = 0; k < 5; ++k) b.add_tet(t[k][0], t[k][1], t[k][2], t[k][3], mat.mu, mat.lambda, mat.kd);
}

template <class S>
void ModelBuilderT<S>::add_soft_grid(V origin, int nx, int ny, int nz, S cell, V vel, const SoftMaterial<S>& mat,
                                     bool pin_left, S radius) {
  int base = particle_count();
  for (int z = 0; z <= nz; ++z)
    for (int y = 0; y <= ny; ++y)
      for (int x = 0; x <= nx; ++x) add_particle(origin + V(S(x) * cell, S(y) * cell, S(z) * cell), vel, S(0), radius);
  auto id = [&](int x, int y, int z) { return base + (z * (ny + 1) + y) * (nx + 1) + x; };
  int first_tet = m_.tet_count();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        int c[8];
        for (int k = 0; k < 8; ++k) c[k] = id(x + (k & 1), y + ((k >> 1) & 1), z + ((k >> 2) & 1));
        add_cube_tets(*this, c, ((x ^ y ^ z) & 1) != 0, mat);
      }
  // lumped masses: a quarter of each tet's mass to its corners
  for (int t = first_tet; t < m_.tet_count(); ++t) {
    Idx4 e = m_.tet_indices[t];
    V a = m_.particle_q[e.j] - m_.particle_q[e.i], b = m_.particle_q[e.k] - m_.particle_q[e.i],
      c = m_.particle_q[e.l] - m_.particle_q[e.i];
    S vol = std::fabs(dot(a, cross(b, c))) / S(6);
    for (int v : {e.i, e.j, e.k, e.l}) m_.particle_mass[v] += mat.density * vol / S(4);
  }
  if (pin_left)
    for (int z = 0; z <= nz; ++z)
      for (int y = 0; y <= ny; ++y) m_.particle_mass[id(0, y, z)] = S(0);
}

template <class S>
Status ModelBuilderT<S>::add_soft_mesh(const std::string& obj_path, const Placement<S>& place, S cell, V vel,
                                       const SoftMaterial<S>& mat, S radius) {
  if (!(cell > S(0))) return Status::error("add_soft_mesh('" + obj_path + "'): cell size must be positive");
  auto mesh = load_obj<S>(obj_path);
  if (!mesh) return mesh.status();
  for (V& v : mesh->vertices) v = place_point(place, v);
  V lo = mesh->vertices[0], hi = lo;
  for (const V& v : mesh->vertices)
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], v[a]);
      hi[a] = std::max(hi[a], v[a]);
    }
  int n[3];
  for (int a = 0; a < 3; ++a) n[a] = std::max(1, int(std::ceil((hi[a] - lo[a]) / cell)));
  if (double(n[0]) * n[1] * n[2] > 8e6)
    return Status::error("add_soft_mesh('" + obj_path + "'): cell size too small (over 8M voxels)");
  // voxels whose centres are inside the mesh
  std::map<long long, int> vertex_of;
  auto key = [&](int x, int y, int z) { return (long long)(z * (n[1] + 1) + y) * (n[0] + 1) + x; };
  int first_tet = m_.tet_count(), voxels = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        V centre = lo + V((S(x) + S(0.5)) * cell, (S(y) + S(0.5)) * cell, (S(z) + S(0.5)) * cell);
        if (!inside_mesh(*mesh, centre)) continue;
        ++voxels;
        int c[8];
        for (int k = 0; k < 8; ++k) {
          int cx = x + (k & 1), cy = y + ((k >> 1) & 1), cz = z + ((k >> 2) & 1);
          auto it = vertex_of.find(key(cx, cy, cz));
          if (it == vertex_of.end())
            it = vertex_of
                     .emplace(key(cx, cy, cz),
                              add_particle(lo + V(S(cx) * cell, S(cy) * cell, S(cz) * cell), vel, S(0), radius))
                     .first;
          c[k] = it->second;
        }
        add_cube_tets(*this, c, ((x ^ y ^ z) & 1) != 0, mat);
      }
  if (voxels == 0)
    return Status::error("add_soft_mesh('" + obj_path + "'): no voxel inside the mesh (is it closed? cell too big?)");
  for (int t = first_tet; t < m_.tet_count(); ++t) {
    Idx4 e = m_.tet_indices[t];
    V a = m_.particle_q[e.j] - m_.particle_q[e.i], b = m_.particle_q[e.k] - m_.particle_q[e.i],
      c = m_.particle_q[e.l] - m_.particle_q[e.i];
    S vol = std::fabs(dot(a, cross(b, c))) / S(6);
    for (int v : {e.i, e.j, e.k, e.l}) m_.particle_mass[v] += mat.density * vol / S(4);
  }
  return Status::ok();
}

template <class S>
int ModelBuilderT<S>::add_plane(V point, V normal) {
  m_.shape_type.push_back(GEOM_PLANE);
  m_.shape_pos.push_back(point);
  m_.shape_rot.push_back(mat33<S>::identity());
  S l = length(normal);
  m_.shape_size.push_back(l > S(0) ? normal / l : V(S(0), S(1), S(0)));
  m_.shape_mesh_start.push_back(0);
  m_.shape_mesh_count.push_back(0);
  return m_.shape_count() - 1;
}

template <class S>
int ModelBuilderT<S>::add_ground(S height) {
  return add_plane(V(S(0), height, S(0)), V(S(0), S(1), S(0)));
}

template <class S>
int ModelBuilderT<S>::add_sphere(V center, S radius) {
  int s = add_plane(center, V(S(0), S(1), S(0)));
  m_.shape_type[s] = GEOM_SPHERE;
  m_.shape_size[s] = V(radius, S(0), S(0));
  return s;
}

template <class S>
int ModelBuilderT<S>::add_box(V center, V half_extents, const mat33<S>& rot) {
  int s = add_plane(center, V(S(0), S(1), S(0)));
  m_.shape_type[s] = GEOM_BOX;
  m_.shape_rot[s] = rot;
  m_.shape_size[s] = half_extents;
  return s;
}

template <class S>
int ModelBuilderT<S>::add_capsule(V center, S radius, S half_height, const mat33<S>& rot) {
  int s = add_plane(center, V(S(0), S(1), S(0)));
  m_.shape_type[s] = GEOM_CAPSULE;
  m_.shape_rot[s] = rot;
  m_.shape_size[s] = V(radius, half_height, S(0));
  return s;
}

template <class S>
int ModelBuilderT<S>::add_mesh_collider(const Array<V>& vertices, const Array<Idx3>& tris) {
  int s = add_plane(V(), V(S(0), S(1), S(0)));
  int vbase = int(m_.mesh_vertices.size());
  m_.shape_type[s] = GEOM_MESH;
  m_.shape_mesh_start[s] = int(m_.mesh_tris.size());
  m_.shape_mesh_count[s] = int(tris.size());
  m_.mesh_vertices.insert(m_.mesh_vertices.end(), vertices.begin(), vertices.end());
  for (const Idx3& t : tris) m_.mesh_tris.push_back({vbase + t.i, vbase + t.j, vbase + t.k});
  return s;
}

template <class S>
Status ModelBuilderT<S>::add_mesh_collider(const std::string& obj_path, const Placement<S>& place) {
  auto mesh = load_obj<S>(obj_path);
  if (!mesh) return mesh.status();
  for (V& v : mesh->vertices) v = place_point(place, v);
  add_mesh_collider(mesh->vertices, mesh->tris);
  return Status::ok();
}

template <class S>
Result<ModelT<S>> ModelBuilderT<S>::finalize() const {
  ModelT<S> m = m_;
  int n = m.particle_count();
  auto err = [](const std::string& what, int i, const std::string& msg) {
    return Status::error(what + " " + std::to_string(i) + ": " + msg);
  };
  // particles
  for (int i = 0; i < n; ++i) {
    if (!finite3(m.particle_q[i])) return err("particle", i, "position is not finite");
    if (!finite3(m.particle_qd[i])) return err("particle", i, "velocity is not finite");
    if (!is_finite(m.particle_mass[i]) || m.particle_mass[i] < S(0))
      return err("particle", i, "mass must be finite and >= 0");
    if (!is_finite(m.particle_radius[i]) || m.particle_radius[i] < S(0))
      return err("particle", i, "radius must be finite and >= 0");
  }
  auto bad_index = [n](int v) { return v < 0 || v >= n; };
  // springs
  for (int e = 0; e < m.spring_count(); ++e) {
    Idx2 s = m.spring_indices[e];
    if (bad_index(s.i) || bad_index(s.j) || s.i == s.j) return err("spring", e, "invalid particle indices");
    if (!is_finite(m.spring_ke[e]) || !is_finite(m.spring_kd[e]) || !is_finite(m.spring_rest[e]) ||
        m.spring_rest[e] < S(0))
      return err("spring", e, "ke, kd and rest length must be finite (rest >= 0)");
  }
  // triangles: rest pose in the triangle's own 2d frame
  m.tri_pose.resize(m.tri_count());
  m.tri_area.resize(m.tri_count());
  for (int e = 0; e < m.tri_count(); ++e) {
    Idx3 t = m.tri_indices[e];
    if (bad_index(t.i) || bad_index(t.j) || bad_index(t.k)) return err("triangle", e, "invalid particle indices");
    vec3<S> e1 = m.particle_q[t.j] - m.particle_q[t.i], e2 = m.particle_q[t.k] - m.particle_q[t.i];
    vec3<S> nrm = cross(e1, e2);
    S area2 = length(nrm);
    if (!(area2 > S(1e-12))) return err("triangle", e, "degenerate (zero rest area)");
    vec3<S> u = e1 / length(e1), w = cross(nrm / area2, u);
    S a = dot(e1, u), b = dot(e2, u), c = dot(e1, w), d = dot(e2, w);  // rest edge matrix [[a, b], [c, d]]
    S det = a * d - b * c;
    m.tri_pose[e] = {d / det, -b / det, -c / det, a / det};
    m.tri_area[e] = S(0.5) * area2;
    if (!is_finite(m.tri_ke[e]) || !is_finite(m.tri_ka[e]) || !is_finite(m.tri_kd[e]))
      return err("triangle", e, "material parameters must be finite");
  }
  // bending rest angles
  m.edge_rest_angle.resize(m.edge_count());
  for (int e = 0; e < m.edge_count(); ++e) {
    Idx4 q = m.edge_indices[e];
    if (bad_index(q.i) || bad_index(q.j) || bad_index(q.k) || bad_index(q.l))
      return err("bending edge", e, "invalid particle indices");
    m.edge_rest_angle[e] = dihedral_angle(m.particle_q[q.i], m.particle_q[q.j], m.particle_q[q.k], m.particle_q[q.l]);
    if (!is_finite(m.edge_rest_angle[e])) m.edge_rest_angle[e] = S(0);
  }
  // tetrahedra: positive orientation, inverse rest edge matrix, volume
  m.tet_pose.resize(m.tet_count());
  m.tet_volume.resize(m.tet_count());
  for (int e = 0; e < m.tet_count(); ++e) {
    Idx4& t = m.tet_indices[e];
    if (bad_index(t.i) || bad_index(t.j) || bad_index(t.k) || bad_index(t.l))
      return err("tet", e, "invalid particle indices");
    auto dm = [&] {
      return mat33<S>::from_cols(m.particle_q[t.j] - m.particle_q[t.i], m.particle_q[t.k] - m.particle_q[t.i],
                                 m.particle_q[t.l] - m.particle_q[t.i]);
    };
    S det = determinant(dm());
    if (det < S(0)) {
      std::swap(t.k, t.l);
      det = -det;
    }
    if (!(det > S(1e-15))) return err("tet", e, "degenerate (zero rest volume)");
    m.tet_pose[e] = inverse(dm());
    m.tet_volume[e] = det / S(6);
    if (!is_finite(m.tet_mu[e]) || !is_finite(m.tet_lambda[e]) || !(m.tet_lambda[e] > S(0)) || !is_finite(m.tet_kd[e]))
      return err("tet", e, "Lame parameters must be finite (lambda > 0)");
  }
  // colliders
  for (int sh = 0; sh < m.shape_count(); ++sh)
    if (!finite3(m.shape_pos[sh]) || !finite3(m.shape_size[sh]) ||
        (m.shape_type[sh] != GEOM_PLANE && m.shape_size[sh].x < S(0)))
      return err("shape", sh, "position and size must be finite (sizes >= 0)");
  for (std::size_t v = 0; v < m.mesh_vertices.size(); ++v)
    if (!finite3(m.mesh_vertices[v])) return err("collider mesh vertex", int(v), "is not finite");
  // contact parameters
  for (S v : {m.contact_ke, m.contact_kd, m.contact_kf, m.contact_mu, m.contact_eps, m.particle_damping})
    if (!is_finite(v)) return Status::error("contact and damping parameters must be finite");
  if (!(m.contact_eps > S(0))) return Status::error("contact_eps (friction smoothing width) must be > 0");
  if (!finite3(m.gravity)) return Status::error("gravity must be finite");
  // incidence lists: force slots of each particle in slot order
  Array<int> owner(m.slot_count());
  for (int e = 0; e < m.spring_count(); ++e) {
    owner[2 * e] = m.spring_indices[e].i;
    owner[2 * e + 1] = m.spring_indices[e].j;
  }
  for (int e = 0; e < m.tri_count(); ++e) {
    Idx3 t = m.tri_indices[e];
    owner[m.tri_slot() + 3 * e] = t.i;
    owner[m.tri_slot() + 3 * e + 1] = t.j;
    owner[m.tri_slot() + 3 * e + 2] = t.k;
  }
  for (int e = 0; e < m.edge_count(); ++e) {
    Idx4 q = m.edge_indices[e];
    int v[4] = {q.i, q.j, q.k, q.l};
    for (int k = 0; k < 4; ++k) owner[m.edge_slot() + 4 * e + k] = v[k];
  }
  for (int e = 0; e < m.tet_count(); ++e) {
    Idx4 q = m.tet_indices[e];
    int v[4] = {q.i, q.j, q.k, q.l};
    for (int k = 0; k < 4; ++k) owner[m.tet_slot() + 4 * e + k] = v[k];
  }
  m.incidence_start.assign(n + 1, 0);
  for (int p : owner) m.incidence_start[p + 1]++;
  for (int i = 0; i < n; ++i) m.incidence_start[i + 1] += m.incidence_start[i];
  m.incidence_slot.assign(owner.size(), 0);
  Array<int> fill(m.incidence_start.begin(), m.incidence_start.end() - 1);
  for (int s = 0; s < int(owner.size()); ++s) m.incidence_slot[fill[owner[s]]++] = s;
  // particle-particle exclusions: particles sharing an element
  Array<std::pair<int, int>> pairs;
  auto add_group = [&](const int* v, int k) {
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b)
        if (a != b) pairs.push_back({v[a], v[b]});
  };
  for (Idx2 s : m.spring_indices) {
    int v[2] = {s.i, s.j};
    add_group(v, 2);
  }
  for (Idx3 t : m.tri_indices) {
    int v[3] = {t.i, t.j, t.k};
    add_group(v, 3);
  }
  for (Idx4 t : m.tet_indices) {
    int v[4] = {t.i, t.j, t.k, t.l};
    add_group(v, 4);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  m.exclude_start.assign(n + 1, 0);
  for (auto& p : pairs) m.exclude_start[p.first + 1]++;
  for (int i = 0; i < n; ++i) m.exclude_start[i + 1] += m.exclude_start[i];
  m.exclude_list.resize(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) m.exclude_list[k] = pairs[k].second;
  // hash grid cell: the largest contact distance
  S rmax = 0;
  for (S r : m.particle_radius) rmax = std::max(rmax, r);
  m.grid_cell = rmax > S(0) ? S(2) * rmax : S(1);
  return m;
}

template class ModelBuilderT<float>;
template class ModelBuilderT<double>;

}  // namespace adj
