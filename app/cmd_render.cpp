#include "app/cmd_render.h"

#include <cstdio>
#include <filesystem>

#include "app/image_io.h"
#include "app/scene_view.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"
#include "render/background.h"
#include "render/context.h"
#include "render/frame_loop.h"
#include "render/scene_renderer.h"
#include "render/target.h"
#include "render/vk_check.h"

namespace adj::app {

int run_render(const RenderOptions& o) {
  auto doc = scene::load_scene(o.scene_path);
  if (!doc) return std::fprintf(stderr, "%s\n", doc.status().message().c_str()), 1;
  auto cs = scene::compile<float>(*doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!cs) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), cs.status().message().c_str()), 1;

  // simulate
  const Model& model = cs->model;
  Solver solver({.substeps = cs->substeps});
  State a = model.make_state(), b = model.make_state();
  Control control = model.make_control();
  for (int t = 0; t < o.frames; ++t) {
    Status st = solver.step(model, a, b, control, cs->frame_dt);
    if (!st) return std::fprintf(stderr, "%s: frame %d: %s\n", o.scene_path.c_str(), t, st.message().c_str()), 1;
    std::swap(a, b);
  }
  Contacts contacts;
  if (o.contacts) compute_contacts(model, a, contacts);

  try {
    render::ContextOptions copt;
    copt.validation = o.validation;
    render::Context ctx(copt);
    ctx.create_device(VK_NULL_HANDLE);
    render::RenderTarget target(ctx, {o.width, o.height}, render::pick_msaa(ctx, 4));
    render::FrameLoop loop(ctx, target, nullptr);
    render::Background background(ctx, target);
    render::SceneRenderer renderer(ctx, target);

    SceneView view(*doc, *cs);
    Overlays ov;
    ov.contacts = o.contacts;
    ov.vectors = o.velocities;
    ov.wireframe = o.wireframe;
    const render::DrawList& list = view.build(a, &contacts, &a.particle_qd, ov);
    render::Camera camera = view.fit_camera(a, float(o.width) / float(o.height));

    const float top[3] = {0.36f, 0.45f, 0.56f}, bottom[3] = {0.80f, 0.83f, 0.86f};
    const float clear[4] = {0, 0, 0, 1};
    VkCommandBuffer cmd = loop.begin_frame();
    renderer.prepare(cmd, list, camera, loop.frame_index());
    target.begin(cmd, clear);
    background.draw(cmd, top, bottom);
    renderer.draw(cmd);
    target.end(cmd);
    loop.end_frame(true);
    auto cap = loop.take_capture();
    loop.wait_idle();
    std::string err;
    if (!cap || !write_png(o.out, cap->width, cap->height, cap->rgba, &err))
      return std::fprintf(stderr, "adjoint: %s\n", err.empty() ? "no frame" : err.c_str()), 1;
    std::printf("%s: frame %d rendered to %s (%ux%u)\n", doc->name.c_str(), o.frames, o.out.c_str(), cap->width,
                cap->height);
    if (ctx.validation_errors() > 0) {
      std::fprintf(stderr, "adjoint: %d Vulkan validation error(s)\n", ctx.validation_errors());
      return 3;
    }
  } catch (const render::Error& e) {
    std::fprintf(stderr, "adjoint: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace adj::app
