// small test scenes (double precision unless noted), shared by solver and rollout tests
#pragma once

#include "engine/model/builder.h"

namespace adj::test {

template <class S = double>
inline ModelT<S> must(Result<ModelT<S>> r) {
  if (!r) throw std::runtime_error(r.status().message());
  return std::move(r.value());
}

// the implicit tests' soft blocks: density 500, shear modulus mu, lambda 2 mu, damping 0.5
inline SoftMaterial<double> soft_block_material(double mu) {
  SoftMaterial<double> mat;
  mat.density = 500;
  mat.mu = mu;
  mat.lambda = 2 * mu;
  mat.kd = 0.5;
  return mat;
}

// one particle thrown at a wall, then bouncing on the ground
inline ModelT<double> bounce_scene() {
  ModelBuilderT<double> b;
  b.add_particle({0, 0.3, 0}, {3, -1, 0.5}, 1.0, 0.05);
  b.add_ground(0.0);
  b.add_plane({0.6, 0, 0}, {-1, 0, 0});
  b.settings().contact_ke = 1e3;
  b.settings().contact_kd = 5;
  b.settings().contact_kf = 10;
  b.settings().contact_mu = 0.3;
  return must(b.finalize());
}

// 9 particles: a centre tied by 8 springs to a cube's corners, no gravity
inline ModelT<double> spring_cage_scene() {
  ModelBuilderT<double> b;
  b.add_particle({0.1, 0.05, 0}, {0.2, 0, -0.3}, 1.0);
  for (int k = 0; k < 8; ++k) {
    vec3<double> c((k & 1) ? 1 : -1, (k & 2) ? 1 : -1, (k & 4) ? 1 : -1);
    b.add_particle(c, {}, k % 3 == 0 ? 0.0 : 1.0);
    b.add_spring(0, k + 1, 100, 10, 1.5 + 0.05 * k);
  }
  b.settings().gravity = {0, 0, 0};
  return must(b.finalize());
}

// 6x6 cloth (49 particles), one edge pinned, lift/drag, above the ground
inline ModelT<double> cloth_scene(int n = 6) {
  ModelBuilderT<double> b;
  ClothMaterial<double> mat;
  mat.tri_ke = 200;
  mat.tri_ka = 200;
  mat.tri_kd = 2;
  mat.edge_ke = 0.05;
  mat.edge_kd = 0.01;
  double c = std::cos(0.3), s = std::sin(0.3);
  mat33<double> rot = mat33<double>::from_cols({1, 0, 0}, {0, s, c}, {0, c, -s});  // tilted, mostly horizontal
  b.add_cloth_grid({-0.5, 0.3, -0.5}, rot, n, n, 1.0 / n, 0.02, {0.1, 0, 0}, mat, true, 0.02);
  b.add_ground(0.0);
  b.settings().tri_lift = 1.0;
  b.settings().tri_drag = 0.5;
  b.settings().contact_ke = 500;
  b.settings().contact_kd = 2;
  b.settings().contact_kf = 5;
  b.settings().contact_mu = 0.4;
  return must(b.finalize());
}

// 2x2x2 cells (27 particles, 40 tets) dropped on the ground
inline ModelT<double> soft_scene() {
  ModelBuilderT<double> b;
  SoftMaterial<double> mat;
  mat.density = 100;
  mat.mu = 300;
  mat.lambda = 600;
  mat.kd = 1;
  b.add_soft_grid({0, 0.2, 0}, 2, 2, 2, 0.1, {0.3, -0.5, 0}, mat, false, 0.01);
  b.add_ground(0.0);
  b.settings().contact_ke = 300;
  b.settings().contact_kd = 2;
  b.settings().contact_kf = 5;
  b.settings().contact_mu = 0.5;
  b.settings().particle_damping = 0.1;
  return must(b.finalize());
}

// DiffTaichi-style mass-spring walker: 6 masses, 11 actuated springs, ground friction
inline ModelT<double> robot_scene() {
  ModelBuilderT<double> b;
  vec3<double> p[6] = {{0, 0.1, 0}, {0.2, 0.1, 0}, {0.4, 0.1, 0}, {0, 0.3, 0.05}, {0.2, 0.3, -0.05}, {0.4, 0.3, 0.05}};
  for (auto& x : p) b.add_particle(x + vec3<double>(0, 0.02, 0), {}, 0.5, 0.1);
  int springs[11][2] = {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {0, 3}, {1, 4}, {2, 5}, {0, 4}, {1, 3}, {1, 5}, {2, 4}};
  for (auto& s : springs) b.add_spring(s[0], s[1], 300, 2);
  b.add_ground(0.0);
  b.settings().contact_ke = 500;
  b.settings().contact_kd = 5;
  b.settings().contact_kf = 20;
  b.settings().contact_mu = 0.8;
  return must(b.finalize());
}

// a small pile of particles with particle-particle contact, falling on the ground
inline ModelT<double> pile_scene() {
  ModelBuilderT<double> b;
  int k = 0;
  for (int y = 0; y < 2; ++y)
    for (int z = 0; z < 2; ++z)
      for (int x = 0; x < 2; ++x, ++k)
        b.add_particle({0.09 * x + 0.01 * y, 0.06 + 0.09 * y, 0.09 * z + 0.005 * x},
                       {0.1 * (k % 3), 0, -0.05 * (k % 2)}, 0.1, 0.05);
  b.add_ground(0.0);
  b.settings().particle_contact = true;
  b.settings().contact_ke = 200;
  b.settings().contact_kd = 1;
  b.settings().contact_kf = 5;
  b.settings().contact_mu = 0.3;
  return must(b.finalize());
}

// particles sliding over each collider kind
inline ModelT<double> colliders_scene() {
  ModelBuilderT<double> b;
  b.add_sphere({0, 0, 0}, 0.3);
  b.add_box({1, 0, 0}, {0.3, 0.2, 0.3});
  b.add_capsule({2, 0, 0}, 0.2, 0.3);
  b.add_mesh_collider({{2.6, 0.1, -1}, {3.6, 0.0, -1}, {3.6, 0.1, 1}, {2.6, 0.0, 1}}, {{0, 1, 2}, {0, 2, 3}});
  b.add_particle({0.05, 0.33, 0.02}, {0.3, 0, 0.1}, 0.1, 0.05);
  b.add_particle({1.05, 0.23, 0.0}, {0.2, 0, -0.1}, 0.1, 0.05);
  b.add_particle({2.03, 0.53, 0.0}, {-0.2, 0, 0.1}, 0.1, 0.05);
  b.add_particle({3.1, 0.12, 0.1}, {0.3, 0, 0.2}, 0.1, 0.05);
  b.settings().contact_ke = 300;
  b.settings().contact_kd = 2;
  b.settings().contact_kf = 5;
  b.settings().contact_mu = 0.4;
  return must(b.finalize());
}

}  // namespace adj::test
