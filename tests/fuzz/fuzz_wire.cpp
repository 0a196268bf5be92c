// Fuzz target: the run server's decoders (app/serve/wire.h), the one place where bytes from
// the network are read: a run decodes viewers' requests, a viewer decodes a run's replies.
// Every input goes through both. The rules: no crash, no exception; what decodes encodes
// again to a message that decodes to the same request.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "app/serve/wire.h"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "fuzz_wire: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adj::app;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto req = wire::decode_request(bytes)) {
    const std::string again = req->kind == wire::Request::Kind::poll
                                  ? wire::encode_poll(req->token, req->since, req->snapshot)
                                  : wire::encode_control(req->token, req->command);
    auto back = wire::decode_request(again);
    if (!back) fail("an encoded request does not decode");
    if (back->kind != req->kind || back->token != req->token || back->since != req->since ||
        back->snapshot != req->snapshot || back->command != req->command)
      fail("a request changed in a round trip");
  }
  if (auto reply = wire::decode_reply(bytes)) {
    for (const auto& r : reply->records)
      if (!r.is_object() || !r.contains("seq") || !r.contains("kind")) fail("a record without seq or kind passed");
    const auto& s = reply->snapshot;
    for (std::size_t f = 0; f < s.particle_q.size(); ++f)
      if (s.particle_q[f].size() % 3 != 0 || s.particle_q[f].size() != s.particle_q[0].size())
        fail("a snapshot with uneven frames passed");
  }
  return 0;
}
