// png_probe: pixel checks on the editor's screenshots.
//   png_probe differ A.png B.png X0 Y0 X1 Y1 MIN_FRACTION
//       at least MIN_FRACTION of the region's pixels differ by more than 24 (any channel)
//   png_probe same A.png B.png X0 Y0 X1 Y1
//       no pixel of the region differs by more than 5
//   png_probe close A.png B.png X0 Y0 X1 Y1 MAX_FRACTION
//       at most MAX_FRACTION of the region's pixels differ by more than 24 (edges that round
//       the other way: the same picture from two devices)
//   png_probe colour A.png X0 Y0 X1 Y1 R G B TOL MIN_FRACTION
//       at least MIN_FRACTION of the region's pixels are within TOL of (R, G, B)
//   png_probe no-colour A.png X0 Y0 X1 Y1 R G B TOL MAX_FRACTION
//       at most MAX_FRACTION of them are (a colour that must be absent; a missing or
//       unreadable image fails, as in every mode)
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Image {
  int w = 0, h = 0;
  unsigned char* px = nullptr;
  ~Image() { stbi_image_free(px); }
  bool load(const char* path) {
    int n = 0;
    px = stbi_load(path, &w, &h, &n, 4);
    if (!px) std::fprintf(stderr, "png_probe: %s: %s\n", path, stbi_failure_reason());
    return px != nullptr;
  }
  const unsigned char* at(int x, int y) const { return px + 4 * (size_t(y) * size_t(w) + size_t(x)); }
};

int channel_diff(const unsigned char* a, const unsigned char* b) {
  int d = 0;
  for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(int(a[c]) - int(b[c])));
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: see png_probe.cpp\n"), 2;
  std::string mode = argv[1];
  if (((mode == "differ" || mode == "close") && argc == 9) || (mode == "same" && argc == 8)) {
    Image a, b;
    if (!a.load(argv[2]) || !b.load(argv[3])) return 1;
    if (a.w != b.w || a.h != b.h) return std::fprintf(stderr, "png_probe: sizes differ\n"), 1;
    int x0 = std::atoi(argv[4]), y0 = std::atoi(argv[5]), x1 = std::min(std::atoi(argv[6]), a.w),
        y1 = std::min(std::atoi(argv[7]), a.h);
    long differ = 0, total = 0;
    int largest = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        int d = channel_diff(a.at(x, y), b.at(x, y));
        largest = std::max(largest, d);
        differ += d > 24;
        ++total;
      }
    double frac = total ? double(differ) / double(total) : 0.0;
    std::printf("png_probe: %ld of %ld pixels differ (%.4f), largest difference %d\n", differ, total, frac, largest);
    if (mode == "same") return largest <= 5 ? 0 : 1;
    if (mode == "close") return frac <= std::atof(argv[8]) ? 0 : 1;
    return frac >= std::atof(argv[8]) ? 0 : 1;
  }
  if ((mode == "colour" || mode == "no-colour") && argc == 12) {
    Image a;
    if (!a.load(argv[2])) return 1;
    int x0 = std::atoi(argv[3]), y0 = std::atoi(argv[4]), x1 = std::min(std::atoi(argv[5]), a.w),
        y1 = std::min(std::atoi(argv[6]), a.h);
    unsigned char want[3] = {(unsigned char)std::atoi(argv[7]), (unsigned char)std::atoi(argv[8]),
                             (unsigned char)std::atoi(argv[9])};
    int tol = std::atoi(argv[10]);
    long hit = 0, total = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        hit += channel_diff(a.at(x, y), want) <= tol;
        ++total;
      }
    double frac = total ? double(hit) / double(total) : 0.0;
    std::printf("png_probe: %ld of %ld pixels near (%d,%d,%d) (%.4f)\n", hit, total, want[0], want[1], want[2], frac);
    if (mode == "no-colour") return frac <= std::atof(argv[11]) ? 0 : 1;
    return frac >= std::atof(argv[11]) ? 0 : 1;
  }
  std::fprintf(stderr, "png_probe: bad arguments (see png_probe.cpp)\n");
  return 2;
}
