#include "app/serve/wire.h"

#include <cmath>
#include <limits>

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
    if (out_f) out_f->push_back(float(d));
    if (out_d) out_d->push_back(d);
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
  if (frames == j.end() || !frames->is_array()) return Status::error("snapshot.frames is not an array");
  for (std::size_t f = 0; f < frames->size(); ++f) {
    const json& fr = (*frames)[f];
    const std::string at = "snapshot.frames[" + std::to_string(f) + "]";
    if (!fr.is_object()) return Status::error(at + " is not an object");
    std::vector<float> pq, jq;
    if (auto p = fr.find("particle_q"); p != fr.end())
      if (Status st = get_numbers(*p, at + ".particle_q", &pq, nullptr); !st) return st;
    if (auto q = fr.find("joint_q"); q != fr.end())
      if (Status st = get_numbers(*q, at + ".joint_q", &jq, nullptr); !st) return st;
    if (pq.size() % 3 != 0) return Status::error(at + ".particle_q: not x, y, z triples");
    // every frame of one rollout holds the same world
    if (f > 0 && (pq.size() != r->particle_q[0].size() || jq.size() != r->joint_q[0].size()))
      return Status::error(at + ": a different count of particles or joint coordinates than frame 0");
    r->particle_q.push_back(std::move(pq));
    r->joint_q.push_back(std::move(jq));
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
