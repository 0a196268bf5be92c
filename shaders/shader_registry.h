#pragma once
// SPIR-V of the shaders in shaders/, compiled by glslc at build time and linked in.
#include <cstdint>
#include <span>
#include <string_view>

namespace adj::shaders {

// the SPIR-V words of a shader by its file name ("sky.frag"); empty if unknown
std::span<const uint32_t> spirv(std::string_view name);

}  // namespace adj::shaders
