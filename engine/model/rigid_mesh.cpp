#include "engine/model/rigid_mesh.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace adj {

namespace {

bool finite3(const vec3<double>& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// the point of `points` farthest along d (the first on ties)
int support(const std::vector<vec3<double>>& points, const vec3<double>& d) {
  int best = 0;
  for (int i = 1; i < int(points.size()); ++i)
    if (dot(points[size_t(i)], d) > dot(points[size_t(best)], d)) best = i;
  return best;
}

}  // namespace

Status rigid_convex_hull(const std::vector<vec3<double>>& P, std::vector<Idx3>& tris) {
  tris.clear();
  const int n = int(P.size());
  if (n < 4) return Status::error("fewer than 4 distinct vertices (a flat mesh)");
  double scale = 0;
  for (const auto& p : P) scale = std::max({scale, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
  const double eps = 1e-9 * std::max(scale, 1e-30);
  // initial tetrahedron: extreme in x, farthest from it, from their line, from their plane
  int i0 = 0;
  for (int i = 1; i < n; ++i)
    if (P[size_t(i)].x < P[size_t(i0)].x) i0 = i;
  int i1 = i0;
  for (int i = 0; i < n; ++i)
    if (length_sq(P[size_t(i)] - P[size_t(i0)]) > length_sq(P[size_t(i1)] - P[size_t(i0)])) i1 = i;
  const vec3<double> e = P[size_t(i1)] - P[size_t(i0)];
  int i2 = i0;
  double best = 0;
  for (int i = 0; i < n; ++i) {
    double a = length_sq(cross(e, P[size_t(i)] - P[size_t(i0)]));
    if (a > best) best = a, i2 = i;
  }
  if (!(std::sqrt(best) > eps * std::max(length(e), 1e-30))) return Status::error("all vertices on a line");
  const vec3<double> nrm = cross(e, P[size_t(i2)] - P[size_t(i0)]);
  int i3 = i0;
  best = 0;
  for (int i = 0; i < n; ++i) {
    double h = std::abs(dot(nrm, P[size_t(i)] - P[size_t(i0)]));
    if (h > best) best = h, i3 = i;
  }
  if (!(best / length(nrm) > 1e3 * eps)) return Status::error("all vertices in a plane (a flat mesh)");

  struct Face {
    Idx3 t;
    vec3<double> n;
    double off;
  };
  std::vector<Face> faces;
  auto make = [&](int a, int b, int c) {
    vec3<double> nn = cross(P[size_t(b)] - P[size_t(a)], P[size_t(c)] - P[size_t(a)]);
    double l = length(nn);
    nn = l > 0 ? nn / l : vec3<double>();
    faces.push_back({{a, b, c}, nn, dot(nn, P[size_t(a)])});
  };
  // orient the tetrahedron outward
  if (dot(nrm, P[size_t(i3)] - P[size_t(i0)]) > 0) std::swap(i1, i2);
  make(i0, i1, i2);
  make(i0, i3, i1);
  make(i1, i3, i2);
  make(i2, i3, i0);
  std::vector<char> used(size_t(n), 0);
  used[size_t(i0)] = used[size_t(i1)] = used[size_t(i2)] = used[size_t(i3)] = 1;
  for (int p = 0; p < n; ++p) {
    if (used[size_t(p)]) continue;
    std::vector<char> visible(faces.size(), 0);
    bool any = false;
    for (size_t f = 0; f < faces.size(); ++f)
      if (dot(faces[f].n, P[size_t(p)]) - faces[f].off > eps) visible[f] = 1, any = true;
    if (!any) continue;  // inside (or on) the hull
    // horizon: directed edges of visible faces whose reverse is not on a visible face
    std::set<std::pair<int, int>> vis_edges;
    for (size_t f = 0; f < faces.size(); ++f)
      if (visible[f]) {
        const Idx3& t = faces[f].t;
        vis_edges.insert({t.i, t.j});
        vis_edges.insert({t.j, t.k});
        vis_edges.insert({t.k, t.i});
      }
    std::vector<std::pair<int, int>> horizon;
    for (size_t f = 0; f < faces.size(); ++f)
      if (visible[f]) {
        const Idx3& t = faces[f].t;
        for (auto ed : {std::pair<int, int>{t.i, t.j}, {t.j, t.k}, {t.k, t.i}})
          if (!vis_edges.count({ed.second, ed.first})) horizon.push_back(ed);
      }
    std::vector<Face> kept;
    for (size_t f = 0; f < faces.size(); ++f)
      if (!visible[f]) kept.push_back(faces[f]);
    faces = std::move(kept);
    for (auto [a, b] : horizon) make(a, b, p);
    used[size_t(p)] = 1;
  }
  for (const Face& f : faces) tris.push_back(f.t);
  return Status::ok();
}

Result<RigidMeshGeometry> rigid_mesh_geometry(const std::vector<vec3<double>>& vertices, const std::vector<Idx3>& tris,
                                              const vec3<double>& scale, const std::string& who) {
  if (tris.empty()) return Status::error(who + ": mesh has no triangles");
  if (!finite3(scale) || !(scale.x > 0 && scale.y > 0 && scale.z > 0))
    return Status::error(who + ": mesh scale must be positive");
  RigidMeshGeometry g;
  // weld equal positions (STL files repeat each vertex per face)
  std::map<std::tuple<double, double, double>, int> index;
  std::vector<int> remap(vertices.size());
  for (size_t i = 0; i < vertices.size(); ++i) {
    const vec3<double>& v = vertices[i];
    if (!finite3(v)) return Status::error(who + ": mesh vertex " + std::to_string(i) + " is not finite");
    vec3<double> p(v.x * scale.x, v.y * scale.y, v.z * scale.z);
    auto [it, fresh] = index.try_emplace(std::make_tuple(p.x, p.y, p.z), int(g.vertices.size()));
    if (fresh) g.vertices.push_back(p);
    remap[i] = it->second;
  }
  const int nv = int(vertices.size());
  for (size_t f = 0; f < tris.size(); ++f) {
    const Idx3& t = tris[f];
    if (t.i < 0 || t.j < 0 || t.k < 0 || t.i >= nv || t.j >= nv || t.k >= nv)
      return Status::error(who + ": mesh triangle " + std::to_string(f) + " has a vertex index out of range");
    Idx3 w{remap[size_t(t.i)], remap[size_t(t.j)], remap[size_t(t.k)]};
    if (w.i == w.j || w.j == w.k || w.k == w.i) continue;  // collapsed by the weld
    g.tris.push_back(w);
  }
  if (g.tris.empty()) return Status::error(who + ": mesh has only degenerate triangles");
  for (const auto& p : g.vertices) g.bound = std::max(g.bound, length(p));

  // hull of the vertices, or of their support points in kRigidMeshHullCap fixed directions
  // (a Fibonacci sphere) when there are more: every support point is a hull vertex
  std::vector<vec3<double>> pts;
  if (int(g.vertices.size()) <= kRigidMeshHullCap) {
    pts = g.vertices;
  } else {
    std::set<int> chosen;
    const double golden = 3.14159265358979323846 * (3 - std::sqrt(5.0));
    for (int i = 0; i < kRigidMeshHullCap; ++i) {
      double z = 1 - (2 * i + 1) / double(kRigidMeshHullCap), r = std::sqrt(1 - z * z);
      const double a = golden * (i + 0.5);  // no direction with a zero component (ties on box edges)
      chosen.insert(support(g.vertices, {r * std::cos(a), r * std::sin(a), z}));
    }
    for (int i : chosen) pts.push_back(g.vertices[size_t(i)]);
  }
  std::vector<Idx3> ht;
  if (Status s = rigid_convex_hull(pts, ht); !s) return Status::error(who + ": mesh hull: " + s.message());
  // the hull may keep points on its faces and edges (where it started); only corners, where
  // the incident faces' normals span 3 directions, are samples: the hull again from them
  {
    std::vector<std::vector<vec3<double>>> normals(pts.size());
    for (const Idx3& t : ht) {
      vec3<double> nn = cross(pts[size_t(t.j)] - pts[size_t(t.i)], pts[size_t(t.k)] - pts[size_t(t.i)]);
      double l = length(nn);
      if (!(l > 0)) continue;
      for (int i : {t.i, t.j, t.k}) normals[size_t(i)].push_back(nn / l);
    }
    std::vector<vec3<double>> corners;
    for (size_t i = 0; i < pts.size(); ++i) {
      const auto& ns = normals[i];
      if (ns.empty()) continue;
      vec3<double> c;
      for (const auto& nb : ns)
        if (length_sq(cross(ns[0], nb)) > length_sq(c)) c = cross(ns[0], nb);
      double rank3 = 0;
      for (const auto& nc : ns) rank3 = std::max(rank3, std::abs(dot(c, nc)));
      if (rank3 > 1e-10) corners.push_back(pts[i]);
    }
    if (corners.size() < pts.size()) {
      pts = std::move(corners);
      if (Status s = rigid_convex_hull(pts, ht); !s) return Status::error(who + ": mesh hull: " + s.message());
    }
  }
  // keep the hull's own vertices, in their order in pts
  std::vector<int> hv(pts.size(), -1);
  for (const Idx3& t : ht)
    for (int i : {t.i, t.j, t.k}) hv[size_t(i)] = 0;
  for (size_t i = 0; i < pts.size(); ++i)
    if (hv[i] == 0) hv[i] = int(g.hull_vertices.size()), g.hull_vertices.push_back(pts[i]);
  for (const Idx3& t : ht) {
    Idx3 h{hv[size_t(t.i)], hv[size_t(t.j)], hv[size_t(t.k)]};
    const vec3<double>&a = g.hull_vertices[size_t(h.i)], &b = g.hull_vertices[size_t(h.j)],
          &c = g.hull_vertices[size_t(h.k)];
    vec3<double> nn = cross(b - a, c - a);
    double l = length(nn);
    if (!(l > 0)) continue;  // a sliver of zero area: its neighbours cover it
    nn = nn / l;
    g.hull_tris.push_back(h);
    g.hull_normals.push_back(nn);
    g.hull_offsets.push_back(dot(nn, a));
  }
  return g;
}

Status rigid_mesh_mass(const std::vector<vec3<double>>& V, const std::vector<Idx3>& T, double rho, double& mass,
                       vec3<double>& com, mat33<double>& inertia, const std::string& who) {
  // closed: every directed edge once, and its reverse once
  std::map<std::pair<int, int>, int> edges;
  for (const Idx3& t : T)
    for (auto e : {std::pair<int, int>{t.i, t.j}, {t.j, t.k}, {t.k, t.i}}) ++edges[e];
  for (const auto& [e, count] : edges) {
    auto rev = edges.find({e.second, e.first});
    if (count != 1 || rev == edges.end() || rev->second != 1)
      return Status::error(who + ": mesh is not closed (edge between vertices " + std::to_string(e.first) + " and " +
                           std::to_string(e.second) + " is not shared by exactly two faces of opposite direction)");
  }
  // signed tetrahedra (origin, a, b, c): volume det/6, first moment det (a+b+c)/24, second
  // moments det/120 (sum v v^T + s s^T) with s = a + b + c
  double vol = 0;
  vec3<double> first;
  double C[3][3] = {};
  for (const Idx3& t : T) {
    const vec3<double>&a = V[size_t(t.i)], &b = V[size_t(t.j)], &c = V[size_t(t.k)];
    const double det = dot(a, cross(b, c));
    const vec3<double> s = a + b + c;
    vol += det / 6;
    first += s * (det / 24);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) C[i][j] += det / 120 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]);
  }
  double scale = 0;
  for (const auto& p : V) scale = std::max(scale, length(p));
  if (!(std::abs(vol) > 1e-12 * scale * scale * scale) || !std::isfinite(vol))
    return Status::error(who + ": mesh encloses no volume");
  // all faces inward: the same solid, every integral negated
  const double sign = vol < 0 ? -1 : 1;
  vol *= sign;
  mass = rho * vol;
  com = first * (sign / vol);
  const double tr = sign * (C[0][0] + C[1][1] + C[2][2]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double about_origin = rho * ((i == j ? tr : 0.0) - sign * C[i][j]);
      inertia.m[i][j] = about_origin - mass * ((i == j ? dot(com, com) : 0.0) - com[i] * com[j]);
    }
  return Status::ok();
}

}  // namespace adj
