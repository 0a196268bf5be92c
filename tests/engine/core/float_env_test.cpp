#include "engine/core/float_env.h"

#include <cmath>

#include "tests/engine/test_util.h"

using namespace adj;

#if defined(__SSE2__)
namespace {
// a product whose exact result is subnormal, and a subnormal operand, through volatile so the
// compiler cannot fold them
float tiny_product() {
  volatile float a = 1e-37f, b = 0.01f;
  return a * b;
}
float subnormal_times_one() {
  volatile float d = 1e-39f, one = 1.0f;
  return d * one;
}
}  // namespace

TEST_CASE("FlushSubnormals flushes results and operands, then restores the caller's mode", "[core][float_env]") {
  REQUIRE(std::fpclassify(tiny_product()) == FP_SUBNORMAL);
  {
    const FlushSubnormals outer;
    CHECK(tiny_product() == 0.0f);
    CHECK(subnormal_times_one() == 0.0f);
    {
      const FlushSubnormals inner;  // nested: leaves the mode on when it ends
      CHECK(tiny_product() == 0.0f);
    }
    CHECK(tiny_product() == 0.0f);
  }
  CHECK(std::fpclassify(tiny_product()) == FP_SUBNORMAL);
  CHECK(std::fpclassify(subnormal_times_one()) == FP_SUBNORMAL);
}
#endif
