#include "render/demo_scenes.h"

#include <algorithm>
#include <cmath>

namespace adj::render::demo {

namespace {

constexpr float k_pi = 3.14159265358979f;

float smoothstep(float a, float b, float x) {
  float t = std::clamp((x - a) / (b - a), 0.0f, 1.0f);
  return t * t * (3.0f - 2.0f * t);
}

// splitmix64: deterministic, platform independent
struct Rng {
  uint64_t s;
  float uniform() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return float(z >> 40) / float(1ull << 24);
  }
};

// a point of the draped cloth from its material coordinates (u, v) in [-1, 1]^2
glm::vec3 drape(float u, float v, glm::vec3 center, float radius) {
  const float r = radius + 0.012f, phi_c = 1.3f, ground = 0.006f;
  float s = std::sqrt(u * u + v * v), th = std::atan2(v, u);
  glm::vec3 radial(std::cos(th), 0.0f, std::sin(th));
  if (s <= r * phi_c) {  // lying on the sphere's cap
    float phi = s / r;
    return center + r * (std::sin(phi) * radial + glm::vec3(0.0f, std::cos(phi), 0.0f));
  }
  // leave the cap along its tangent, bend towards vertical, pool on the ground
  glm::vec3 p = center + r * (std::sin(phi_c) * radial + glm::vec3(0.0f, std::cos(phi_c), 0.0f));
  float rest = s - r * phi_c, t = 0.0f, dt = 0.01f;
  while (t < rest) {
    float step = std::min(dt, rest - t);
    float beta = 0.5f * k_pi - (0.5f * k_pi - phi_c) * std::exp(-t / 0.3f);
    glm::vec3 d = std::cos(beta) * radial - glm::vec3(0.0f, std::sin(beta), 0.0f);
    if (p.y <= ground) d = radial;
    p += d * step;
    p.y = std::max(p.y, ground);
    t += step;
  }
  float fold = 0.05f * std::sin(9.0f * th) * smoothstep(0.1f, 0.5f, rest);
  return p + radial * fold;
}

}  // namespace

std::unique_ptr<Scene> draped_cloth(uint32_t n, bool arrows) {
  auto sc = std::make_unique<Scene>();
  Scene& s = *sc;
  const glm::vec3 center(0.0f, 0.55f, 0.0f);
  const float radius = 0.5f;
  s.positions.resize(size_t(n) * n);
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t i = 0; i < n; ++i) {
      float u = -1.0f + 2.0f * float(i) / float(n - 1), v = -1.0f + 2.0f * float(j) / float(n - 1);
      s.positions[size_t(j) * n + i] = drape(u, v, center, radius);
    }
  s.indices = grid_indices(n, n);
  s.normals = vertex_normals(s.positions, s.indices);
  s.scalars.resize(s.positions.size());
  for (size_t i = 0; i < s.positions.size(); ++i) s.scalars[i] = s.positions[i].y;

  MeshDraw cloth;
  cloth.positions = s.positions;
  cloth.normals = s.normals;
  cloth.indices = s.indices;
  cloth.scalars = s.scalars;
  cloth.scale = {Colormap::viridis, 0.0f, 1.1f};
  cloth.back_color = {0.85f, 0.8f, 0.7f, 1.0f};
  cloth.id = 1;
  s.list.meshes.push_back(cloth);

  ShapeInstance ball;
  ball.position = center;
  ball.size = glm::vec3(radius);
  ball.color = pack_rgba8({0.7f, 0.7f, 0.72f, 1.0f});
  s.shapes = {ball};
  s.list.shapes.push_back({ShapeKind::sphere, s.shapes, true, 2});

  if (arrows) {  // a made-up gradient on every vertex: along the normal, swirling in sign
    s.origins = s.positions;
    s.vectors.resize(s.positions.size());
    for (size_t i = 0; i < s.positions.size(); ++i) {
      glm::vec3 p = s.positions[i];
      s.vectors[i] = s.normals[i] * (std::sin(4.0f * p.x) * std::cos(3.0f * p.z));
    }
    ArrowDraw a;
    a.origins = s.origins;
    a.vectors = s.vectors;
    a.scale = {Colormap::viridis, 0.0f, 1.0f};
    a.length_scale = 0.04f;
    a.radius = 0.002f;
    a.id = 3;
    s.list.arrows.push_back(a);
  }

  s.list.bounds_lo = {-1.5f, 0.0f, -1.5f};
  s.list.bounds_hi = {1.5f, 1.1f, 1.5f};
  s.list.ground.cell = 0.1f;
  s.camera.target = {0.0f, 0.35f, 0.0f};
  s.camera.distance = 3.6f;
  s.camera.yaw = 0.6f;
  s.camera.pitch = 0.42f;
  return sc;
}

std::unique_ptr<Scene> arrow_field() {
  auto sc = std::make_unique<Scene>();
  Scene& s = *sc;
  const int n = 14;
  float vmax = 0.0f;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      float x = -1.0f + 2.0f * float(i) / float(n - 1), z = -1.0f + 2.0f * float(j) / float(n - 1);
      glm::vec3 v(-z + 0.25f * x, 0.35f * std::exp(-2.0f * (x * x + z * z)), x + 0.25f * z);
      v *= 0.6f + 0.4f * std::cos(2.0f * x);
      s.origins.push_back({x, 0.03f, z});
      s.vectors.push_back(v);
      vmax = std::max(vmax, glm::length(v));
    }
  ArrowDraw field;
  field.origins = s.origins;
  field.vectors = s.vectors;
  field.scale = {Colormap::viridis, 0.0f, vmax};
  field.length_scale = 0.14f;
  field.radius = 0.011f;
  field.id = 1;
  s.list.arrows.push_back(field);

  // contacts: discs on the ground and log-length forces, signed colour
  for (int k = 0; k < 7; ++k) {
    float x = -0.9f + 0.3f * float(k);
    s.points.push_back({x, 0.002f, 1.35f});
    s.normals.push_back({0.0f, 1.0f, 0.0f});
  }
  for (int k = 0; k < 7; ++k) {
    s.positions.push_back(s.points[k]);
    float f = std::pow(10.0f, float(k) * 0.5f - 1.0f);  // 0.1 .. 100 N
    s.scalars.push_back(float(k - 3) / 3.0f);
    glm::vec3 dir = glm::normalize(glm::vec3(0.15f * float(k - 3), 1.0f, 0.0f));
    s.arrow_scalars.push_back(0.0f);
    s.vectors.push_back(dir * f);
  }
  ArrowDraw forces;
  forces.origins = std::span<const glm::vec3>(s.positions);
  forces.vectors = std::span<const glm::vec3>(s.vectors.data() + n * n, 7);
  forces.scalars = s.scalars;
  forces.scale = {Colormap::diverging, -1.0f, 1.0f};
  forces.length = ArrowLength::log;
  forces.length_scale = 0.1f;
  forces.reference = 0.1f;
  forces.radius = 0.014f;
  forces.id = 2;
  s.list.arrows.push_back(forces);
  // the field's span was taken before the forces were appended: point it at the new storage
  s.list.arrows[0].vectors = std::span<const glm::vec3>(s.vectors.data(), n * n);

  DiscDraw discs;
  discs.positions = s.points;
  discs.normals = s.normals;
  discs.radius = 0.06f;
  discs.id = 3;
  s.list.discs.push_back(discs);

  s.list.bounds_lo = {-1.1f, 0.0f, -1.1f};
  s.list.bounds_hi = {1.1f, 0.6f, 1.5f};
  s.camera.target = {0.0f, 0.1f, 0.3f};
  s.camera.distance = 3.1f;
  s.camera.yaw = 0.35f;
  s.camera.pitch = 0.75f;
  return sc;
}

std::unique_ptr<Scene> trajectories() {
  auto sc = std::make_unique<Scene>();
  Scene& s = *sc;
  const glm::vec3 start(-1.2f, 0.1f, -0.2f), target(1.0f, 0.0f, 0.3f), g(0.0f, -9.81f, 0.0f);
  const glm::vec3 v_best(3.05f, 3.4f, 0.69f);
  const int iterations = 8;
  std::vector<GhostTrajectory> ghosts;
  s.trajectories.resize(iterations);
  float loss0 = 0.0f;
  for (int k = 0; k < iterations; ++k) {
    float a = std::pow(0.55f, float(k));
    glm::vec3 v = v_best + a * glm::vec3(-1.1f, 1.2f, -0.9f);
    std::vector<glm::vec3>& pts = s.trajectories[k];
    for (int i = 0; i < 200; ++i) {
      float t = 0.01f * float(i);
      glm::vec3 p = start + v * t + 0.5f * g * t * t;
      if (p.y < 0.0f && i > 0) break;
      pts.push_back(p);
    }
    float loss = glm::length(glm::vec2(pts.back().x - target.x, pts.back().z - target.z));
    if (k == 0) loss0 = loss;
    ghosts.push_back({pts, loss});
  }
  add_ghost_trajectories(s.lines, ghosts, ColorScale{Colormap::viridis, loss0, 0.0f});

  // a spring chain hanging between two posts, drawn as lines with particles on the nodes
  const int nodes = 12;
  for (int i = 0; i < nodes; ++i) {
    float x = -0.8f + 1.6f * float(i) / float(nodes - 1);
    float y = 1.1f - 0.35f * (1.0f - (x / 0.8f) * (x / 0.8f));
    s.points.push_back({x, y, -0.7f});
    s.spheres.push_back({x, y, -0.7f, 0.03f});
  }
  s.lines.add_strip(s.points, pack_rgba8({0.95f, 0.95f, 0.92f, 1.0f}));
  s.list.lines.push_back(s.lines.draw(3.0f, 1));

  SphereDraw nodes_draw;
  nodes_draw.spheres = s.spheres;
  nodes_draw.color = {0.9f, 0.35f, 0.2f, 1.0f};
  nodes_draw.id = 2;
  s.list.spheres.push_back(nodes_draw);

  ShapeInstance ring;
  ring.position = target + glm::vec3(0.0f, 0.004f, 0.0f);
  ring.size = {0.14f, 0.1f, 0.0f};
  ring.color = pack_rgba8({0.9f, 0.15f, 0.15f, 1.0f});
  ShapeInstance dot = ring;
  dot.size = {0.04f, 0.0f, 0.0f};
  s.markers = {ring, dot};
  s.list.shapes.push_back({ShapeKind::ring, s.markers, false, 3});

  ShapeInstance post;
  post.size = {0.025f, 0.55f, 0.025f};
  post.color = pack_rgba8({0.55f, 0.5f, 0.45f, 1.0f});
  post.position = {-0.8f, 0.55f, -0.7f};
  s.shapes.push_back(post);
  post.position = {0.8f, 0.55f, -0.7f};
  s.shapes.push_back(post);
  s.list.shapes.push_back({ShapeKind::box, s.shapes, true, 4});

  s.list.bounds_lo = {-1.3f, 0.0f, -0.9f};
  s.list.bounds_hi = {1.3f, 1.2f, 0.6f};
  s.camera.target = {0.0f, 0.45f, 0.0f};
  s.camera.distance = 3.4f;
  s.camera.yaw = 0.25f;
  s.camera.pitch = 0.3f;
  return sc;
}

std::unique_ptr<Scene> particle_pile(uint32_t count, float radius) {
  auto sc = std::make_unique<Scene>();
  Scene& s = *sc;
  // a cone of height 0.6 R holding `count` spheres at ~60 % packing
  double volume = double(count) * std::pow(2.0 * radius, 3.0) / 0.6;
  float R = float(std::cbrt(volume * 3.0 / (k_pi * 0.6)));
  float H = 0.6f * R;
  Rng rng{12345};
  s.spheres.reserve(count);
  s.scalars.reserve(count);
  while (s.spheres.size() < count) {
    float rho = R * std::sqrt(rng.uniform()), th = 2.0f * k_pi * rng.uniform();
    float h = H * (1.0f - rho / R);
    float y = radius + rng.uniform() * std::max(h, 0.0f);
    if (y > radius + h) continue;
    s.spheres.push_back({rho * std::cos(th), y, rho * std::sin(th), radius});
    s.scalars.push_back(y / (H + radius));
  }
  SphereDraw p;
  p.spheres = s.spheres;
  p.scalars = s.scalars;
  p.scale = {Colormap::viridis, 0.0f, 1.0f};
  p.id = 1;
  s.list.spheres.push_back(p);

  ShapeInstance box;
  box.position = {R * 0.9f, R * 0.15f, -R * 0.7f};
  box.rotation = glm::angleAxis(0.5f, glm::vec3(0.0f, 1.0f, 0.0f));
  box.size = {R * 0.25f, R * 0.15f, R * 0.2f};
  box.color = pack_rgba8({0.75f, 0.55f, 0.35f, 1.0f});
  s.shapes = {box};
  s.list.shapes.push_back({ShapeKind::box, s.shapes, true, 2});
  ShapeInstance cap;
  cap.position = {-R * 0.8f, R * 0.1f, R * 0.75f};
  cap.rotation = glm::angleAxis(1.2f, glm::vec3(0.0f, 0.0f, 1.0f)) *
                 glm::angleAxis(0.0f, glm::vec3(0.0f, 1.0f, 0.0f));
  cap.size = {R * 0.1f, R * 0.3f, 0.0f};
  cap.color = pack_rgba8({0.45f, 0.6f, 0.8f, 1.0f});
  s.shapes2 = {cap};
  s.list.shapes.push_back({ShapeKind::capsule, s.shapes2, true, 3});
  ShapeInstance ramp;  // a tilted plane collider behind the pile
  ramp.position = {-R * 0.2f, R * 0.25f, -R * 1.25f};
  ramp.rotation = glm::angleAxis(0.6f, glm::vec3(1.0f, 0.0f, 0.0f));
  ramp.size = {R * 0.45f, 0.0f, R * 0.3f};
  ramp.color = pack_rgba8({0.55f, 0.75f, 0.55f, 1.0f});
  s.markers = {ramp};
  s.list.shapes.push_back({ShapeKind::plane, s.markers, true, 4});

  s.list.bounds_lo = {-1.1f * R, 0.0f, -1.5f * R};
  s.list.bounds_hi = {1.1f * R, H + radius, 1.1f * R};
  s.list.ground.cell = std::max(0.05f, std::pow(10.0f, std::floor(std::log10(R))) * 0.1f);
  s.camera.yaw = 0.5f;
  s.camera.pitch = 0.5f;
  s.camera.fit(s.list.bounds_lo, s.list.bounds_hi, 4.0f / 3.0f);
  s.camera.distance *= 0.8f;
  return sc;
}

}  // namespace adj::render::demo
