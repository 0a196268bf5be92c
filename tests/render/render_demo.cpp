// render_demo SCENE OUT.png [W H]: one demo scene (cloth, arrows, trajectories, particles)
// rendered offscreen with validation; for looking at the renderer's output by eye.
#include <stb_image_write.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness.h"
#include "render/demo_scenes.h"

using namespace adj::render;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: render_demo cloth|arrows|trajectories|particles OUT.png [W H]\n");
    return 2;
  }
  std::string name = argv[1];
  uint32_t w = argc > 4 ? uint32_t(std::atoi(argv[3])) : 960,
           h = argc > 4 ? uint32_t(std::atoi(argv[4])) : 720;
  std::unique_ptr<demo::Scene> s;
  if (name == "cloth")
    s = demo::draped_cloth(96);
  else if (name == "cloth_arrows")
    s = demo::draped_cloth(48, true);
  else if (name == "arrows")
    s = demo::arrow_field();
  else if (name == "trajectories")
    s = demo::trajectories();
  else if (name == "particles")
    s = demo::particle_pile(20000, 0.02f);
  else if (name == "cloth_wire") {
    s = demo::draped_cloth(16);
    s->list.meshes[0].normals = {};
    s->list.meshes[0].scalars = {};
    s->list.meshes[0].wireframe = true;
    s->camera.orthographic = true;
  } else
    return 2;
  test::Harness harness({w, h}, false, 2048);
  Capture cap = harness.render(s->list, s->camera);
  stbi_write_png(argv[2], int(w), int(h), 4, cap.rgba.data(), int(w) * 4);
  harness.shutdown();
  std::printf("%s: %d validation errors\n", argv[2], harness.ctx.validation_errors());
  return harness.ctx.validation_errors() ? 1 : 0;
}
