// Fuzz target: the run server's decoders (app/serve/wire.h), the one place where bytes from
// the network are read: a run decodes viewers' requests, a viewer decodes a run's replies.
// Every input goes through both. The rules: no crash, no exception; what decodes encodes
// again to a message that decodes to the same request, and a decoded snapshot to the same
// snapshot (frames, contacts, gradient, worlds).
#include <cstdio>
#include <cstdlib>
#include <string>
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
    for (const auto* cs : {&s.contacts, &s.body_contacts}) {
      if (!cs->empty() && cs->size() != s.particle_q.size()) fail("contacts not one entry per frame");
      for (const auto& c : *cs)
        if (c.point.size() % 3 != 0 || c.normal.size() != c.point.size() || c.force.size() != c.point.size() ||
            c.count() > wire::k_max_frame_contacts)
          fail("uneven or too many contacts passed");
    }
    for (const auto& b : s.gradient_blocks)
      if (b.offset < 0 ||
          std::size_t(b.offset) + std::size_t(b.steps) * std::size_t(b.elements) * 3 > s.gradient.size() ||
          b.index.size() != std::size_t(b.elements))
        fail("a gradient block past its values passed");
    if (s.worlds.size() > std::size_t(wire::k_max_worlds)) fail("too many worlds passed");
    if (reply->has_snapshot) {
      const std::string again = wire::encode_snapshot(s.id, s);
      auto back = wire::decode_reply(R"({"type":"batch","next":0,"total":0,"records":[],"snapshot":)" + again + "}");
      if (!back || !back->has_snapshot) fail("an encoded snapshot does not decode");
      const auto& t = back->snapshot;
      auto same_contacts = [](const auto& a, const auto& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
          if (a[i].point != b[i].point || a[i].normal != b[i].normal || a[i].force != b[i].force) return false;
        return true;
      };
      bool same = t.id == s.id && t.iteration == s.iteration && t.parameters == s.parameters &&
                  t.particle_q == s.particle_q && t.joint_q == s.joint_q && same_contacts(t.contacts, s.contacts) &&
                  same_contacts(t.body_contacts, s.body_contacts) && t.step_grad_norms == s.step_grad_norms &&
                  t.gradient == s.gradient && t.gradient_blocks.size() == s.gradient_blocks.size() &&
                  t.worlds.size() == s.worlds.size();
      for (std::size_t i = 0; same && i < s.gradient_blocks.size(); ++i)
        same = t.gradient_blocks[i].kind == s.gradient_blocks[i].kind &&
               t.gradient_blocks[i].offset == s.gradient_blocks[i].offset &&
               t.gradient_blocks[i].index == s.gradient_blocks[i].index;
      for (std::size_t i = 0; same && i < s.worlds.size(); ++i)
        same = t.worlds[i].copy == s.worlds[i].copy && t.worlds[i].particle_q == s.worlds[i].particle_q &&
               t.worlds[i].joint_q == s.worlds[i].joint_q;
      if (!same) fail("a snapshot changed in a round trip");
    }
  }
  return 0;
}
