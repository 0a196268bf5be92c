// the pair functions of engine/collision/pairs.h: each named pair's adjoint against central
// differences in double, at random configurations in contact (both shapes moving, sliding),
// through the pair table (contact_pair) as every caller uses it
#include "engine/collision/pairs.h"

#include <cmath>
#include <random>
#include <vector>

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

// packed form of one pair's feature: in = A rot (9), pos (3), v (w, v: 6), B likewise, ke, kd,
// mu (pair_vjp's seeding order); out = the force on A, the contact point
struct PairEval {
  static constexpr int in_count = 39, out_count = 6;
  int type_a, type_b, k;
  vec3<double> size_a, size_b;
  bool b_moving;
  const std::vector<vec3<double>>* mesh_vertices;
  const std::vector<Idx3>* mesh_tris;
  double kf, eps;

  template <class T>
  static mat33<T> mat(const T* in) {
    mat33<T> r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = in[3 * i + j];
    return r;
  }
  template <class T>
  PlacedShape<T> shape(const T* in, int type, const vec3<double>& size, const rigid::svec<T>* v) const {
    const bool mesh = type == GEOM_MESH;
    return {{type, load3(in + 9), mat(in), lift<T>(size), mesh ? mesh_vertices->data() : nullptr,
             mesh ? mesh_tris->data() : nullptr, 0, mesh ? int(mesh_tris->size()) : 0},
            v};
  }
  template <class T>
  void eval(const T* in, T* out) const {
    const rigid::svec<T> va{load3(in + 12), load3(in + 15)}, vb{load3(in + 30), load3(in + 33)};
    const PlacedShape<T> A = shape(in, type_a, size_a, &va);
    const PlacedShape<T> B = shape(in + 18, type_b, size_b, b_moving ? &vb : nullptr);
    vec3<T> xc, n, f;
    if (!contact_pair(A, B, k, in[36], in[37], in[38], kf, eps, xc, n, f)) xc = f = vec3<T>();
    store3(out, f);
    store3(out + 3, xc);
  }
};

// the named adjoint of a pair kind (the table's row and column, spelled out)
template <class S>
bool named_adjoint(int kind, const PlacedShape<S>& A, const PlacedShape<S>& B, int k, S ke, S kd, S mu, S kf, S eps,
                   const vec3<S>& af, const vec3<S>& ax, PairGrad<S>& g) {
  switch (kind) {
    case PAIR_SPHERE_PLANE:
      return contact_sphere_plane_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_BOX_PLANE:
      return contact_box_plane_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_CAPSULE_PLANE:
      return contact_capsule_plane_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_SPHERE_SPHERE:
      return contact_sphere_sphere_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_SPHERE_BOX:
      return contact_sphere_box_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_SPHERE_CAPSULE:
      return contact_sphere_capsule_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_SPHERE_MESH:
      return contact_sphere_mesh_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_BOX_SPHERE:
      return contact_box_sphere_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_CAPSULE_SPHERE:
      return contact_capsule_sphere_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_CAPSULE_CAPSULE:
      return contact_capsule_capsule_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_BOX_CAPSULE:
      return contact_box_capsule_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_CAPSULE_BOX:
      return contact_capsule_box_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_BOX_BOX:
      return contact_box_box_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_CAPSULE_MESH:
      return contact_capsule_mesh_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    case PAIR_BOX_MESH:
      return contact_box_mesh_adjoint(A, B, k, ke, kd, mu, kf, eps, af, ax, g);
    default:
      return false;
  }
}

mat33<double> random_rotation(std::mt19937& rng) {
  vec3<double> a = rand3(rng, -1, 1), b = rand3(rng, -1, 1);
  a = a / length(a);
  b = b - a * dot(a, b);
  b = b / length(b);
  return mat33<double>::from_cols(a, b, cross(a, b));
}

vec3<double> type_size(int type) {
  switch (type) {
    case GEOM_SPHERE:
      return {0.3, 0, 0};
    case GEOM_BOX:
      return {0.4, 0.3, 0.2};
    case GEOM_CAPSULE:
      return {0.15, 0.3, 0};
    default:
      return {0, 0, 0};
  }
}

void put_mat(std::vector<double>& in, int at, const mat33<double>& R) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) in[std::size_t(at + 3 * i + j)] = R.m[i][j];
}

// FD-checks `wanted` touching features of type a against type b at random configurations;
// edges: box-box features past the 16 corners only
void check_pair(int a, int b, int wanted, bool edges = false) {
  std::mt19937 rng(unsigned(17 + 7 * a + 31 * b + (edges ? 5 : 0)));
  // a bent sheet facing up (counter-clockwise seen from above): solid below to a box's corners
  std::vector<vec3<double>> verts = {{-1, 0, -1}, {1, 0.1, -1}, {1, 0, 1}, {-1, -0.1, 1}};
  std::vector<Idx3> tris = {{0, 2, 1}, {0, 3, 2}};
  const int kind = pair_kind(a, b);
  REQUIRE(kind != PAIR_NONE);
  const bool b_static = b == GEOM_PLANE || b == GEOM_MESH;
  int found = 0;
  for (int trial = 0; trial < 20000 && found < wanted; ++trial) {
    std::vector<double> in(39);
    put_mat(in, 0, random_rotation(rng));
    put3(in, 9, rand3(rng, -0.6, 0.6));
    put3(in, 12, rand3(rng, -1, 1));
    put3(in, 15, rand3(rng, -1, 1));
    put_mat(in, 18, b_static ? mat33<double>::identity() : random_rotation(rng));
    put3(in, 27, b_static ? vec3<double>(0, -0.2, 0) : vec3<double>());
    put3(in, 30, rand3(rng, -1, 1));
    put3(in, 33, rand3(rng, -1, 1));
    in[36] = 1e3, in[37] = 5, in[38] = 0.6;
    vec3<double> size_b = type_size(b);
    if (b == GEOM_PLANE) size_b = vec3<double>(0.3, 1, 0.2) / length(vec3<double>(0.3, 1, 0.2));
    const vec3<double> size_a = type_size(a);
    const int count = contact_feature_count(a, size_a, b, size_b);
    for (int k = edges ? 16 : 0; k < count && found < wanted; ++k) {
      PairEval e{a, b, k, size_a, size_b, !b_static, &verts, &tris, 50.0, 0.05};
      double out[6];
      e.eval(in.data(), out);
      const double fn = length(load3(out));
      if (!(fn > 1e-3 && fn < 30)) continue;  // touching, pushing, not deep
      ++found;
      INFO("pair kind " << kind << " (type " << a << " against " << b << "), feature " << k);
      FdReport r = check_vjp(
          e,
          [&](const double* i, const double* o, double* adj) {
            const rigid::svec<double> va{load3(i + 12), load3(i + 15)}, vb{load3(i + 30), load3(i + 33)};
            const PlacedShape<double> A = e.shape(i, a, size_a, &va);
            const PlacedShape<double> B = e.shape(i + 18, b, size_b, b_static ? nullptr : &vb);
            PairGrad<double> g;
            REQUIRE(named_adjoint(kind, A, B, k, i[36], i[37], i[38], e.kf, e.eps, load3(o), load3(o + 3), g));
            std::vector<double> packed(39);
            put_mat(packed, 0, g.rot_a);
            put3(packed, 9, g.pos_a);
            put3(packed, 12, g.v_a.w);
            put3(packed, 15, g.v_a.v);
            put_mat(packed, 18, g.rot_b);
            put3(packed, 27, g.pos_b);
            put3(packed, 30, g.v_b.w);
            put3(packed, 33, g.v_b.v);
            packed[36] = g.ke, packed[37] = g.kd, packed[38] = g.mu;
            for (int q = 0; q < 39; ++q) adj[q] = packed[std::size_t(q)];
          },
          in, rng, 1e-7);
      INFO(r.message);
      CHECK(r.ok);
    }
  }
  CHECK(found == wanted);
}

}  // namespace

TEST_CASE("pair table: one function per pair of types, planes only on the static side", "[collision]") {
  CHECK(pair_kind(GEOM_SPHERE, GEOM_BOX) == PAIR_SPHERE_BOX);
  CHECK(pair_kind(GEOM_BOX, GEOM_SPHERE) == PAIR_BOX_SPHERE);
  CHECK(pair_kind(GEOM_BOX, GEOM_BOX) == PAIR_BOX_BOX);
  CHECK(pair_kind(GEOM_CAPSULE, GEOM_PLANE) == PAIR_CAPSULE_PLANE);
  CHECK(pair_kind(GEOM_PLANE, GEOM_SPHERE) == PAIR_NONE);
  CHECK(pair_kind(GEOM_MESH, GEOM_BOX) == PAIR_NONE);  // a body's mesh: engine/articulation/mesh_pairs.h
  CHECK(pair_kind(GEOM_CAPSULE, GEOM_MESH) == PAIR_CAPSULE_MESH);
  CHECK(pair_kind(GEOM_BOX, GEOM_MESH) == PAIR_BOX_MESH);  // its corners against the mesh's solid
  const vec3<double> box = type_size(GEOM_BOX), cap = type_size(GEOM_CAPSULE), sph = type_size(GEOM_SPHERE);
  CHECK(contact_feature_count(GEOM_BOX, box, GEOM_PLANE, vec3<double>(0, 1, 0)) == 8);
  CHECK(contact_feature_count(GEOM_CAPSULE, cap, GEOM_PLANE, vec3<double>(0, 1, 0)) == 2);
  CHECK(contact_feature_count(GEOM_BOX, box, GEOM_BOX, box) == 16 + 144);
  CHECK(contact_feature_count(GEOM_SPHERE, sph, GEOM_CAPSULE, cap) == 1);
  CHECK(contact_feature_count(GEOM_BOX, box, GEOM_CAPSULE, cap) == 8 + 5);          // 1 + ceil(2 h / r) axis samples
  CHECK(contact_feature_count(GEOM_CAPSULE, cap, GEOM_MESH, vec3<double>()) == 2);  // its end centres
  CHECK(contact_feature_count(GEOM_BOX, box, GEOM_MESH, vec3<double>()) == 8);      // its corners
}

TEST_CASE("contact_sphere_plane, contact_box_plane, contact_capsule_plane: adjoints match central differences",
          "[collision]") {
  check_pair(GEOM_SPHERE, GEOM_PLANE, 4);
  check_pair(GEOM_BOX, GEOM_PLANE, 8);
  check_pair(GEOM_CAPSULE, GEOM_PLANE, 6);
}

TEST_CASE("contact_sphere_sphere, _box, _capsule, _mesh: adjoints match central differences", "[collision]") {
  check_pair(GEOM_SPHERE, GEOM_SPHERE, 6);
  check_pair(GEOM_SPHERE, GEOM_BOX, 6);
  check_pair(GEOM_SPHERE, GEOM_CAPSULE, 6);
  check_pair(GEOM_SPHERE, GEOM_MESH, 6);
}

TEST_CASE("contact_box_sphere, contact_capsule_sphere: adjoints match central differences", "[collision]") {
  check_pair(GEOM_BOX, GEOM_SPHERE, 6);
  check_pair(GEOM_CAPSULE, GEOM_SPHERE, 6);
}

TEST_CASE("contact_capsule_capsule, contact_box_capsule, contact_capsule_box: adjoints match central differences",
          "[collision]") {
  check_pair(GEOM_CAPSULE, GEOM_CAPSULE, 6);
  check_pair(GEOM_BOX, GEOM_CAPSULE, 8);
  check_pair(GEOM_CAPSULE, GEOM_BOX, 8);
}

TEST_CASE("contact_capsule_mesh: a capsule's samples against a static mesh, adjoints match central differences",
          "[collision]") {
  check_pair(GEOM_CAPSULE, GEOM_MESH, 6);
}

TEST_CASE("contact_box_mesh: a box's corners against a static mesh's solid, adjoints match central differences",
          "[collision]") {
  check_pair(GEOM_BOX, GEOM_MESH, 8);
}

TEST_CASE("mesh_solid_distance: solid behind the faces, within 60 degrees of the inward normal", "[collision]") {
  // a closed octahedron (|x| + |y| + |z| = 1), wound counter-clockwise seen from outside
  const std::vector<vec3<double>> v = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  std::vector<Idx3> t;
  for (int sx : {0, 1})
    for (int sy : {2, 3})
      for (int sz : {4, 5}) {
        const bool flip = (sx == 1) ^ (sy == 3) ^ (sz == 5);  // an odd number of negative axes
        t.push_back(flip ? Idx3{sx, sz, sy} : Idx3{sx, sy, sz});
      }
  const ShapeRef<double> oct{GEOM_MESH, {}, mat33<double>::identity(), {}, v.data(), t.data(), 0, int(t.size())};
  vec3<double> n, surface;
  // inside, near the face x + y + z = 1: its plane distance and its normal
  const vec3<double> x(0.3, 0.3, 0.2);
  const double d = mesh_solid_distance(oct, x, n, surface);
  CHECK(std::fabs(d - (0.8 - 1) / std::sqrt(3.0)) < 1e-12);
  CHECK(length(n - vec3<double>(1, 1, 1) / std::sqrt(3.0)) < 1e-12);
  // outside: the positive distance
  CHECK(mesh_solid_distance(oct, vec3<double>(0.6, 0.6, 0.6), n, surface) > 0);
  // the centre, nearest all eight faces alike: inside, 1/sqrt(3) deep
  CHECK(std::fabs(mesh_solid_distance(oct, vec3<double>(), n, surface) + 1 / std::sqrt(3.0)) < 1e-12);
  // wound the other way round, the same points are outside
  std::vector<Idx3> inward = t;
  for (Idx3& f : inward) std::swap(f.j, f.k);
  const ShapeRef<double> out{GEOM_MESH, {}, mat33<double>::identity(), {}, v.data(), inward.data(), 0, 8};
  CHECK(mesh_solid_distance(out, x, n, surface) > 0);
  // an open sheet's rim: below the sheet it is solid, beside the rim (below its plane) it is not
  const std::vector<vec3<double>> sv = {{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
  const std::vector<Idx3> st = {{0, 2, 1}, {0, 3, 2}};
  const ShapeRef<double> sheet{GEOM_MESH, {}, mat33<double>::identity(), {}, sv.data(), st.data(), 0, 2};
  CHECK(std::fabs(mesh_solid_distance(sheet, vec3<double>(0.5, -0.01, 0.2), n, surface) + 0.01) < 1e-12);
  CHECK(n.y == 1.0);
  CHECK(mesh_solid_distance(sheet, vec3<double>(0.5, 0.01, 0.2), n, surface) > 0);
  CHECK(mesh_solid_distance(sheet, vec3<double>(1.2, -0.05, 0.2), n, surface) > 0);      // beside the rim
  CHECK(mesh_solid_distance(sheet, vec3<double>(1.02, -0.1, 0.2), n, surface) < -0.09);  // just under it
}

TEST_CASE("contact_box_box: corner and edge-edge adjoints match central differences", "[collision]") {
  check_pair(GEOM_BOX, GEOM_BOX, 8);
  check_pair(GEOM_BOX, GEOM_BOX, 6, true);
}
