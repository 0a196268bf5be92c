// a cylinder as a mesh shape: a closed prism of `segments` sides, radius r and half-length h
// along z, centred on the shape origin. it touches as a cylinder (the convex hull of its two
// rims of `segments` corners: it stands on a flat face where a capsule of the same length is
// rounded off; on its rim it rolls as a 24-gon, within 0.9% of the circle). the caller sets the mass (the mesh
// shape's density stays 0): the importers use the true cylinder's
#pragma once

#include <cmath>
#include <numbers>
#include <string>

#include "engine/model/rigid_builder.h"

namespace adj {

inline constexpr int kRigidCylinderSegments = 24;

inline void rigid_cylinder_mesh(double r, double h, RigidShapeDesc& s, const std::string& name,
                                int segments = kRigidCylinderSegments) {
  s.type = GEOM_MESH;
  s.density = 0;
  s.scale = {1, 1, 1};
  s.mesh_name = name;
  s.mesh_vertices.clear();
  s.mesh_tris.clear();
  const int n = segments;
  // rim vertices 2k (bottom, z = -h) and 2k + 1 (top), then the two cap centres
  for (int k = 0; k < n; ++k) {
    const double a = 2 * std::numbers::pi * k / n;
    s.mesh_vertices.push_back({r * std::cos(a), r * std::sin(a), -h});
    s.mesh_vertices.push_back({r * std::cos(a), r * std::sin(a), h});
  }
  const int cb = 2 * n, ct = 2 * n + 1;
  s.mesh_vertices.push_back({0, 0, -h});
  s.mesh_vertices.push_back({0, 0, h});
  // counter-clockwise seen from outside
  for (int k = 0; k < n; ++k) {
    const int b0 = 2 * k, t0 = b0 + 1, b1 = 2 * ((k + 1) % n), t1 = b1 + 1;
    s.mesh_tris.push_back({b0, b1, t1});
    s.mesh_tris.push_back({b0, t1, t0});
    s.mesh_tris.push_back({cb, b1, b0});
    s.mesh_tris.push_back({ct, t0, t1});
  }
}

}  // namespace adj
