#pragma once
// `adjoint bench render`: offscreen frames of the demo scenes at a fixed size, timed.
// Each case renders warm-up frames, then `frames` frames one at a time (each waited for),
// and reports the median and the fastest wall time of a frame: upload of the host arrays,
// shadow map, main pass with 4x MSAA. On a shared machine the fastest is the steadiest.
#include <cstdint>
#include <string>
#include <vector>

namespace adj::render {

class Context;

struct RenderBenchOptions {
  uint32_t width = 1280;
  uint32_t height = 720;
  uint32_t frames = 5;
  uint32_t warmup = 1;
  std::vector<uint32_t> particle_counts{10000, 100000, 1000000};
  uint32_t cloth_n = 256;  // cloth of cloth_n^2 vertices, an arrow on each
};

struct RenderBenchResult {
  std::string name;         // "particles 100000", "cloth 256x256 + 65536 arrows"
  uint64_t primitives = 0;  // instances or triangles drawn
  double ms_per_frame = 0.0;  // median
  double ms_fastest = 0.0;
};

// needs a Context with a device (create_device called)
std::vector<RenderBenchResult> bench_render(Context& ctx, const RenderBenchOptions& options = {});

}  // namespace adj::render
