// Addresses of the run server: `--serve [HOST:]PORT` (binds) and `adjoint watch ADDRESS`
// (connects), and the token a non-local bind needs.
#pragma once

#include <string>

#include "engine/core/status.h"

namespace adj::app {

struct ServeAddress {
  std::string host = "127.0.0.1";  // a name or an IPv4/IPv6 address; "*" or 0.0.0.0: every interface
  int port = 0;                    // 0: a free port
  // tcp://HOST:PORT as ZeroMQ writes it (IPv6 in brackets; port 0 as *)
  std::string endpoint() const;
  // the loopback interface only: no token needed
  bool local() const;
};

// PORT, HOST:PORT, [IPV6]:PORT or tcp://HOST:PORT; errors say what is wrong
Result<ServeAddress> parse_serve_address(const std::string& text);
// 32 hex digits from the system's random source
std::string random_token();

}  // namespace adj::app
