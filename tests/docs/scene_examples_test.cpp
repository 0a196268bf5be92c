// Every ```json example in docs/scene-format.md loads through the real loader: it parses
// (engine/scene/scene_json.h), compiles to a Model (engine/scene/compile.h) and each of its
// tasks becomes a Task (engine/optim/task.h). An example is a whole scene file when it has
// "format"; otherwise it is completed: members without braces become an object, an object
// with "type" goes into "objects", and any other block gets the file's "format" and "version".
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace {

struct Example {
  int line = 0;  // the line of the opening fence
  std::string text;
};

std::vector<Example> json_examples(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Example> out;
  std::string line;
  int n = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    if (!inside && line.rfind("```json", 0) == 0) {
      inside = true;
      out.push_back({n, ""});
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
    } else if (inside) {
      out.back().text += line + "\n";
    }
  }
  REQUIRE_FALSE(inside);  // a fence left open
  return out;
}

// the example as a whole scene document
std::string completed(const std::string& text) {
  // members without their braces ("settings": {...}) are read as an object
  const size_t first = text.find_first_not_of(" \t\n");
  const bool members = first != std::string::npos && text[first] == '"';
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(members ? "{" + text + "}" : text);
  if (j.contains("format")) return text;
  if (j.contains("type")) j = nlohmann::ordered_json{{"objects", nlohmann::ordered_json::array({j})}};
  nlohmann::ordered_json doc{{"format", "adjoint-scene"}, {"version", 1}};
  doc.update(j);
  return doc.dump(2);
}

// "" when the example loads, else what failed
std::string load(const std::string& doc_path, const std::string& docs_dir, const Example& e) {
  std::string text;
  try {
    text = completed(e.text);
  } catch (const nlohmann::json::exception& ex) {
    return std::string("not valid JSON: ") + ex.what();
  }
  auto scene = adj::scene::parse_scene(text, doc_path);
  if (!scene) return scene.status().message();
  auto compiled = adj::scene::compile<double>(*scene, docs_dir);
  if (!compiled) return "compile: " + compiled.status().message();
  for (const adj::scene::Task& t : scene->tasks) {
    auto task = adj::optim::make_task(*compiled, t);
    if (!task) return "task \"" + t.name + "\": " + task.status().message();
  }
  return "";
}

}  // namespace

TEST_CASE("docs: every JSON example in scene-format.md loads") {
  const std::string docs_dir = ADJ_DOCS;
  const std::string doc_path = docs_dir + "/scene-format.md";
  std::vector<Example> examples = json_examples(doc_path);
  CHECK(examples.size() >= 20);
  for (const Example& e : examples) {
    INFO(doc_path << ":" << e.line << ": the example starting here");
    CHECK(load(doc_path, docs_dir, e) == "");
  }
}
