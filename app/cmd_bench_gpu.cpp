// `adjoint bench gpu`: the CUDA backend's numbers (issue #8): forward steps/s with and
// without CUDA graphs, backward/forward time ratio, and the full sim + render frame time
// with the zero-copy interop vs the staging copy, on a 256x256 cloth and 1M free particles
// on the ground. Without a CUDA device it says why and exits 77 (skipped).
#include "app/cmd_bench_gpu.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "app/gpu_view.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_rollout.h"
#include "engine/model/builder.h"
#include "engine/vis/vis.h"
#include "render/camera.h"
#include "render/context.h"
#include "render/frame_loop.h"
#include "render/scene_renderer.h"
#include "render/target.h"
#include "render/vk_check.h"

#ifdef ADJ_RENDER_CUDA
#include "render/cuda_interop.h"
#endif

namespace adj::app {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Case {
  std::string name;
  Model model;
  bool cloth;
  int substeps;
};

Model cloth_model(int side) {
  ModelBuilder b;
  ClothMaterial<float> mat;
  mat33<float> flat = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  const float size = 2.0f;
  b.add_cloth_grid({-1.0f, 1.0f, -1.0f}, flat, side - 1, side - 1, size / float(side - 1), 0.001f, {0.5f, 0, 0}, mat,
                   true, 0.005f);
  b.add_sphere({0.2f, 0.4f, 0.0f}, 0.4f);
  b.add_ground();
  Result<Model> m = b.finalize();
  if (!m) throw render::Error("bench gpu: cloth: " + m.status().message());
  return std::move(*m);
}

// free particles in a block above the ground, falling onto it (ground contact only)
Model particles_model(int count) {
  ModelBuilder b;
  int side = 1;
  while (side * side * side < count) ++side;
  int k = 0;
  for (int y = 0; y < side && k < count; ++y)
    for (int z = 0; z < side && k < count; ++z)
      for (int x = 0; x < side && k < count; ++x, ++k)
        b.add_particle({0.02f * x - 1.0f, 0.1f + 0.02f * y, 0.02f * z - 1.0f}, {0.1f, 0, 0}, 0.001f, 0.008f);
  b.add_ground();
  Result<Model> m = b.finalize();
  if (!m) throw render::Error("bench gpu: particles: " + m.status().message());
  return std::move(*m);
}

void must(const Status& st, const std::string& what) {
  if (!st) throw render::Error(what + ": " + st.message());
}

struct EngineNumbers {
  double fwd_graph_ms = 0, fwd_eager_ms = 0, bwd_ms = 0;
};

// T steps forward (graph and eager) and backward; best of `reps`
EngineNumbers time_engine(const Case& c, int T, int reps) {
  EngineNumbers best{1e30, 1e30, 1e30};
  for (bool graphs : {true, false}) {
    CudaRollout r({.steps = T, .dt = 1.0f / 60.0f, .substeps = c.substeps, .graphs = graphs, .backward = graphs});
    must(r.upload(c.model), c.name + " upload");
    must(r.set_initial(c.model.make_state()), c.name + " initial state");
    must(r.forward(), c.name + " forward (warm-up, capture)");
    must(r.synchronize(), c.name + " forward");
    State seed = c.model.make_state();
    seed.zero();
    for (auto& v : seed.particle_q) v = vec3<float>(0, 1, 0);
    if (graphs) {
      must(r.backward(seed), c.name + " backward (warm-up, capture)");
      must(r.synchronize(), c.name + " backward");
    }
    for (int i = 0; i < reps; ++i) {
      auto t0 = Clock::now();
      must(r.forward(), c.name + " forward");
      must(r.synchronize(), c.name + " forward");
      double f = ms_since(t0);
      (graphs ? best.fwd_graph_ms : best.fwd_eager_ms) = std::min(graphs ? best.fwd_graph_ms : best.fwd_eager_ms, f);
      if (graphs) {
        t0 = Clock::now();
        must(r.backward(seed), c.name + " backward");
        must(r.synchronize(), c.name + " backward");
        best.bwd_ms = std::min(best.bwd_ms, ms_since(t0));
      }
    }
  }
  return best;
}

// sim + render: each frame one step on the device, the view's buffers filled by `path`,
// one offscreen frame drawn from them; mean wall time per frame
double time_frames(render::Context& ctx, const Case& c, render::SharePath path, int frames, std::string& note) {
  const VkExtent2D extent{1280, 720};
  render::RenderTarget target(ctx, extent, render::pick_msaa(ctx, 1));
  render::FrameLoop loop(ctx, target, nullptr);
  render::SceneRenderer scene(ctx, target);
  GpuView view(ctx, path);
  if (view.path() != path) {
    note = view.note();
    return -1;
  }
  vis::Surface surface;
  if (c.cloth) surface = vis::extract_surface(c.model, 0, c.model.tri_count(), 0, 0);
  view.set_layout(c.model, 0, c.cloth ? 0 : c.model.particle_count(), c.cloth ? &surface : nullptr);
  CudaRollout r({.steps = 1, .dt = 1.0f / 60.0f, .substeps = c.substeps, .graphs = true, .backward = false});
  must(r.upload(c.model), c.name + " upload");
  must(r.set_initial(c.model.make_state()), c.name + " initial state");
  render::Camera camera;
  camera.fit({-1.2f, 0.0f, -1.2f}, {1.2f, 1.2f, 1.2f}, float(extent.width) / float(extent.height));
  render::DrawList list;
  list.bounds_lo = {-1.5f, 0.0f, -1.5f};
  list.bounds_hi = {1.5f, 1.5f, 1.5f};
  auto one = [&]() {
    VkCommandBuffer cmd = loop.begin_frame();
    must(r.forward(), c.name + " step");
    view.write_device(r.device_positions(1), r.stream(), loop);
    must(r.restart_from_final(), c.name + " restart");
    const uint64_t f = loop.frame_index();
    list.meshes.clear();
    list.spheres.clear();
    if (c.cloth) {
      render::MeshDraw m;
      m.positions = view.positions(f);
      m.normals = view.normals(f);
      m.indices = surface.indices;
      list.meshes.push_back(m);
    } else {
      render::SphereDraw s;
      s.spheres = view.spheres(f);
      list.spheres.push_back(s);
    }
    const float clear[4] = {0.8f, 0.82f, 0.85f, 1.0f};
    scene.prepare(cmd, list, camera, f);
    target.begin(cmd, clear);
    scene.draw(cmd);
    target.end(cmd);
    loop.end_frame(false);
  };
  for (int i = 0; i < 3; ++i) one();  // warm-up: graph capture, pipelines
  loop.wait_idle();
  auto t0 = Clock::now();
  for (int i = 0; i < frames; ++i) one();
  loop.wait_idle();
  must(r.synchronize(), c.name + " frames");
  return ms_since(t0) / frames;
}

}  // namespace

int run_bench_gpu(const BenchGpuOptions& o) {
  std::string why;
  if (!cuda_available(&why)) {
    std::printf("bench gpu: skipped: no CUDA device (%s)\n", why.c_str());
    return 77;
  }
  try {
    std::vector<Case> cases;
    const int side = o.quick ? 64 : 256;
    const int count = o.quick ? 20000 : 1000000;
    cases.push_back({"cloth " + std::to_string(side) + "x" + std::to_string(side), cloth_model(side), true, 8});
    cases.push_back({std::to_string(count) + " particles", particles_model(count), false, 4});

    std::printf("engine: CUDA rollouts of %d steps (dt 1/60), best of %d; graph = whole forward as one CUDA graph\n",
                o.steps, o.reps);
    std::printf("%-18s %9s %10s %14s %14s %10s\n", "case", "particles", "substeps", "fwd steps/s", "eager steps/s",
                "bwd/fwd");
    for (const Case& c : cases) {
      EngineNumbers e = time_engine(c, o.steps, o.reps);
      std::printf("%-18s %9d %10d %14.1f %14.1f %10.2f\n", c.name.c_str(), c.model.particle_count(), c.substeps,
                  1000.0 * o.steps / e.fwd_graph_ms, 1000.0 * o.steps / e.fwd_eager_ms, e.bwd_ms / e.fwd_graph_ms);
      std::fflush(stdout);
    }

    // the Vulkan device that is the CUDA device (by UUID, never by index)
    render::ContextOptions co;
    co.validation = o.validation;
#ifdef ADJ_RENDER_CUDA
    co.device_uuid = render::cuda_device_uuid(0);
#endif
    render::Context ctx(co);
    ctx.create_device(VK_NULL_HANDLE);
    std::string path_why;
    render::SharePath best = choose_share_path(share_caps(ctx, true), &path_why);
    std::printf("\nsim + render: one step and one 1280x720 offscreen frame per frame, %d frames, on %s\n", o.frames,
                ctx.info().name.c_str());
    if (best != render::SharePath::cuda_interop) std::printf("interop unavailable: %s\n", path_why.c_str());
    std::printf("%-18s %16s %16s %10s\n", "case", "interop ms/frame", "staging ms/frame", "speed-up");
    int rc = 0;
    for (const Case& c : cases) {
      std::string note;
      double staging = time_frames(ctx, c, render::SharePath::cuda_staging, o.frames, note);
      double interop = best == render::SharePath::cuda_interop
                           ? time_frames(ctx, c, render::SharePath::cuda_interop, o.frames, note)
                           : -1;
      if (interop > 0)
        std::printf("%-18s %16.2f %16.2f %9.2fx\n", c.name.c_str(), interop, staging, staging / interop);
      else
        std::printf("%-18s %16s %16.2f %10s  %s\n", c.name.c_str(), "n/a", staging, "", note.c_str());
      std::fflush(stdout);
    }
    if (o.validation && ctx.validation_errors() > 0) {
      std::printf("bench gpu: %d validation errors\n", ctx.validation_errors());
      rc = 1;
    }
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench gpu: %s\n", e.what());
    return 1;
  }
}

}  // namespace adj::app
