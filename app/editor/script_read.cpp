#include "app/editor/script_read.h"

#include <cstdlib>
#include <sstream>

namespace adj::editor {

namespace {

std::string expand_env(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
      size_t close = s.find('}', i);
      if (close != std::string::npos) {
        const char* v = std::getenv(s.substr(i + 2, close - i - 2).c_str());
        out += v ? v : "";
        i = close;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::vector<ScriptLine> read_script_lines(std::istream& in) {
  std::vector<ScriptLine> lines;
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(expand_env(text));
    ScriptLine line{number, {}};
    for (std::string w; words >> w;) line.words.push_back(w);
    if (!line.words.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace adj::editor
