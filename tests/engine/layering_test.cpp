// the house's layering, read from the sources: every `#include "engine/<dir>/..."` of a file
// under engine/<from>/ is an edge from -> dir of the folder graph, which must have no cycle
// (each folder builds on the ones below it), and no file under engine/ may include the
// renderer, the app, Vulkan, GLFW or Dear ImGui (the engine sees no graphics)
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// one include line: where it is and what it names
struct Include {
  std::string file;  // path relative to the repository root
  int line = 0;
  std::string target;  // the text between the quotes or angle brackets
};

std::vector<Include> engine_includes(const fs::path& root) {
  static const std::set<std::string> kSourceExt = {".h", ".hpp", ".cpp", ".cu", ".cuh", ".inc"};
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root / "engine"))
    if (e.is_regular_file() && kSourceExt.count(e.path().extension().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the report reads the same on every run
  std::vector<Include> out;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
      ++line;
      const auto hash = text.find_first_not_of(" \t");
      if (hash == std::string::npos || text.compare(hash, 1, "#") != 0) continue;
      const auto word = text.find_first_not_of(" \t", hash + 1);
      if (word == std::string::npos || text.compare(word, 7, "include") != 0) continue;
      const auto open = text.find_first_of("\"<", word + 7);
      if (open == std::string::npos) continue;
      const auto close = text.find(text[open] == '"' ? '"' : '>', open + 1);
      if (close == std::string::npos) continue;
      out.push_back({fs::relative(path, root).generic_string(), line, text.substr(open + 1, close - open - 1)});
    }
  }
  return out;
}

// the engine folder of "engine/<dir>/...", or "" for anything else
std::string engine_dir(const std::string& path) {
  if (path.rfind("engine/", 0) != 0) return "";
  const auto slash = path.find('/', 7);
  return slash == std::string::npos ? "" : path.substr(7, slash - 7);
}

bool reaches(const std::map<std::string, std::map<std::string, Include>>& graph, const std::string& from,
             const std::string& to) {
  std::set<std::string> seen;
  std::vector<std::string> stack = {from};
  while (!stack.empty()) {
    const std::string at = stack.back();
    stack.pop_back();
    if (at == to) return true;
    if (!seen.insert(at).second) continue;
    const auto it = graph.find(at);
    if (it == graph.end()) continue;
    for (const auto& [next, where] : it->second) stack.push_back(next);
  }
  return false;
}

}  // namespace

TEST_CASE("engine folders include each other without a cycle", "[layering]") {
  const fs::path root = ADJ_SOURCE_DIR;
  const auto includes = engine_includes(root);
  REQUIRE(includes.size() > 100);  // the walk found the engine's sources

  // folder graph: from -> to, with the first include line that makes each edge
  std::map<std::string, std::map<std::string, Include>> graph;
  for (const auto& inc : includes) {
    const std::string from = engine_dir(inc.file), to = engine_dir(inc.target);
    if (!to.empty() && to != from) graph[from].emplace(to, inc);
  }
  REQUIRE(graph.size() > 5);

  // an edge lies on a cycle when its head reaches its tail again
  std::string cycles;
  for (const auto& [from, edges] : graph)
    for (const auto& [to, where] : edges)
      if (reaches(graph, to, from))
        cycles += "  " + from + " -> " + to + " (" + where.file + ":" + std::to_string(where.line) + " includes \"" +
                  where.target + "\")\n";
  INFO(
      "engine folders on an include cycle (a lower folder includes a higher one; move the file or the type "
      "it needs to the folder where it belongs):\n"
      << cycles);
  CHECK(cycles.empty());
}

TEST_CASE("the engine includes no renderer, app, Vulkan, GLFW or ImGui header", "[layering]") {
  static const std::vector<std::string> kForbidden = {"render/", "app/",  "vulkan/", "vulkan.h",
                                                      "volk.h",  "GLFW/", "imgui",   "backends/imgui"};
  std::string found;
  for (const auto& inc : engine_includes(ADJ_SOURCE_DIR))
    for (const auto& bad : kForbidden)
      if (inc.target.rfind(bad, 0) == 0) {
        found += "  " + inc.file + ":" + std::to_string(inc.line) + " includes \"" + inc.target + "\"\n";
        break;
      }
  INFO("engine/ must not see graphics or the app (arrows run app -> render, app -> engine):\n" << found);
  CHECK(found.empty());
}
