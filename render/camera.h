#pragma once
// The viewer's camera: an orbit around a target point, pan, zoom, fit to bounds,
// perspective or orthographic. Pure math (glm), no Vulkan: unit-tested on its own.
//
// World convention: right-handed, +Y up, or +Z up when z_up is set (a z-up scene: the same
// orbit turned by +90 degrees about x, so yaw turns about +Z and yaw 0 looks along +Y).
// Projections follow Vulkan's clip space: y points down the screen and depth runs 0 (near) ..
// 1 (far). Pixels: (0,0) is the top-left corner.
#include <glm/glm.hpp>

namespace adj::render {

struct Ray {
  glm::vec3 origin{0.0f};
  glm::vec3 direction{0.0f, 0.0f, -1.0f};  // unit length
};

struct Camera {
  glm::vec3 target{0.0f};     // the point orbited around [m]
  float distance = 5.0f;      // eye to target [m]; also sets the orthographic scale
  float yaw = 0.6f;           // rotation about +Y [rad]; 0 looks along -Z
  float pitch = 0.45f;        // elevation above the horizon [rad], kept inside +-89 deg
  float fov_y = 0.7854f;      // vertical field of view [rad] (perspective)
  bool orthographic = false;  // ortho half-height = distance * tan(fov_y / 2)
  bool z_up = false;          // the world's up is +Z (else +Y)

  glm::vec3 eye() const;
  glm::vec3 forward() const;  // unit, eye -> target
  glm::vec3 right() const;    // unit, screen +x in world
  glm::vec3 up() const;       // unit, screen up in world
  glm::vec3 world_up() const;  // +Y, or +Z when z_up

  float near_plane() const;  // distance / 100 (>= 1 mm)
  float far_plane() const;   // distance * 200
  float ortho_half_height() const;

  glm::mat4 view() const;
  glm::mat4 projection(float aspect) const;  // aspect = width / height
  glm::mat4 view_projection(float aspect) const { return projection(aspect) * view(); }

  // mouse-style controls; angles in radians, pan in pixels of a viewport of that height
  void orbit(float d_yaw, float d_pitch);
  void pan(float dx_pixels, float dy_pixels, float viewport_height_pixels);
  void zoom(float factor);  // distance *= factor (factor < 1 moves closer), clamped > 0

  // frame the box [lo, hi]: target its center and set the distance so that its bounding
  // sphere fits the view (both axes) with a small margin; keeps yaw and pitch
  void fit(const glm::vec3& lo, const glm::vec3& hi, float aspect);

  // world point -> pixel (x right, y down) and depth (0..1); z < 0 or > 1 is clipped
  glm::vec3 project(const glm::vec3& world, glm::vec2 viewport) const;
  // the ray through a pixel center (pixel coordinates may be fractional)
  Ray ray(glm::vec2 pixel, glm::vec2 viewport) const;
};

}  // namespace adj::render
