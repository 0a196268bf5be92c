#include "app/serve/wire.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace adj::app::wire {

namespace {

using nlohmann::json;

// the deepest nesting of arrays and objects in a JSON text (strings skipped); checked before
// parsing so that no input can drive the parser or a destructor deep
int nesting_depth(std::string_view s) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}')
      --depth;
  }
  return deepest;
}

Result<json> parse_object(std::string_view bytes) {
  if (nesting_depth(bytes) > k_max_depth) return Status::error("nested deeper than " + std::to_string(k_max_depth));
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::error("not JSON");
  if (!j.is_object()) return Status::error("not a JSON object");
  return j;
}

// j[key] as a string / integer / bool, or an error naming the key
Result<std::string> get_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return Status::error(std::string("\"") + key + "\" is not a string");
  return it->get<std::string>();
}

Result<std::int64_t> get_int(const json& j, const char* key, std::int64_t lo) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return Status::error(std::string("\"") + key + "\" is not an integer");
  std::int64_t v = it->is_number_unsigned()
                       ? std::int64_t(std::min<std::uint64_t>(it->get<std::uint64_t>(),
                                                              std::uint64_t(std::numeric_limits<std::int64_t>::max())))
                       : it->get<std::int64_t>();
  if (v < lo) return Status::error(std::string("\"") + key + "\" is below " + std::to_string(lo));
  return v;
}

Result<Command> parse_command(const std::string& s) {
  for (Command c : {Command::pause, Command::resume, Command::stop, Command::checkpoint})
    if (s == to_string(c)) return c;
  return Status::error("unknown command \"" + s.substr(0, 32) + "\"");
}

// a flat array of finite numbers
Status get_numbers(const json& j, const std::string& what, std::vector<float>* out_f, std::vector<double>* out_d) {
  if (!j.is_array()) return Status::error(what + " is not an array");
  for (const json& v : j) {
    if (!v.is_number()) return Status::error(what + " holds a value that is not a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) return Status::error(what + " holds a value that is not finite");
    // (a float past its range would encode as inf, which is not JSON)
    if (out_f && !std::isfinite(float(d))) return Status::error(what + " holds a value too large for a float");
    if (out_f) out_f->push_back(float(d));
    if (out_d) out_d->push_back(d);
  }
  return {};
}

// a frame's contacts C: three flat arrays of x, y, z triples, as many of each
Status decode_contacts(const json& j, const std::string& at, FrameContacts* c) {
  if (!j.is_object()) return Status::error(at + " is not an object");
  for (auto [key, out] : {std::pair{"point", &c->point}, {"normal", &c->normal}, {"force", &c->force}}) {
    auto it = j.find(key);
    if (it == j.end()) return Status::error(at + "." + key + " is missing");
    if (it->is_array() && it->size() > std::size_t(3 * k_max_frame_contacts))
      return Status::error(at + "." + key + ": more than " + std::to_string(k_max_frame_contacts) + " contacts");
    if (Status st = get_numbers(*it, at + "." + key, out, nullptr); !st) return st;
  }
  if (c->point.size() % 3 != 0 || c->normal.size() != c->point.size() || c->force.size() != c->point.size())
    return Status::error(at + ": point, normal and force are not as many x, y, z triples");
  return {};
}

// frames F of one world; contacts (null: not read) get one entry per frame, or none when no
// frame has them
Status decode_frames(const json& frames, const std::string& at, WorldFrames* w, std::vector<FrameContacts>* contacts,
                     std::vector<FrameContacts>* body_contacts) {
  if (!frames.is_array()) return Status::error(at + " is not an array");
  bool any_contacts = false, any_body_contacts = false;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const json& fr = frames[f];
    const std::string here = at + "[" + std::to_string(f) + "]";
    if (!fr.is_object()) return Status::error(here + " is not an object");
    std::vector<float> pq, jq;
    if (auto p = fr.find("particle_q"); p != fr.end())
      if (Status st = get_numbers(*p, here + ".particle_q", &pq, nullptr); !st) return st;
    if (auto q = fr.find("joint_q"); q != fr.end())
      if (Status st = get_numbers(*q, here + ".joint_q", &jq, nullptr); !st) return st;
    if (pq.size() % 3 != 0) return Status::error(here + ".particle_q: not x, y, z triples");
    // every frame of one rollout holds the same world
    if (f > 0 && (pq.size() != w->particle_q[0].size() || jq.size() != w->joint_q[0].size()))
      return Status::error(here + ": a different count of particles or joint coordinates than frame 0");
    w->particle_q.push_back(std::move(pq));
    w->joint_q.push_back(std::move(jq));
    for (auto [key, out] : {std::pair{"contacts", contacts}, {"body_contacts", body_contacts}}) {
      if (!out) continue;
      FrameContacts& c = out->emplace_back();
      if (auto it = fr.find(key); it != fr.end()) {
        if (Status st = decode_contacts(*it, here + "." + key, &c); !st) return st;
        (out == contacts ? any_contacts : any_body_contacts) = true;
      }
    }
  }
  if (contacts && !any_contacts) contacts->clear();
  if (body_contacts && !any_body_contacts) body_contacts->clear();
  return {};
}

// gradient: {"values":[...], "blocks":[B...]}; each block's entries lie within values
Status decode_gradient(const json& j, Rollout* r) {
  if (!j.is_object()) return Status::error("snapshot.gradient is not an object");
  auto values = j.find("values");
  auto blocks = j.find("blocks");
  if (values == j.end() || blocks == j.end() || !blocks->is_array())
    return Status::error("snapshot.gradient: values and blocks are not there");
  if (Status st = get_numbers(*values, "snapshot.gradient.values", &r->gradient, nullptr); !st) return st;
  for (std::size_t b = 0; b < blocks->size(); ++b) {
    const json& bj = (*blocks)[b];
    const std::string at = "snapshot.gradient.blocks[" + std::to_string(b) + "]";
    if (!bj.is_object()) return Status::error(at + " is not an object");
    auto kind = get_string(bj, "kind");
    auto offset = get_int(bj, "offset", 0);
    auto steps = get_int(bj, "steps", 1);
    auto elements = get_int(bj, "elements", 0);
    if (!kind) return Status::error(at + ": " + kind.status().message());
    for (auto* v : {&offset, &steps, &elements})
      if (!*v) return Status::error(at + ": " + v->status().message());
    // entries offset .. offset + steps * elements * 3, in int64 (no product can wrap)
    const std::int64_t n = std::int64_t(r->gradient.size());
    if (*offset > n || *steps > n || *elements > n || *offset + *steps * *elements * 3 > n)
      return Status::error(at + ": its entries run past the values");
    ArrowBlock a{kind->substr(0, 64), int(*offset), int(*steps), int(*elements), {}};
    auto index = bj.find("index");
    if (index == bj.end() || !index->is_array() || index->size() != std::size_t(a.elements))
      return Status::error(at + ".index: not one particle per element");
    for (const json& i : *index) {
      if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() > (1 << 30))
        return Status::error(at + ".index holds a value that is not a particle index");
      a.index.push_back(i.get<int>());
    }
    r->gradient_blocks.push_back(std::move(a));
  }
  return {};
}

Status decode_snapshot(const json& j, Rollout* r) {
  if (!j.is_object()) return Status::error("\"snapshot\" is not an object");
  auto id = get_int(j, "id", 0);
  auto it = get_int(j, "iteration", 0);
  if (!id) return Status::error("snapshot: " + id.status().message());
  if (!it) return Status::error("snapshot: " + it.status().message());
  r->id = *id;
  r->iteration = *it;
  if (auto p = j.find("parameters"); p != j.end())
    if (Status st = get_numbers(*p, "snapshot.parameters", nullptr, &r->parameters); !st) return st;
  auto frames = j.find("frames");
  if (frames == j.end()) return Status::error("snapshot.frames is not an array");
  WorldFrames w0;
  if (Status st = decode_frames(*frames, "snapshot.frames", &w0, &r->contacts, &r->body_contacts); !st) return st;
  r->particle_q = std::move(w0.particle_q);
  r->joint_q = std::move(w0.joint_q);
  if (auto g = j.find("step_grad_norms"); g != j.end())
    if (Status st = get_numbers(*g, "snapshot.step_grad_norms", &r->step_grad_norms, nullptr); !st) return st;
  if (auto g = j.find("gradient"); g != j.end())
    if (Status st = decode_gradient(*g, r); !st) return st;
  if (auto worlds = j.find("worlds"); worlds != j.end()) {
    if (!worlds->is_array() || worlds->size() > std::size_t(k_max_worlds))
      return Status::error("snapshot.worlds is not an array of at most " + std::to_string(k_max_worlds) + " worlds");
    for (std::size_t k = 0; k < worlds->size(); ++k) {
      const json& wj = (*worlds)[k];
      const std::string at = "snapshot.worlds[" + std::to_string(k) + "]";
      if (!wj.is_object()) return Status::error(at + " is not an object");
      auto copy = get_int(wj, "copy", 0);
      if (!copy || *copy > (1 << 30)) return Status::error(at + ": \"copy\" is not a copy's number");
      WorldFrames& w = r->worlds.emplace_back();
      w.copy = int(*copy);
      auto wf = wj.find("frames");
      if (wf == wj.end()) return Status::error(at + ".frames is not an array");
      if (Status st = decode_frames(*wf, at + ".frames", &w, nullptr, nullptr); !st) return st;
    }
  }
  return {};
}

Status check_record(const json& r, std::size_t i) {
  const std::string at = "records[" + std::to_string(i) + "]";
  if (!r.is_object()) return Status::error(at + " is not an object");
  if (auto s = get_int(r, "seq", 0); !s) return Status::error(at + ": " + s.status().message());
  auto kind = get_string(r, "kind");
  if (!kind) return Status::error(at + ": " + kind.status().message());
  if (*kind == "iteration") {
    if (auto it = get_int(r, "iteration", 0); !it) return Status::error(at + ": " + it.status().message());
    // a non-finite loss is written as null (JSON has no NaN)
    auto loss = r.find("loss");
    if (loss != r.end() && !loss->is_number() && !loss->is_null())
      return Status::error(at + ": \"loss\" is not a number");
  } else if (*kind != "hello" && *kind != "end") {
    return Status::error(at + ": unknown kind \"" + kind->substr(0, 32) + "\"");
  }
  return {};
}

}  // namespace

const char* to_string(Command c) {
  switch (c) {
    case Command::pause:
      return "pause";
    case Command::resume:
      return "resume";
    case Command::stop:
      return "stop";
    case Command::checkpoint:
      return "checkpoint";
  }
  return "?";
}

Result<Request> decode_request(std::string_view bytes) {
  if (bytes.size() > k_max_request_bytes) return Status::error("request of " + std::to_string(bytes.size()) + " bytes");
  auto j = parse_object(bytes);
  if (!j) return j.status();
  auto type = get_string(*j, "type");
  if (!type) return type.status();
  Request r;
  if (auto t = j->find("token"); t != j->end()) {
    if (!t->is_string()) return Status::error("\"token\" is not a string");
    r.token = t->get<std::string>();
  }
  if (*type == "poll") {
    r.kind = Request::Kind::poll;
    auto since = get_int(*j, "since", 0);
    if (!since) return since.status();
    r.since = *since;
    if (j->contains("snapshot")) {
      auto snap = get_int(*j, "snapshot", -1);
      if (!snap) return snap.status();
      r.snapshot = *snap;
    }
    return r;
  }
  if (*type == "control") {
    r.kind = Request::Kind::control;
    auto cmd = get_string(*j, "command");
    if (!cmd) return cmd.status();
    auto c = parse_command(*cmd);
    if (!c) return c.status();
    r.command = *c;
    return r;
  }
  return Status::error("unknown type \"" + type->substr(0, 32) + "\"");
}

Result<Reply> decode_reply(std::string_view bytes) {
  auto j = parse_object(bytes);
  if (!j) return j.status();
  auto type = get_string(*j, "type");
  if (!type) return type.status();
  Reply r;
  if (*type == "refused") {
    r.kind = Reply::Kind::refused;
    auto reason = get_string(*j, "reason");
    if (!reason) return reason.status();
    r.reason = *reason;
    return r;
  }
  if (*type == "control") {
    r.kind = Reply::Kind::control;
    auto cmd = get_string(*j, "command");
    if (!cmd) return cmd.status();
    r.command = *cmd;
    auto acc = j->find("accepted");
    if (acc == j->end() || !acc->is_boolean()) return Status::error("\"accepted\" is not true or false");
    r.accepted = acc->get<bool>();
    if (auto reason = j->find("reason"); reason != j->end() && reason->is_string()) r.reason = *reason;
    return r;
  }
  if (*type != "batch") return Status::error("unknown type \"" + type->substr(0, 32) + "\"");
  auto next = get_int(*j, "next", 0);
  auto total = get_int(*j, "total", 0);
  if (!next) return next.status();
  if (!total) return total.status();
  r.next = *next;
  r.total = *total;
  if (r.next > r.total) return Status::error("\"next\" is past \"total\"");
  if (auto p = j->find("paused"); p != j->end() && p->is_boolean()) r.paused = p->get<bool>();
  auto records = j->find("records");
  if (records == j->end() || !records->is_array()) return Status::error("\"records\" is not an array");
  for (std::size_t i = 0; i < records->size(); ++i) {
    if (Status st = check_record((*records)[i], i); !st) return st;
    r.records.push_back(std::move((*records)[i]));
  }
  if (auto s = j->find("snapshot"); s != j->end()) {
    if (Status st = decode_snapshot(*s, &r.snapshot); !st) return st;
    r.has_snapshot = true;
  }
  return r;
}

std::string encode_poll(const std::string& token, std::int64_t since, std::int64_t snapshot) {
  return json{{"type", "poll"}, {"token", token}, {"since", since}, {"snapshot", snapshot}}.dump();
}

std::string encode_control(const std::string& token, Command c) {
  return json{{"type", "control"}, {"token", token}, {"command", to_string(c)}}.dump();
}

std::string encode_control_reply(Command c, bool accepted, const std::string& reason) {
  json j{{"type", "control"}, {"command", to_string(c)}, {"accepted", accepted}};
  if (!reason.empty()) j["reason"] = reason;
  return j.dump();
}

std::string encode_refused(const std::string& reason) { return json{{"type", "refused"}, {"reason", reason}}.dump(); }

namespace {

// numbers as the shortest text that reads back to the same value (a float as a float: about
// half the characters of the double it widens to)
template <class T>
void put_number(std::string& s, T v) {
  char buf[40];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, ec == std::errc() ? end : buf);
}

template <class T>
void put_array(std::string& s, const std::vector<T>& v) {
  s += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    put_number(s, v[i]);
  }
  s += ']';
}

void put_contacts(std::string& s, const char* key, const FrameContacts& c) {
  s += std::string(",\"") + key + "\":{\"point\":";
  put_array(s, c.point);
  s += ",\"normal\":";
  put_array(s, c.normal);
  s += ",\"force\":";
  put_array(s, c.force);
  s += '}';
}

void put_frames(std::string& s, const std::vector<std::vector<float>>& pq, const std::vector<std::vector<float>>& jq,
                const std::vector<FrameContacts>* contacts, const std::vector<FrameContacts>* body_contacts) {
  static const std::vector<float> none;
  s += '[';
  for (std::size_t f = 0; f < pq.size(); ++f) {
    if (f) s += ',';
    s += "{\"particle_q\":";
    put_array(s, pq[f]);
    s += ",\"joint_q\":";
    put_array(s, f < jq.size() ? jq[f] : none);
    if (contacts && f < contacts->size()) put_contacts(s, "contacts", (*contacts)[f]);
    if (body_contacts && f < body_contacts->size()) put_contacts(s, "body_contacts", (*body_contacts)[f]);
    s += '}';
  }
  s += ']';
}

}  // namespace

std::string encode_snapshot(std::int64_t id, const Rollout& r) {
  std::string s =
      "{\"id\":" + std::to_string(id) + ",\"iteration\":" + std::to_string(r.iteration) + ",\"parameters\":";
  put_array(s, r.parameters);
  s += ",\"frames\":";
  put_frames(s, r.particle_q, r.joint_q, &r.contacts, &r.body_contacts);
  if (!r.step_grad_norms.empty()) {
    s += ",\"step_grad_norms\":";
    put_array(s, r.step_grad_norms);
  }
  if (!r.gradient_blocks.empty()) {
    s += ",\"gradient\":{\"values\":";
    put_array(s, r.gradient);
    s += ",\"blocks\":[";
    for (std::size_t b = 0; b < r.gradient_blocks.size(); ++b) {
      const ArrowBlock& a = r.gradient_blocks[b];
      if (b) s += ',';
      s += json{{"kind", a.kind}, {"offset", a.offset}, {"steps", a.steps}, {"elements", a.elements}}.dump();
      s.pop_back();  // the object goes on with the index
      s += ",\"index\":";
      put_array(s, a.index);
      s += '}';
    }
    s += "]}";
  }
  if (!r.worlds.empty()) {
    s += ",\"worlds\":[";
    for (std::size_t k = 0; k < r.worlds.size(); ++k) {
      if (k) s += ',';
      s += "{\"copy\":" + std::to_string(r.worlds[k].copy) + ",\"frames\":";
      put_frames(s, r.worlds[k].particle_q, r.worlds[k].joint_q, nullptr, nullptr);
      s += '}';
    }
    s += ']';
  }
  s += '}';
  return s;
}

std::string encode_batch(std::int64_t next, std::int64_t total, bool paused, const std::vector<std::string>& records,
                         std::size_t first, std::size_t count, const std::string* snapshot) {
  std::string s = R"({"type":"batch","next":)" + std::to_string(next) + R"(,"total":)" + std::to_string(total) +
                  R"(,"paused":)" + (paused ? "true" : "false") + R"(,"records":[)";
  for (std::size_t i = first; i < first + count && i < records.size(); ++i) {
    if (i > first) s += ',';
    s += records[i];
  }
  s += ']';
  if (snapshot) s += R"(,"snapshot":)" + *snapshot;
  s += '}';
  return s;
}

}  // namespace adj::app::wire
