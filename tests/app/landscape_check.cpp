// landscape_check JSON PNG CURVES GRID: `adjoint landscape`'s files: the JSON holds every
// evaluated point (each curve's loss at every offset, the grid x grid 2D slice) and the PNG
// decodes and shows them: each curve's colour inside the plot's frame, the heat map's
// colours in the right-hand panel.
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "landscape_check: %s\n", what);
  return 1;
}

// pixels of colour c (0xRRGGBB) inside [x0, x1) x [y0, y1)
int count(const unsigned char* px, int w, int x0, int y0, int x1, int y1, unsigned c) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const unsigned char* p = px + 4 * (y * w + x);
      n += p[0] == ((c >> 16) & 255) && p[1] == ((c >> 8) & 255) && p[2] == (c & 255);
    }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return std::fprintf(stderr, "usage: landscape_check JSON PNG CURVES GRID\n"), 2;
  const size_t curves = size_t(std::atoi(argv[3])), grid = size_t(std::atoi(argv[4]));
  nlohmann::json j;
  try {
    std::ifstream(argv[1]) >> j;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  const size_t points = j["s"].size();
  if (points < 3) return fail("fewer than 3 offsets");
  if (j["curves"].size() != curves) return fail("wrong number of curves");
  for (const auto& c : j["curves"]) {
    if (c["loss"].size() != points) return fail("a curve misses points");
    for (const auto& v : c["loss"])
      if (!v.is_number()) return fail("a point's loss is not a number");
  }
  if (grid > 0 && j["slice2d"]["loss"].size() != grid * grid) return fail("the 2D slice misses points");
  if (j["d"].size() != j["theta"].size()) return fail("direction and parameters differ in size");

  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(argv[2], &w, &h, &n, 4);
  if (!px) return fail("the PNG does not decode");
  // the plot frame is at x 120..980, y 80..520 (app/landscape_plot.cpp); the palette's first colours
  const unsigned palette[] = {0x1f5fbf, 0xd9541e, 0x2a9d3f, 0x8e44ad};
  int rc = 0;
  for (size_t c = 0; c < curves && c < 4; ++c) {
    const int k = count(px, w, 120, 80, 980, 520, palette[c]);
    std::printf("curve %zu: %d pixels\n", c, k);
    if (k < 200) rc = fail("a curve is not drawn");
  }
  if (grid > 0) {  // the heat map right of the plot: many distinct colours
    int coloured = 0;
    for (int y = 100; y < 500; y += 7)
      for (int x = 1080; x < 1500 && x < w; x += 7) {
        const unsigned char* p = px + 4 * (y * w + x);
        coloured += !(p[0] == 255 && p[1] == 255 && p[2] == 255);
      }
    std::printf("heat map: %d of the probed pixels coloured\n", coloured);
    if (coloured < 2000) rc = fail("no heat map");
  }
  stbi_image_free(px);
  if (rc == 0)
    std::printf("landscape_check: %s and %s ok (%zu curves x %zu points)\n", argv[1], argv[2], curves, points);
  return rc;
}
