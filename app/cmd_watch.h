#pragma once
// `adjoint watch ADDRESS`: a served run (`adjoint optimize --serve`) in the terminal
#include <string>

namespace adj::app {

struct WatchOptions {
  std::string address;  // [HOST:]PORT or tcp://HOST:PORT
  std::string token;    // the run's token (default: ADJ_TOKEN)
  double timeout = 30;  // seconds without an answer before giving up
  std::string send;     // "pause", "resume" or "stop": send it, print the answer, exit
};

// exit codes: 0 the run ended (or the command was accepted), 1 refused, no answer or an
// error, 3 a command not accepted
int run_watch(const WatchOptions& options);

}  // namespace adj::app
