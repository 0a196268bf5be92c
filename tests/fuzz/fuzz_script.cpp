// Fuzz target: the editor script reader (app/editor/script_read.h), which splits a script
// into numbered lines of words before the editor runs any command. The words it returns are
// never empty and hold no whitespace; line numbers rise.
#include <cctype>
#include <sstream>

#include "app/editor/script_read.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  int last = 0;
  for (const adj::editor::ScriptLine& line : adj::editor::read_script_lines(in)) {
    if (line.number <= last || line.words.empty()) std::abort();
    last = line.number;
    for (const std::string& w : line.words) {
      if (w.empty()) std::abort();
      for (char c : w)
        if (std::isspace(static_cast<unsigned char>(c))) std::abort();
    }
  }
  return 0;
}
