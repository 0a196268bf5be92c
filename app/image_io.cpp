#include "app/image_io.h"

#include <stb_image_write.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace adj::app {

bool write_png(const std::string& path, uint32_t width, uint32_t height,
               const std::vector<uint8_t>& rgba, std::string* error) {
  if (rgba.size() != size_t(width) * height * 4) {
    if (error) *error = "image data does not match its size";
    return false;
  }
  // force opaque alpha: the target's alpha is not meaningful for a screenshot
  std::vector<uint8_t> px = rgba;
  for (size_t i = 3; i < px.size(); i += 4) px[i] = 255;

  std::string tmp = path + ".tmp";
  if (!stbi_write_png(tmp.c_str(), int(width), int(height), 4, px.data(), int(width * 4))) {
    if (error) *error = "cannot write " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    if (error) *error = "cannot write " + path + ": " + ec.message();
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace adj::app
