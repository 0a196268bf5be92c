#include "app/serve/address.h"

#include <cstdio>
#include <random>

namespace adj::app {

namespace {

Result<int> parse_port(const std::string& s) {
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos)
    return Status::error("port \"" + s + "\" is not a number from 0 to 65535");
  int p = std::stoi(s);
  if (p > 65535) return Status::error("port " + s + " is past 65535");
  return p;
}

}  // namespace

std::string ServeAddress::endpoint() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + host + "]" : host) + ":" + (port == 0 ? std::string("*") : std::to_string(port));
}

bool ServeAddress::local() const { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

Result<ServeAddress> parse_serve_address(const std::string& text) {
  std::string s = text;
  if (s.rfind("tcp://", 0) == 0) s = s.substr(6);
  ServeAddress a;
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) {
    auto p = parse_port(s);
    if (!p) return Status::error(p.status().message() + " (expected PORT or HOST:PORT)");
    a.port = *p;
    return a;
  }
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return Status::error("no host before the ':' (expected PORT or HOST:PORT)");
  if (host.find_first_of(" /\\[]") != std::string::npos) return Status::error("host \"" + host + "\" is not a host");
  auto p = parse_port(s.substr(colon + 1));
  if (!p) return p.status();
  a.host = host;
  a.port = *p;
  return a;
}

std::string random_token() {
  std::random_device rd;  // the system's random source (/dev/urandom)
  std::string t;
  for (int i = 0; i < 4; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", unsigned(rd()));
    t += buf;
  }
  return t;
}

}  // namespace adj::app
