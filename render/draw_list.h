#pragma once
// What the scene renderer draws in one frame: plain arrays (positions, normals, indices,
// instance data, colours, scalars) grouped into draw items. The caller fills a DrawList
// each frame; nothing here knows about the simulator.
//
// Every array is an ArrayRef: either host memory (copied into the renderer's per-frame
// upload buffer when the frame is recorded, so it may be reused right after) or a range of
// a Vulkan buffer that someone else filled (used in place: a buffer from create_buffer,
// later one exported to CUDA, so engine/vis kernels write straight into it).
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <optional>
#include <span>
#include <vector>

#include "render/colormap.h"

namespace adj::render {

struct Buffer;

template <class T>
struct ArrayRef {
  const T* host = nullptr;           // host elements, or null
  VkBuffer buffer = VK_NULL_HANDLE;  // or a device buffer holding them
  VkDeviceSize offset = 0;           // byte offset of element 0 in buffer
  size_t count = 0;                  // elements

  ArrayRef() = default;
  ArrayRef(std::span<const T> s) : host(s.data()), count(s.size()) {}
  ArrayRef(const std::vector<T>& v) : host(v.data()), count(v.size()) {}
  static ArrayRef device(VkBuffer b, size_t n, VkDeviceSize byte_offset = 0) {
    ArrayRef r;
    r.buffer = b;
    r.count = n;
    r.offset = byte_offset;
    return r;
  }
  bool empty() const { return count == 0; }
  size_t bytes() const { return count * sizeof(T); }
};

// picking: every item carries an object id (0 = not pickable); the element under a pixel
// is the triangle (meshes), instance (spheres, shapes, arrows, discs) or segment (lines)
using ObjectId = uint32_t;

// a triangle mesh, lit; smooth (given normals) or flat (no normals) shading
struct MeshDraw {
  ArrayRef<glm::vec3> positions;  // vertex positions [m], (vertex_count)
  ArrayRef<glm::vec3> normals;    // vertex normals, (vertex_count); empty: flat shading
  ArrayRef<uint32_t> indices;     // triangles, counter-clockwise, (3 * triangle_count)
  ArrayRef<float> scalars;        // per-vertex scalar, (vertex_count); empty: use color
  ColorScale scale;               // scalars -> colour
  glm::mat4 transform{1.0f};      // model -> world
  glm::vec4 color{0.75f, 0.75f, 0.78f, 1.0f};  // sRGB base colour (alpha ignored)
  glm::vec4 back_color{0.0f};                  // sRGB colour of back faces; alpha 0: same as front
  bool wireframe = false;                      // overlay the edges
  glm::vec4 wire_color{0.05f, 0.05f, 0.06f, 0.6f};
  bool cast_shadow = true;
  ObjectId id = 0;
};

// spheres as ray-cast impostors: exact silhouettes, cheap for millions of particles
struct SphereDraw {
  ArrayRef<glm::vec4> spheres;  // xyz centre [m], w radius [m], (instance_count)
  ArrayRef<float> scalars;      // per-instance scalar -> scale; optional
  ArrayRef<uint32_t> colors;    // per-instance RGBA8 (pack_rgba8, sRGB); optional
  ColorScale scale;
  glm::vec4 color{0.85f, 0.45f, 0.2f, 1.0f};  // sRGB, when neither scalars nor colors
  bool cast_shadow = true;
  ObjectId id = 0;
};

enum class ShapeKind : uint32_t {
  box = 0,      // size = half extents
  capsule = 1,  // along local y: size.x = radius, size.y = half length of the cylinder
  plane = 2,    // in local xz, normal +y: size.x, size.z = half extents
  sphere = 3,   // size.x = radius
  ring = 4,     // flat annulus in local xz (target markers): size.x outer, size.y inner radius
};

struct ShapeInstance {
  glm::vec3 position{0.0f};  // [m]
  float pad = 0.0f;
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};  // local -> world (w, x, y, z)
  glm::vec3 size{0.5f};                        // see ShapeKind
  uint32_t color = 0xffb0a090;                 // RGBA8 sRGB
};
static_assert(sizeof(ShapeInstance) == 48);

// colliders and markers: instanced boxes, capsules, planes, spheres, rings
struct ShapeDraw {
  ShapeKind kind = ShapeKind::box;
  ArrayRef<ShapeInstance> instances;
  bool cast_shadow = true;
  ObjectId id = 0;
};

// lines of a fixed width in pixels; per-vertex colour (with alpha) or one colour
struct LineDraw {
  ArrayRef<glm::vec3> positions;  // [m], (vertex_count)
  ArrayRef<uint32_t> colors;      // RGBA8 sRGB per vertex; optional
  ArrayRef<uint32_t> indices;     // segment pairs (2 * segment_count); empty: one strip
  glm::vec4 color{1.0f};          // sRGB + alpha, when no colors
  float width = 2.0f;             // [px], clamped to the device's range
  bool depth_test = true;
  ObjectId id = 0;
};

enum class ArrowLength : uint32_t {
  linear = 0,  // length = scale * |v|
  log = 1,     // length = scale * log(1 + |v| / reference)
};

// arrows from origin along vector: gradients, velocities, contact forces
struct ArrowDraw {
  ArrayRef<glm::vec3> origins;  // tails [m], (arrow_count)
  ArrayRef<glm::vec3> vectors;  // (arrow_count), any unit
  ArrayRef<float> scalars;      // optional colour source; default: |vector|
  ColorScale scale;             // magnitude (or scalar) -> colour
  ArrowLength length = ArrowLength::linear;
  float length_scale = 1.0f;  // [m per unit], see ArrowLength
  float reference = 1.0f;     // magnitude unit of the log mapping
  float max_length = 1e9f;    // [m], longer arrows are clamped
  float radius = 0.01f;       // shaft radius [m]; the head is 2.5x wider
  bool cast_shadow = true;
  ObjectId id = 0;
};

// small flat discs, e.g. contact points, facing their normals
struct DiscDraw {
  ArrayRef<glm::vec3> positions;              // [m], (disc_count)
  ArrayRef<glm::vec3> normals;                // unit, (disc_count)
  float radius = 0.02f;                       // [m]
  glm::vec4 color{0.95f, 0.3f, 0.25f, 1.0f};  // sRGB
  ObjectId id = 0;
};

// the ground: a grid on y = height (z = height when z_up) that fades with distance and catches
// shadows; z_up also turns the sky/ground ambient's hemisphere to +Z
struct Ground {
  bool visible = true;
  bool z_up = false;
  float height = 0.0f;                         // [m]
  float cell = 0.1f;                           // minor grid spacing [m]; major lines every 10 cells
  float extent = 0.0f;                         // fade-out radius [m]; 0: from the scene bounds
  glm::vec4 color{0.62f, 0.64f, 0.67f, 1.0f};  // sRGB
};

// one directional key light with a shadow map, plus sky/ground ambient
struct Lighting {
  glm::vec3 direction{0.45f, 1.0f, 0.35f};  // towards the light (need not be unit)
  glm::vec3 color{1.0f, 0.97f, 0.92f};
  float intensity = 1.4f;
  glm::vec3 sky{0.55f, 0.62f, 0.72f};    // ambient from above (linear)
  glm::vec3 ground{0.22f, 0.2f, 0.18f};  // ambient from below (linear)
  float ambient = 0.5f;
  bool shadows = true;
};

struct DrawList {
  std::vector<MeshDraw> meshes;
  std::vector<SphereDraw> spheres;
  std::vector<ShapeDraw> shapes;
  std::vector<ArrowDraw> arrows;
  std::vector<DiscDraw> discs;
  std::vector<LineDraw> lines;  // drawn last, alpha-blended, in this order
  Ground ground;
  Lighting lighting;
  // the region that matters: shadow map coverage and ground extent; lo > hi: from camera
  glm::vec3 bounds_lo{1.0f};
  glm::vec3 bounds_hi{-1.0f};
};

// a hash of everything the list draws (host arrays included), so a caller can tell that a
// frame would look the same as the last; none when an array lives in a device buffer (its
// contents can change behind the handle)
std::optional<uint64_t> content_hash(const DrawList& list);

}  // namespace adj::render
