// png_check FILE W H: the PNG decodes, has the expected size and is not a single colour.
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n");
    return 2;
  }
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(argv[1], &w, &h, &n, 4);
  if (!px) {
    std::fprintf(stderr, "png_check: %s does not decode: %s\n", argv[1], stbi_failure_reason());
    return 1;
  }
  int want_w = std::atoi(argv[2]), want_h = std::atoi(argv[3]);
  int rc = 0;
  if (w != want_w || h != want_h) {
    std::fprintf(stderr, "png_check: %s is %dx%d, expected %dx%d\n", argv[1], w, h, want_w, want_h);
    rc = 1;
  }
  // distinct colours (capped): a blank or single-colour frame has one
  std::set<unsigned> colours;
  for (int i = 0; i < w * h && colours.size() < 64; ++i) {
    unsigned c;
    std::memcpy(&c, px + 4 * i, 4);
    colours.insert(c);
  }
  if (colours.size() < 16) {
    std::fprintf(stderr, "png_check: %s has only %zu colours: blank frame?\n", argv[1], colours.size());
    rc = 1;
  }
  stbi_image_free(px);
  if (rc == 0) std::printf("png_check: %s ok (%dx%d, >= %zu colours)\n", argv[1], w, h, colours.size());
  return rc;
}
