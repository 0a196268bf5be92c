// app/gpu_view.h on lavapipe: the share-path choice, the CPU backend's mapped buffers (and
// the staging path's host half) holding exactly what engine/vis writes, and device-buffer
// draws rendering the same pixels as host arrays. The CUDA halves are GPU-only (bench gpu).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "app/gpu_view.h"
#include "engine/cuda/cuda.h"
#include "engine/model/builder.h"
#include "render/vk_check.h"
#include "tests/render/harness.h"

using namespace adj;
using adj::render::SharePath;

namespace {

Model small_scene() {
  ModelBuilder b;
  mat33<float> flat = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({-0.5f, 0.6f, -0.5f}, flat, 8, 8, 0.125f, 0.1f, {}, ClothMaterial<float>{}, false);
  for (int k = 0; k < 5; ++k) b.add_particle({-0.4f + 0.2f * k, 0.2f, 0.3f}, {}, 0.1f, 0.06f);
  b.add_ground();
  return std::move(*b.finalize());
}

// a state that is not the rest state (the cloth bent, the particles moved)
State moved(const Model& m) {
  State s = m.make_state();
  for (int i = 0; i < s.particle_count(); ++i) {
    auto& q = s.particle_q[i];
    q.y += 0.1f * std::sin(3.0f * q.x) * std::cos(2.0f * q.z);
  }
  return s;
}

// pixels where any channel differs by more than 5/255 (the golden-image tolerance)
size_t differing_pixels(const render::Capture& a, const render::Capture& b) {
  size_t count = 0;
  for (size_t p = 0; p + 3 < a.rgba.size(); p += 4)
    for (int c = 0; c < 3; ++c)
      if (std::abs(int(a.rgba[p + c]) - int(b.rgba[p + c])) > 5) {
        ++count;
        break;
      }
  return count;
}

}  // namespace

TEST_CASE("share path: interop only when CUDA runs on the Vulkan device with both exports", "[render][interop]") {
  app::ShareCaps all{true, true, true, true};
  std::string why;
  CHECK(app::choose_share_path({false, true, true, true}, &why) == SharePath::cpu_mapped);
  CHECK(why.empty());
#if defined(ADJ_HAS_CUDA) && defined(ADJ_RENDER_CUDA)
  CHECK(app::choose_share_path(all, &why) == SharePath::cuda_interop);
  CHECK(why.empty());
#endif
  app::ShareCaps c = all;
  c.cuda_device_matches = false;
  CHECK(app::choose_share_path(c, &why) == SharePath::cuda_staging);
  CHECK_FALSE(why.empty());
  c = all;
  c.export_semaphores = false;
  CHECK(app::choose_share_path(c, &why) == SharePath::cuda_staging);
  CHECK_FALSE(why.empty());
  c = all;
  c.export_memory = false;
  CHECK(app::choose_share_path(c, &why) == SharePath::cuda_staging);
  CHECK_FALSE(why.empty());
}

// lavapipe exports no semaphores and matches no CUDA UUID; the GPU machine's Vulkan device is
// the CUDA device
TEST_CASE("the CPU backend maps, CUDA stages on lavapipe and shares on the CUDA GPU", "[render][interop]") {
  render::test::Harness& h = render::test::shared();
  std::string why;
  CHECK(app::choose_share_path(app::share_caps(h.ctx, false), &why) == SharePath::cpu_mapped);
  const app::ShareCaps caps = app::share_caps(h.ctx, true);
  app::GpuView v(h.ctx, SharePath::cuda_interop);
  if (caps.cuda_device_matches) {
    // the Vulkan device is the CUDA device (a GPU machine): interop, as asked
    CHECK(app::choose_share_path(caps, &why) == SharePath::cuda_interop);
    CHECK(why.empty());
    CHECK(v.path() == SharePath::cuda_interop);
    CHECK(v.note().empty());
  } else {
    CHECK(app::choose_share_path(caps, &why) == SharePath::cuda_staging);
    CHECK_FALSE(why.empty());
    // asked for interop anyway: falls back to staging and says why
    CHECK(v.path() == SharePath::cuda_staging);
    CHECK_FALSE(v.note().empty());
  }
}

TEST_CASE("mapped buffers hold what engine/vis writes, per frame slot, and draw like host arrays",
          "[render][interop]") {
  render::test::Harness& h = render::test::shared();
  const int errors_before = h.ctx.validation_errors();
  Model m = small_scene();
  vis::Surface surface = vis::extract_surface(m, 0, m.tri_count(), 0, 0);
  const int n = m.particle_count(), first = 81;  // the five free particles follow the 9x9 cloth
  REQUIRE(n == 86);
  State s0 = m.make_state(), s1 = moved(m);

  for (SharePath path : {SharePath::cpu_mapped, SharePath::cuda_staging}) {
    app::GpuView v(h.ctx, path);
    REQUIRE(v.path() == path);
    v.set_layout(m, first, n, &surface);
    v.write(s0, 0);
    v.write(s1, 1);  // the other slot: frame 0's buffers keep state 0

    // what engine/vis writes on the host, byte for byte
    std::vector<float> spheres(4 * (n - first)), pos(3 * n), nrm(3 * n, 0.0f);
    vis::write_spheres(m, s1, first, n, spheres.data());
    vis::write_positions(s1, 0, n, pos.data());
    for (int i = 0; i < n; ++i) nrm[3 * i + 1] = 1.0f;  // untouched particles: unit y
    vis::write_normals(s1, surface, nrm.data());
    render::ArrayRef<glm::vec4> sp = v.spheres(1);
    REQUIRE(sp.buffer != VK_NULL_HANDLE);
    REQUIRE(sp.count == size_t(n - first));
    REQUIRE(v.positions(1).count == size_t(n));
    CHECK(v.spheres(0).buffer != v.spheres(1).buffer);

    // draw from the device buffers and from host copies: the same pixels
    render::DrawList dev, host;
    render::Camera cam;
    cam.fit({-0.7f, 0.0f, -0.7f}, {0.7f, 0.8f, 0.7f}, 320.0f / 240.0f);
    render::MeshDraw md;
    md.positions = v.positions(1);
    md.normals = v.normals(1);
    md.indices = surface.indices;
    dev.meshes.push_back(md);
    render::SphereDraw sd;
    sd.spheres = v.spheres(1);
    dev.spheres.push_back(sd);
    std::vector<glm::vec3> hp(n), hn(n);
    std::vector<glm::vec4> hs(n - first);
    std::memcpy(hp.data(), pos.data(), pos.size() * sizeof(float));
    std::memcpy(hn.data(), nrm.data(), nrm.size() * sizeof(float));
    std::memcpy(hs.data(), spheres.data(), spheres.size() * sizeof(float));
    host = dev;
    host.meshes[0].positions = hp;
    host.meshes[0].normals = hn;
    host.spheres[0].spheres = hs;
    render::Capture a = h.render(dev, cam);
    render::Capture b = h.render(host, cam);
    REQUIRE(a.rgba.size() == b.rgba.size());
    // (host spheres take the renderer's vertex-pulling path, device ones the instanced one:
    // equal within the golden tolerance, not byte for byte)
    const size_t pixels = a.rgba.size() / 4;
    CHECK(differing_pixels(a, b) <= pixels / 1000);
    // and the picture is not empty: some pixels differ from the top-left background
    size_t differing = 0;
    for (size_t p = 0; p < a.rgba.size(); p += 4) differing += std::memcmp(&a.rgba[p], &a.rgba[0], 3) != 0 ? 1 : 0;
    CHECK(differing > 1000);
    // and state 0 (slot 0) draws differently from state 1
    dev.meshes[0].positions = v.positions(0);
    dev.meshes[0].normals = v.normals(0);
    dev.spheres[0].spheres = v.spheres(0);
    CHECK(differing_pixels(h.render(dev, cam), a) > pixels / 100);
  }
  CHECK(h.ctx.validation_errors() == errors_before);
}

TEST_CASE("host writes are checked: layout first, matching particle count", "[render][interop]") {
  render::test::Harness& h = render::test::shared();
  Model m = small_scene();
  app::GpuView v(h.ctx, SharePath::cpu_mapped);
  CHECK_THROWS_WITH(v.write(m.make_state(), 0), Catch::Contains("set_layout"));
  v.set_layout(m, 0, m.particle_count(), nullptr);
  State wrong;
  CHECK_THROWS_WITH(v.write(wrong, 0), Catch::Contains("0 particles"));
  if (!cuda_available()) {
    // the staging path's device half needs a CUDA device: a clear error, not a crash
    app::GpuView st(h.ctx, SharePath::cuda_staging);
    st.set_layout(m, 0, m.particle_count(), nullptr);
    CHECK_THROWS_AS(st.write_device(nullptr, nullptr, *h.loop), render::Error);
  }
}
