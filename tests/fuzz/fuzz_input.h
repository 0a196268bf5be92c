// What every fuzz target shares: the input as a file (the readers take paths, as the editor
// and the CLI call them), and the rule every reader's error must keep.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace adj::fuzz {

// a folder of this process's own under the temporary folder, made once; the readers resolve
// relative paths (includes, meshes, sidecars) against it, so a path the input names lands there
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("adjoint-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// the input written as scratch_dir()/name
inline std::string write_input(const uint8_t* data, size_t size, const std::string& name) {
  std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

// a reader's error names the file it read (the rule of engine/core/status.h); an error
// that does not is a finding, reported as a crash so that libFuzzer keeps the input
inline void require_names(const std::string& message, const std::string& file) {
  if (message.empty() || message.find(file) == std::string::npos) {
    std::fprintf(stderr, "fuzz: the error does not name '%s': \"%s\"\n", file.c_str(), message.c_str());
    std::abort();
  }
}

}  // namespace adj::fuzz
