// triangle meshes for the mesh-shape tests: boxes (optionally with each face a grid) and
// icospheres, closed and wound counter-clockwise seen from outside
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/core/math.h"

namespace adj::test {

struct TestMesh {
  std::vector<vec3<double>> v;
  std::vector<Idx3> t;
};

// turns every triangle of a mesh that is star-shaped about `centre` outward
inline void orient_outward(TestMesh& m, const vec3<double>& centre) {
  for (Idx3& t : m.t) {
    const vec3<double>&a = m.v[size_t(t.i)], &b = m.v[size_t(t.j)], &c = m.v[size_t(t.k)];
    if (dot(cross(b - a, c - a), (a + b + c) / 3.0 - centre) < 0) std::swap(t.j, t.k);
  }
}

// box of half extents h centred at the origin, each face an n x n grid of quads
inline TestMesh box_mesh(const vec3<double>& h, int n = 1) {
  TestMesh m;
  std::map<std::tuple<long, long, long>, int> index;  // shared vertices on the face borders
  auto vertex = [&](int i, int j, int k) {
    auto key = std::make_tuple(long(i), long(j), long(k));
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    m.v.push_back({h.x * (2.0 * i / n - 1), h.y * (2.0 * j / n - 1), h.z * (2.0 * k / n - 1)});
    index[key] = int(m.v.size()) - 1;
    return int(m.v.size()) - 1;
  };
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side <= n; side += n)
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          int q[4];
          int uv[4][2] = {{a, b}, {a + 1, b}, {a + 1, b + 1}, {a, b + 1}};
          for (int c = 0; c < 4; ++c) {
            int g[3];
            g[axis] = side;
            g[(axis + 1) % 3] = uv[c][0];
            g[(axis + 2) % 3] = uv[c][1];
            q[c] = vertex(g[0], g[1], g[2]);
          }
          m.t.push_back({q[0], q[1], q[2]});
          m.t.push_back({q[0], q[2], q[3]});
        }
  orient_outward(m, {});
  return m;
}

// icosphere of radius r: an icosahedron subdivided `levels` times (20 * 4^levels triangles)
inline TestMesh icosphere(double r, int levels) {
  TestMesh m;
  const double p = (1 + std::sqrt(5.0)) / 2;
  const double c[12][3] = {{-1, p, 0},  {1, p, 0},  {-1, -p, 0}, {1, -p, 0}, {0, -1, p},  {0, 1, p},
                           {0, -1, -p}, {0, 1, -p}, {p, 0, -1},  {p, 0, 1},  {-p, 0, -1}, {-p, 0, 1}};
  for (const auto& x : c) {
    vec3<double> v(x[0], x[1], x[2]);
    m.v.push_back(v * (r / length(v)));
  }
  m.t = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
         {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
         {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int l = 0; l < levels; ++l) {
    std::map<std::pair<int, int>, int> mid;
    auto midpoint = [&](int a, int b) {
      auto key = std::minmax(a, b);
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      vec3<double> v = (m.v[size_t(a)] + m.v[size_t(b)]) * 0.5;
      m.v.push_back(v * (r / length(v)));
      mid[key] = int(m.v.size()) - 1;
      return int(m.v.size()) - 1;
    };
    std::vector<Idx3> next;
    for (const Idx3& t : m.t) {
      int ab = midpoint(t.i, t.j), bc = midpoint(t.j, t.k), ca = midpoint(t.k, t.i);
      next.push_back({t.i, ab, ca});
      next.push_back({t.j, bc, ab});
      next.push_back({t.k, ca, bc});
      next.push_back({ab, bc, ca});
    }
    m.t = std::move(next);
  }
  orient_outward(m, {});
  return m;
}

}  // namespace adj::test
