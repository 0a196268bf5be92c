#include "engine/cuda/cuda.h"

#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;

TEST_CASE("cuda_available gives a reason, without a device the solver reports an error", "[cuda]") {
  std::string reason;
  bool ok = cuda_available(&reason);
  CHECK_FALSE(reason.empty());
  if (ok) return;  // the parity test covers a present device
  ModelT<double> m = test::spring_cage_scene();
  CudaSolverT<double> solver;
  Status st = solver.upload(m);
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("CUDA"));
  StateT<double> out;
  CHECK_FALSE(solver.step(m.make_state(), out, m.make_control(), 0.01).is_ok());
}
