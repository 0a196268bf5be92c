#include "engine/model/builder.h"

#include "tests/engine/test_util.h"

using namespace adj;

static const std::string data = ADJ_TEST_DATA;

TEST_CASE("builder: cloth grid topology and incidence", "[model]") {
  ModelBuilderT<double> b;
  b.add_cloth_grid({0, 0, 0}, mat33<double>::identity(), 6, 6, 0.1, 0.01, {}, ClothMaterial<double>{}, true);
  auto m = b.finalize();
  REQUIRE(m);
  CHECK(m->particle_count() == 49);
  CHECK(m->tri_count() == 72);
  CHECK(m->edge_count() == 3 * 36 - 2 * 6);  // interior edges of the triangulation
  CHECK(m->particle_mass[0] == 0);           // pinned left column
  CHECK(m->particle_mass[1] == 0.01);
  // every slot appears exactly once in the incidence lists
  CHECK(int(m->incidence_slot.size()) == m->slot_count());
  CHECK(m->incidence_start.back() == m->slot_count());
  for (double a : m->tri_area) CHECK(a == Approx(0.005));
}

TEST_CASE("builder: soft grid has 5 tets per cell, positive volumes, total mass", "[model]") {
  ModelBuilderT<double> b;
  SoftMaterial<double> mat;
  mat.density = 1000;
  b.add_soft_grid({0, 0, 0}, 2, 2, 2, 0.1, {}, mat);
  auto m = b.finalize();
  REQUIRE(m);
  CHECK(m->particle_count() == 27);
  CHECK(m->tet_count() == 40);
  double vol = 0, mass = 0;
  for (double v : m->tet_volume) vol += v;
  for (double v : m->particle_mass) mass += v;
  CHECK(vol == Approx(0.008));
  CHECK(mass == Approx(8.0));
}

TEST_CASE("builder: cloth and soft bodies from OBJ files", "[model]") {
  ModelBuilderT<double> b;
  REQUIRE(b.add_cloth_mesh(data + "/meshes/quad_cloth.obj", {}, 0.1, {}, ClothMaterial<double>{}).is_ok());
  Placement<double> place;
  place.pos = {0, 2, 0};
  REQUIRE(b.add_soft_mesh(data + "/meshes/cube.obj", place, 0.25, {}, SoftMaterial<double>{}).is_ok());
  auto m = b.finalize();
  REQUIRE(m);
  CHECK(m->tri_count() == 8);
  CHECK(m->tet_count() == 4 * 4 * 4 * 5);  // the unit cube in 0.25 voxels
  double vol = 0;
  for (double v : m->tet_volume) vol += v;
  CHECK(vol == Approx(1.0));
}

TEST_CASE("builder: bad input is an error value naming the file or element", "[model]") {
  ModelBuilderT<double> b;
  Status st = b.add_cloth_mesh(data + "/meshes/missing.obj", {}, 0.1, {}, ClothMaterial<double>{});
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("missing.obj"));
  st = b.add_soft_mesh(data + "/meshes/bad_index.obj", {}, 0.1, {}, SoftMaterial<double>{});
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("bad_index.obj"));
  st = b.add_mesh_collider(data + "/meshes/nothing_here.obj", Placement<double>{});
  CHECK_THAT(st.message(), Catch::Contains("nothing_here.obj"));

  ModelBuilderT<double> c;
  c.add_particle({0, 0, 0}, {}, 1.0);
  c.add_particle({std::nan(""), 0, 0}, {}, 1.0);
  auto m = c.finalize();
  CHECK_FALSE(m.is_ok());
  CHECK_THAT(m.status().message(), Catch::Contains("particle 1"));

  ModelBuilderT<double> d;
  d.add_particle({0, 0, 0}, {}, 1.0);
  d.add_particle({1, 0, 0}, {}, 1.0);
  d.add_spring(0, 5, 1.0, 0.0);
  CHECK_THAT(d.finalize().status().message(), Catch::Contains("spring 0"));

  ModelBuilderT<double> e;
  for (int k = 0; k < 3; ++k) e.add_particle({double(k), 0, 0}, {}, 1.0);  // collinear
  e.add_triangle(0, 1, 2, ClothMaterial<double>{});
  CHECK_THAT(e.finalize().status().message(), Catch::Contains("triangle 0"));
  CHECK(ModelBuilderT<double>().finalize().is_ok());  // an empty model is a model (a scene to author on)

  ModelBuilderT<double> f;
  f.add_particle({0, 0, 0}, {}, 1.0);
  f.add_sphere({0, std::nan(""), 0}, 0.5);
  CHECK_THAT(f.finalize().status().message(), Catch::Contains("shape 0"));
  f.settings().contact_eps = 0;
  ModelBuilderT<double> g;
  g.add_particle({0, 0, 0}, {}, 1.0);
  g.settings().contact_ke = std::numeric_limits<double>::infinity();
  CHECK_THAT(g.finalize().status().message(), Catch::Contains("contact"));
}
