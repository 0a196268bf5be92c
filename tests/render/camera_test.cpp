// render/camera.h: orbit, pan, zoom, fit, projections, picking rays (pure math)
#include "render/camera.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <glm/gtc/matrix_transform.hpp>

using adj::render::Camera;

namespace {
constexpr glm::vec2 k_view{640.0f, 480.0f};

bool inside_view(const Camera& c, glm::vec3 p) {
  glm::vec3 s = c.project(p, k_view);
  return s.x >= 0 && s.x <= k_view.x && s.y >= 0 && s.y <= k_view.y && s.z >= 0 && s.z <= 1;
}
}  // namespace

TEST_CASE("camera: eye sits at distance from the target, looking at it", "[render][camera]") {
  Camera c;
  c.target = {1, 2, 3};
  c.distance = 4;
  c.yaw = 0.3f;
  c.pitch = 0.2f;
  CHECK(glm::length(c.eye() - c.target) == Approx(4.0f));
  CHECK(glm::dot(glm::normalize(c.target - c.eye()), c.forward()) == Approx(1.0f));
  // yaw 0, pitch 0 looks along -z
  c.yaw = 0;
  c.pitch = 0;
  CHECK(c.forward().z == Approx(-1.0f));
  // the target projects to the viewport centre, right is +x on screen, up is -y
  glm::vec3 s = c.project(c.target, k_view);
  CHECK(s.x == Approx(320.0f));
  CHECK(s.y == Approx(240.0f));
  CHECK(c.project(c.target + c.right() * 0.1f, k_view).x > 320.0f);
  CHECK(c.project(c.target + c.up() * 0.1f, k_view).y < 240.0f);
}

TEST_CASE("camera: orbit keeps distance and target, clamps pitch", "[render][camera]") {
  Camera c;
  c.target = {0.5f, 0, 0};
  glm::vec3 before = c.target;
  c.orbit(1.0f, 0.3f);
  CHECK(glm::length(c.eye() - c.target) == Approx(c.distance));
  CHECK(c.target == before);
  c.orbit(0.0f, 10.0f);
  CHECK(c.pitch < 1.571f);
  CHECK(c.up().y > 0.0f);  // never flips over the pole
  c.orbit(0.0f, -20.0f);
  CHECK(c.pitch > -1.571f);
}

TEST_CASE("camera: pan moves the target with the cursor, zoom scales distance", "[render][camera]") {
  for (bool ortho : {false, true}) {
    Camera c;
    c.orthographic = ortho;
    glm::vec3 anchor = c.target;
    glm::vec3 before = c.project(anchor, k_view);
    c.pan(50.0f, -20.0f, k_view.y);
    glm::vec3 after = c.project(anchor, k_view);
    // the world point under the cursor follows it
    CHECK(after.x - before.x == Approx(50.0f).margin(0.05));
    CHECK(after.y - before.y == Approx(-20.0f).margin(0.05));
    float d = c.distance;
    c.zoom(0.5f);
    CHECK(c.distance == Approx(d * 0.5f));
    c.zoom(-1.0f);  // ignored
    CHECK(c.distance == Approx(d * 0.5f));
  }
}

TEST_CASE("camera: fit frames every corner of the box", "[render][camera]") {
  for (bool ortho : {false, true})
    for (float aspect : {0.5f, 1.0f, 2.0f}) {
      Camera c;
      c.orthographic = ortho;
      c.yaw = 0.8f;
      c.pitch = 0.6f;
      glm::vec3 lo{-3, 0, -1}, hi{5, 2, 4};
      c.fit(lo, hi, aspect);
      glm::vec2 view{480.0f * aspect, 480.0f};
      for (int i = 0; i < 8; ++i) {
        glm::vec3 p{i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z};
        glm::vec3 s = c.project(p, view);
        INFO("ortho " << ortho << " aspect " << aspect << " corner " << i);
        CHECK(s.x >= 0.0f);
        CHECK(s.x <= view.x);
        CHECK(s.y >= 0.0f);
        CHECK(s.y <= view.y);
        CHECK(s.z >= 0.0f);
        CHECK(s.z <= 1.0f);
      }
      CHECK(c.target == 0.5f * (lo + hi));
    }
}

TEST_CASE("camera: projections follow Vulkan clip conventions", "[render][camera]") {
  Camera c;
  c.distance = 10;
  glm::mat4 p = c.projection(1.5f);
  // near plane -> depth 0, far plane -> depth 1
  glm::vec4 n = p * glm::vec4(0, 0, -c.near_plane(), 1);
  glm::vec4 f = p * glm::vec4(0, 0, -c.far_plane(), 1);
  CHECK(n.z / n.w == Approx(0.0f).margin(1e-5));
  CHECK(f.z / f.w == Approx(1.0f).margin(1e-5));
  // +y in view space is up on screen: negative clip y
  glm::vec4 up = p * glm::vec4(0, 1, -5, 1);
  CHECK(up.y < 0.0f);
  // orthographic: the half height at the target is distance * tan(fov / 2)
  c.orthographic = true;
  glm::vec4 edge = c.projection(1.0f) * glm::vec4(0, c.ortho_half_height(), -3, 1);
  CHECK(edge.y / edge.w == Approx(-1.0f));
  CHECK(inside_view(c, c.target));
}

TEST_CASE("camera: a pixel's ray passes through what projects there", "[render][camera]") {
  for (bool ortho : {false, true}) {
    Camera c;
    c.orthographic = ortho;
    c.target = {0.2f, 0.1f, -0.3f};
    c.yaw = -0.7f;
    c.pitch = 0.3f;
    glm::vec3 world{0.6f, 0.4f, 0.1f};
    glm::vec3 s = c.project(world, k_view);
    adj::render::Ray r = c.ray({s.x, s.y}, k_view);
    CHECK(glm::length(r.direction) == Approx(1.0f));
    // distance of the point from the ray
    glm::vec3 w = world - r.origin;
    float miss = glm::length(w - r.direction * glm::dot(w, r.direction));
    INFO("ortho " << ortho);
    CHECK(miss < 1e-3f);
    if (ortho) CHECK(glm::dot(r.direction, c.forward()) == Approx(1.0f));
  }
}

TEST_CASE("camera: a z-up camera orbits about +z and keeps +z up on screen", "[render][camera]") {
  Camera y, z;
  z.z_up = true;
  for (Camera* c : {&y, &z}) {
    c->target = {0.2f, -0.1f, 0.3f};
    c->distance = 3;
    c->yaw = 0.7f;
    c->pitch = 0.5f;
  }
  CHECK(z.world_up() == glm::vec3(0, 0, 1));
  // the same orbit turned by +90 deg about x: elevation above the xy plane, the eye above +z
  CHECK(glm::length(z.eye() - z.target) == Approx(3.0f));
  CHECK((z.eye() - z.target).z == Approx(3.0f * std::sin(0.5f)));
  CHECK((y.eye() - y.target).y == Approx(3.0f * std::sin(0.5f)));
  // screen up leans toward +z, right lies in the xy plane
  CHECK(z.up().z > 0.8f);
  CHECK(z.right().z == Approx(0.0f).margin(1e-6));
  CHECK(z.project(z.target + glm::vec3(0, 0, 0.1f), k_view).y < 240.0f);
  // orbiting turns about +z: the eye's height stays
  const float h = z.eye().z;
  z.orbit(1.0f, 0.0f);
  CHECK(z.eye().z == Approx(h));
  // yaw 0, pitch 0 looks along +y (y-up's -z turned)
  z.yaw = z.pitch = 0;
  CHECK(z.forward().y == Approx(1.0f));
}
