// The words of an editor script (script.h), line by line: what Script::load reads before any
// command runs. Apart from the editor so that it builds (and is fuzzed) without it.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace adj::editor {

struct ScriptLine {
  int number;  // 1-based line in the file
  std::vector<std::string> words;
};

// lines with at least one word: `#` starts a comment, ${NAME} expands the environment
// variable NAME (empty when unset), words split on whitespace
std::vector<ScriptLine> read_script_lines(std::istream& in);

}  // namespace adj::editor
