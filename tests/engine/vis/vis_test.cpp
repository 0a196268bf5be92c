// engine/vis/vis.h: surfaces are closed and face outward, normals are right and
// deterministic, arrays are packed as the renderer reads them.
#include <catch2/catch.hpp>

#include <map>
#include <utility>

#include "engine/model/builder.h"
#include "engine/vis/vis.h"

using namespace adj;

TEST_CASE("a flat cloth's normals are its plane's normal", "[vis]") {
  ModelBuilder b;
  mat33<float> flat = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});  // local y -> world z
  b.add_cloth_grid({0, 1, 0}, flat, 4, 3, 0.25f, 0.1f, {}, ClothMaterial<float>{});
  Model m = *b.finalize();
  State s = m.make_state();
  vis::Surface surf = vis::extract_surface(m, 0, m.tri_count(), 0, 0);
  CHECK(surf.triangle_count() == 24);
  CHECK(surf.vertex_count() == m.particle_count());
  std::vector<float> n(3 * m.particle_count(), 7.0f);
  vis::write_normals(s, surf, n.data());
  for (int i = 0; i < m.particle_count(); ++i) {
    INFO("particle " << i);
    CHECK(std::abs(n[3 * i + 1]) == Approx(1.0f));  // +-y, the same sign everywhere
    CHECK(n[3 * i + 1] == n[1]);
    CHECK(n[3 * i] == Approx(0.0f).margin(1e-6));
  }
  std::vector<float> p(3 * m.particle_count());
  vis::write_positions(s, 0, m.particle_count(), p.data());
  CHECK(p[3 * 5 + 0] == s.particle_q[5].x);
  CHECK(p[3 * 5 + 2] == s.particle_q[5].z);
}

TEST_CASE("a soft body's surface is closed and faces outward", "[vis]") {
  ModelBuilder b;
  b.add_soft_grid({0, 0, 0}, 2, 2, 2, 0.5f, {}, SoftMaterial<float>{});
  Model m = *b.finalize();
  State s = m.make_state();
  vis::Surface surf = vis::extract_surface(m, 0, 0, 0, m.tet_count());
  CHECK(surf.triangle_count() == 6 * 2 * 2 * 2);  // 6 faces of 2x2 cells, 2 triangles each

  // closed: every edge is used by exactly two triangles, once in each direction
  std::map<std::pair<uint32_t, uint32_t>, int> directed;
  for (int t = 0; t < surf.triangle_count(); ++t)
    for (int c = 0; c < 3; ++c) directed[{surf.indices[3 * t + c], surf.indices[3 * t + (c + 1) % 3]}]++;
  for (const auto& [e, count] : directed) {
    CHECK(count == 1);
    CHECK(directed.count({e.second, e.first}) == 1);
  }

  // outward: the normal of each surface vertex points away from the centre (0.5, 0.5, 0.5)
  std::vector<float> n(3 * m.particle_count(), 0.0f);
  vis::write_normals(s, surf, n.data());
  for (uint32_t v : surf.vertices) {
    const auto& q = s.particle_q[v];
    float d = (q.x - 0.5f) * n[3 * v] + (q.y - 0.5f) * n[3 * v + 1] + (q.z - 0.5f) * n[3 * v + 2];
    CHECK(d > 0.0f);
  }
}

TEST_CASE("vector fields become arrows with magnitudes, NaN magnitudes become 0", "[vis]") {
  ModelBuilder b;
  for (int i = 0; i < 3; ++i) b.add_particle({float(i), 0, 0}, {}, 1.0f, 0.1f);
  Model m = *b.finalize();
  State s = m.make_state();
  Array<vec3<float>> field = {{3, 4, 0}, {0, 0, 0}, {std::nanf(""), 0, 0}};
  std::vector<float> o(9), v(9), mag(3);
  float largest = vis::write_vectors(s, field, 0, 3, o.data(), v.data(), mag.data());
  CHECK(mag[0] == Approx(5.0f));
  CHECK(mag[1] == 0.0f);
  CHECK(mag[2] == 0.0f);
  CHECK(largest == Approx(5.0f));
  CHECK(o[3] == 1.0f);
  std::vector<float> sph(12);
  vis::write_spheres(m, s, 0, 3, sph.data());
  CHECK(sph[4 * 2] == 2.0f);
  CHECK(sph[4 * 2 + 3] == Approx(0.1f));
}
