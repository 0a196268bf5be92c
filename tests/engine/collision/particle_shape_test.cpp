#include "engine/collision/particle_shape.h"

#include <cstring>

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

static ShapeRef<double> make_shape(int type, const std::vector<vec3<double>>& verts, const std::vector<Idx3>& tris) {
  // rotated 30 degrees about z, so box and capsule axes are not the world axes
  double c = std::cos(0.5), s = std::sin(0.5);
  mat33<double> rot = mat33<double>::from_cols({c, s, 0}, {-s, c, 0}, {0, 0, 1});
  ShapeRef<double> sh{type, {0.1, -0.2, 0.05}, rot, {0.5, 0.4, 0.3}, verts.data(), tris.data(), 0, int(tris.size())};
  if (type == GEOM_PLANE) {
    sh.size = vec3<double>(0.3, 1, 0.2) / length(vec3<double>(0.3, 1, 0.2));
  }
  return sh;
}

// a point just inside the surface of the shape, from its own distance function
static vec3<double> point_near_surface(const ShapeRef<double>& sh, std::mt19937& rng, double depth) {
  for (;;) {
    vec3<double> x = sh.pos + rand3(rng, -1, 1);
    vec3<double> n, surf;
    double d = shape_distance(sh, x, n, surf);
    vec3<double> y = surf - n * depth;  // depth below the surface
    double d2 = shape_distance(sh, y, n, surf);
    if (std::fabs(d2 + depth) < 1e-9 && std::fabs(d) < 2) return y;
  }
}

TEST_CASE("collider contact adjoint matches central differences (in contact, sliding)", "[forces][contact]") {
  std::vector<vec3<double>> verts = {{-1, 0, -1}, {1, 0.1, -1}, {1, 0, 1}, {-1, -0.1, 1}};
  std::vector<Idx3> tris = {{0, 1, 2}, {0, 2, 3}};
  std::mt19937 rng(8);
  for (int type : {GEOM_PLANE, GEOM_SPHERE, GEOM_BOX, GEOM_CAPSULE, GEOM_MESH}) {
    ShapeRef<double> sh = make_shape(type, verts, tris);
    for (int trial = 0; trial < 10; ++trial) {
      double radius = 0.05;
      // 1-3 cm penetration of the particle's radius, sliding tangentially
      vec3<double> x = point_near_surface(sh, rng, -radius + 0.01 + 0.02 * (trial % 3) / 2.0);
      vec3<double> n, surf;
      shape_distance(sh, x, n, surf);
      vec3<double> v = rand3(rng, -1, 1);
      v = v - n * (dot(v, n) + 0.1);  // approaching slightly
      std::vector<double> in(9);
      put3(in, 0, x);
      put3(in, 3, v);
      in[6] = 1e3;  // ke
      in[7] = 5;    // kd
      in[8] = 0.6;  // mu
      ShapeContactEval<double> e{sh, radius, 50.0, 0.05};
      double out[3];
      e.eval(in.data(), out);
      INFO("shape type " << type << " trial " << trial);
      REQUIRE(length(load3(out)) > 0);  // really in contact
      FdReport r = check_vjp(
          e, [&](const double* i, const double* o, double* a) { shape_contact_adjoint(e, i, o, a); }, in, rng, 1e-7);
      INFO(r.message);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("contact law: normal push, friction opposes slip and is capped by mu fn", "[forces][contact]") {
  vec3<double> n(0, 1, 0);
  // resting: only the normal force
  vec3<double> f = contact_force<double, double>(-0.01, n, {}, 1e3, 10.0, 100.0, 0.5, 0.01);
  CHECK(f.y == Approx(10.0));
  CHECK(std::fabs(f.x) < 1e-12);
  // fast slip: friction close to mu * fn, opposite to the slip
  f = contact_force<double, double>(-0.01, n, {10, 0, 0}, 1e3, 0.0, 1e4, 0.5, 0.01);
  CHECK(f.x < 0);
  CHECK(-f.x == Approx(5.0).epsilon(1e-3));
  // separated: nothing
  f = contact_force<double, double>(0.01, n, {1, -1, 0}, 1e3, 10.0, 100.0, 0.5, 0.01);
  CHECK(length(f) == 0);
}

TEST_CASE("shape distances: sphere, box, capsule, plane", "[forces][contact]") {
  ShapeRef<double> s{GEOM_SPHERE, {0, 0, 0}, mat33<double>::identity(), {1, 0, 0}, nullptr, nullptr, 0, 0};
  vec3<double> n, surf;
  CHECK(shape_distance(s, vec3<double>(0, 2, 0), n, surf) == Approx(1));
  CHECK(n.y == Approx(1));
  s.type = GEOM_BOX;
  s.size = {1, 2, 3};
  CHECK(shape_distance(s, vec3<double>(0, 0, 3.5), n, surf) == Approx(0.5));
  CHECK(shape_distance(s, vec3<double>(0.5, 0, 0), n, surf) == Approx(-0.5));
  CHECK(n.x == Approx(1));
  s.type = GEOM_CAPSULE;
  s.size = {0.5, 1, 0};
  CHECK(shape_distance(s, vec3<double>(0, 2, 0), n, surf) == Approx(0.5));
  CHECK(shape_distance(s, vec3<double>(1, 0.3, 0), n, surf) == Approx(0.5));
  s.type = GEOM_PLANE;
  s.size = {0, 1, 0};
  CHECK(shape_distance(s, vec3<double>(3, -0.25, 1), n, surf) == Approx(-0.25));
}

// ShapeContactEval by the pair table only, as every collider went before the plane's short path
struct ThroughPairTable {
  const ShapeContactEval<float>& e;
  static constexpr int in_count = 9, out_count = 3;
  template <class T>
  void eval(const T* i, T* o) const {
    e.eval_pair(i, o);
  }
};

TEST_CASE("collider contact: a plane's short path equals the pair table's bit for bit (force and adjoint)",
          "[forces][contact]") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const vec3<float> normals[] = {{0, 1, 0}, {0, 0, 1}, vec3<float>(0.3f, 1, 0.2f) / length(vec3<float>(0.3f, 1, 0.2f))};
  int touching = 0;
  for (const vec3<float>& n : normals)
    for (int trial = 0; trial < 2000; ++trial) {
      const ShapeRef<float> sh{
          GEOM_PLANE, {0.1f * u(rng), 0.1f * u(rng), 0}, mat33<float>::identity(), n, nullptr, nullptr, 0, 0};
      // positions within 2 radii of the plane (half in contact); some exact zeros and -0
      float in[9];
      for (int k = 0; k < 9; ++k) in[k] = u(rng);
      for (int k = 0; k < 3; ++k) in[k] *= 0.05f;
      if (trial % 5 == 0) in[trial % 3] = trial % 2 ? -0.f : 0.f;
      if (trial % 7 == 0) in[3 + trial % 3] = trial % 2 ? -0.f : 0.f;
      in[6] = 1e4f * (1.5f + in[6]);  // ke
      in[7] = 10.f * (1.5f + in[7]);  // kd
      in[8] = 0.5f * (1.5f + in[8]);  // mu
      const float kf = trial % 2 ? 0.f : 1.f;
      const ShapeContactEval<float> e{sh, 0.02f, kf, 0.01f};
      float a[3], b[3];
      e.eval_plane(in, a);
      e.eval_pair(in, b);
      INFO("normal " << n.x << " " << n.y << " " << n.z << " trial " << trial);
      REQUIRE(std::memcmp(a, b, sizeof a) == 0);
      touching += a[0] != 0 || a[1] != 0 || a[2] != 0;
      vec3<float> nn, surface;
      REQUIRE(e.touches(load3(in)) == (shape_distance(sh, load3(in), nn, surface) < e.radius));
      // the adjoint: vjp through each path (eval picks the plane's)
      const float ao[3] = {u(rng), u(rng), u(rng)};
      float ga[9], gb[9];
      shape_contact_adjoint(e, in, ao, ga);
      vjp(ThroughPairTable{e}, in, ao, gb);
      REQUIRE(std::memcmp(ga, gb, sizeof ga) == 0);
    }
  CHECK(touching > 1000);  // both branches taken
}
