#include "render/camera.h"

#include <algorithm>
#include <cmath>
#include <glm/gtc/matrix_transform.hpp>

namespace adj::render {

namespace {
constexpr float k_max_pitch = 1.5533f;  // 89 degrees
}

glm::vec3 Camera::world_up() const { return z_up ? glm::vec3(0.0f, 0.0f, 1.0f) : glm::vec3(0.0f, 1.0f, 0.0f); }

glm::vec3 Camera::forward() const {
  // the unit vector from the target to the eye, negated (y-up; z-up turns it by +90 deg about x)
  glm::vec3 to_eye{std::sin(yaw) * std::cos(pitch), std::sin(pitch), std::cos(yaw) * std::cos(pitch)};
  if (z_up) to_eye = {to_eye.x, -to_eye.z, to_eye.y};
  return -to_eye;
}

glm::vec3 Camera::eye() const { return target - forward() * distance; }

glm::vec3 Camera::right() const { return glm::normalize(glm::cross(forward(), world_up())); }

glm::vec3 Camera::up() const { return glm::cross(right(), forward()); }

float Camera::near_plane() const { return std::max(distance * 0.01f, 1e-3f); }
float Camera::far_plane() const { return std::max(distance * 200.0f, 1.0f); }
float Camera::ortho_half_height() const { return distance * std::tan(fov_y * 0.5f); }

glm::mat4 Camera::view() const { return glm::lookAtRH(eye(), target, world_up()); }

glm::mat4 Camera::projection(float aspect) const {
  glm::mat4 p;
  if (orthographic) {
    // symmetric depth range around the eye, so zooming in never clips the scene
    float h = ortho_half_height(), w = h * aspect;
    p = glm::orthoRH_ZO(-w, w, -h, h, -far_plane() * 0.5f, far_plane());
  } else {
    p = glm::perspectiveRH_ZO(fov_y, aspect, near_plane(), far_plane());
  }
  p[1][1] = -p[1][1];  // Vulkan: +y down
  return p;
}

void Camera::orbit(float d_yaw, float d_pitch) {
  yaw = std::remainder(yaw + d_yaw, 2.0f * 3.14159265f);
  pitch = std::clamp(pitch + d_pitch, -k_max_pitch, k_max_pitch);
}

void Camera::pan(float dx_pixels, float dy_pixels, float viewport_height_pixels) {
  // world length of one pixel at the target's depth (same for both projections)
  float per_pixel = 2.0f * ortho_half_height() / std::max(viewport_height_pixels, 1.0f);
  target += (-right() * dx_pixels + up() * dy_pixels) * per_pixel;
}

void Camera::zoom(float factor) {
  if (!(factor > 0.0f)) return;
  distance = std::clamp(distance * factor, 1e-3f, 1e6f);
}

void Camera::fit(const glm::vec3& lo, const glm::vec3& hi, float aspect) {
  target = 0.5f * (lo + hi);
  float r = 0.5f * glm::length(hi - lo);
  if (!(r > 0.0f)) r = 0.5f;
  float t = std::tan(fov_y * 0.5f);
  float margin = 1.05f;
  if (orthographic) {
    distance = margin * r / (t * std::min(1.0f, aspect));
  } else {
    float half = std::min(fov_y * 0.5f, std::atan(t * aspect));
    distance = margin * r / std::sin(half);
  }
}

glm::vec3 Camera::project(const glm::vec3& world, glm::vec2 viewport) const {
  glm::vec4 clip = view_projection(viewport.x / viewport.y) * glm::vec4(world, 1.0f);
  glm::vec3 ndc = glm::vec3(clip) / clip.w;
  return {(ndc.x * 0.5f + 0.5f) * viewport.x, (ndc.y * 0.5f + 0.5f) * viewport.y, ndc.z};
}

Ray Camera::ray(glm::vec2 pixel, glm::vec2 viewport) const {
  glm::mat4 inv = glm::inverse(view_projection(viewport.x / viewport.y));
  glm::vec2 ndc = pixel / viewport * 2.0f - 1.0f;
  glm::vec4 n = inv * glm::vec4(ndc, 0.0f, 1.0f);
  glm::vec4 f = inv * glm::vec4(ndc, 1.0f, 1.0f);
  glm::vec3 pn = glm::vec3(n) / n.w, pf = glm::vec3(f) / f.w;
  Ray r;
  if (orthographic) {
    r.origin = pn;
    r.direction = forward();
  } else {
    r.origin = eye();
    r.direction = glm::normalize(pf - r.origin);
  }
  return r;
}

}  // namespace adj::render
