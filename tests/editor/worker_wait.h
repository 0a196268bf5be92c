// shared by the editor's unit tests: wait for the worker to finish what was posted
#pragma once

#include <chrono>
#include <thread>

#include "app/editor/worker.h"

namespace adj::editor::test {

// false when the worker is still busy after `seconds` (the test then fails, not hangs)
inline bool wait_idle(const Worker& w, double seconds = 300) {
  auto t0 = std::chrono::steady_clock::now();
  while (!w.idle()) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace adj::editor::test
