// The run server's messages (`adjoint optimize --serve`, `adjoint watch`, the editor's
// File > Attach): one ZeroMQ frame each, a JSON object. Here only their encoding and the
// decoders of what arrives from the network; both sides treat every incoming frame as
// hostile: a frame that is not one of these messages is dropped and counted, never trusted.
//
// viewer -> run (at most k_max_request_bytes):
//   {"type":"poll", "token":T, "since":N, "snapshot":S}   records N.. and a newer snapshot than S
//   {"type":"control", "token":T, "command":"pause"|"resume"|"stop"|"checkpoint"}
// run -> viewer:
//   {"type":"batch", "next":N, "total":M, "paused":b, "records":[R...], "snapshot":P}
//   {"type":"control", "command":C, "accepted":b, "reason":"..."}
//   {"type":"refused", "reason":"..."}
// a record R: {"seq":i, "kind":"hello"|"iteration"|"end", ...}: seq counts from 0; the hello
// (seq 0) holds the scene path, the scene's JSON text, the method and its options; an
// iteration holds "iteration" and "loss" (the method's cost: loss, mean cost, policy cost;
// null when not finite)
// and what else the method measures; the end holds "status" and "iterations".
// a snapshot P: {"id":k, "iteration":i, "parameters":[...], "frames":[F...]}, F:
// {"particle_q":[x,y,z,...], "joint_q":[...]}: the states of one rollout, frame by frame.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace adj::app::wire {

inline constexpr std::size_t k_max_request_bytes = 64 * 1024;
inline constexpr int k_max_depth = 32;  // deeper nesting is refused before it is parsed

enum class Command { pause, resume, stop, checkpoint };
const char* to_string(Command c);

struct Request {
  enum class Kind { poll, control } kind = Kind::poll;
  std::string token;
  std::int64_t since = 0;      // poll: the first record wanted
  std::int64_t snapshot = -1;  // poll: the newest snapshot id the viewer has (-1: none)
  Command command = Command::pause;
};

// one rollout of a snapshot: per frame, positions of the particles (x, y, z flat) and the
// generalized positions of the joints
struct Rollout {
  std::int64_t id = -1;
  std::int64_t iteration = 0;
  std::vector<double> parameters;
  std::vector<std::vector<float>> particle_q, joint_q;  // (frames) x (3 particle_count | q_count)
};

struct Reply {
  enum class Kind { batch, control, refused } kind = Kind::batch;
  std::int64_t next = 0, total = 0;
  bool paused = false;
  std::vector<nlohmann::json> records;  // each checked: an object with an integer seq and a kind
  bool has_snapshot = false;
  Rollout snapshot;
  std::string command;  // control
  bool accepted = false;
  std::string reason;  // refused, or a control not accepted
};

// the decoders: an error names what is wrong (and never throws)
Result<Request> decode_request(std::string_view bytes);
Result<Reply> decode_reply(std::string_view bytes);

// the encoders
std::string encode_poll(const std::string& token, std::int64_t since, std::int64_t snapshot);
std::string encode_control(const std::string& token, Command c);
std::string encode_control_reply(Command c, bool accepted, const std::string& reason);
std::string encode_refused(const std::string& reason);
// records and the snapshot arrive already encoded (the server keeps them as text)
std::string encode_batch(std::int64_t next, std::int64_t total, bool paused, const std::vector<std::string>& records,
                         std::size_t first, std::size_t count, const std::string* snapshot);

}  // namespace adj::app::wire
