#pragma once
// PNG files of captured frames (stb_image_write).
#include <cstdint>
#include <string>
#include <vector>

namespace adj::app {

// writes RGBA8 pixels to a PNG through a temporary file and a rename; false with a message
bool write_png(const std::string& path, uint32_t width, uint32_t height,
               const std::vector<uint8_t>& rgba, std::string* error);

}  // namespace adj::app
