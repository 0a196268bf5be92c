// the README example: build a scene in code, roll it out, get gradients
#include <cstdio>

#include "engine/grad/rollout.h"
#include "engine/model/builder.h"

int main() {
  using namespace adj;
  ModelBuilder b;  // float; ModelBuilderT<double> for double precision
  mat33<float> horizontal = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});  // local y -> world z
  b.add_cloth_grid({-0.5f, 1.0f, -0.5f}, horizontal, 8, 8, 0.125f, 0.1f, {}, ClothMaterial<float>{}, /*pin_left=*/true);
  b.add_sphere({0.2f, 0.5f, 0.0f}, 0.3f);
  b.add_ground();
  Result<Model> model = b.finalize();
  if (!model) return std::printf("%s\n", model.status().message().c_str()), 1;

  Rollout rollout(*model, {.steps = 120, .dt = 1.0f / 60.0f, .substeps = 16});
  if (Status st = rollout.forward(model->make_state()); !st) return std::printf("%s\n", st.message().c_str()), 1;
  // loss = height of the free corner at the end: seed dLoss/dState at the last step
  int corner = model->particle_count() - 1;
  Status st = rollout.backward([&](int t, const State&, State& adj) {
    if (t == rollout.options().steps) adj.particle_q[corner].y += 1.0f;
  });
  if (!st) return std::printf("%s\n", st.message().c_str()), 1;
  vec3<float> g = rollout.grad_initial().particle_qd[corner];
  std::printf("final height %.4f  dL/dv0 = (%.4f %.4f %.4f)  dL/dmass = %.4g  dL/dcontact_mu = %.4g\n",
              rollout.final_state().particle_q[corner].y, g.x, g.y, g.z, rollout.grad_model().particle_mass[corner],
              rollout.grad_model().contact_mu);
  return 0;
}
