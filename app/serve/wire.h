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
// and what else the method measures (SHAC, AHAC: "train_return" once a training episode has
// ended); the end holds "status" and "iterations".
// a snapshot P: {"id":k, "iteration":i, "parameters":[...], "frames":[F...], "step_grad_norms":[...],
//   "gradient":{"values":[...], "blocks":[B...]}, "worlds":[{"copy":c, "frames":[F...]}...]}:
//   frames: the states of one rollout, frame by frame, F: {"particle_q":[x,y,z,...],
//   "joint_q":[...], "contacts":C, "body_contacts":C}, C: {"point":[x,y,z,...], "normal":[...],
//   "force":[...]} (the particles' contacts and the robots' bodies', at most k_max_frame_contacts
//   each); step_grad_norms: |dL/dx_t| over the horizon; gradient: dL/dtheta of the parameter
//   blocks that the editor draws as arrows (3 entries per element; a block with knots sends its
//   knots' gradient interpolated to every frame), B: {"kind":K, "offset":o,
//   "steps":s, "elements":e, "index":[particle...]} (values[o + (t e + j) 3 ..] is element j's at
//   step t); worlds: the rollouts of a policy method's first training copies (at most
//   k_max_worlds). Everything but id, iteration and frames may be absent.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace adj::app::wire {

inline constexpr std::size_t k_max_request_bytes = 64 * 1024;
inline constexpr int k_max_depth = 32;            // deeper nesting is refused before it is parsed
inline constexpr int k_max_frame_contacts = 256;  // per frame and kind: more are thinned before sending
inline constexpr int k_max_worlds = 16;           // training copies' rollouts in a snapshot (--serve-worlds)

enum class Command { pause, resume, stop, checkpoint };
const char* to_string(Command c);

struct Request {
  enum class Kind { poll, control } kind = Kind::poll;
  std::string token;
  std::int64_t since = 0;      // poll: the first record wanted
  std::int64_t snapshot = -1;  // poll: the newest snapshot id the viewer has (-1: none)
  Command command = Command::pause;
};

// the contacts of one frame, for drawing: x, y, z flat, (3 contact_count) each
struct FrameContacts {
  std::vector<float> point;   // on the surface [m]
  std::vector<float> normal;  // unit
  std::vector<float> force;   // [N]
  int count() const { return int(point.size() / 3); }
};

// a parameter block whose gradient the editor draws as arrows (engine/optim/parameters.h
// ParamBlock, width 3): kind is scene::to_string of initial_position, initial_velocity or
// control_force; index: the particle of each element
struct ArrowBlock {
  std::string kind;
  int offset = 0, steps = 1, elements = 0;
  std::vector<int> index;
};

// frames of one world: positions of the particles (x, y, z flat) and the generalized
// positions of the joints, per frame
struct WorldFrames {
  int copy = 0;                                         // the training copy (worlds of a snapshot)
  std::vector<std::vector<float>> particle_q, joint_q;  // (frames) x (3 particle_count | q_count)
};

// a snapshot: parameters and one rollout (frames, their contacts, the gradient), with the
// rollouts of a few training copies. The run's thread fills it (id -1: the server numbers it)
struct Rollout {
  std::int64_t id = -1;
  std::int64_t iteration = 0;
  std::vector<double> parameters;
  std::vector<std::vector<float>> particle_q, joint_q;  // (frames) x (3 particle_count | q_count)
  std::vector<FrameContacts> contacts, body_contacts;   // (frames) or empty: none sent
  std::vector<float> step_grad_norms;                   // |dL/dx_t|, t = 0..steps, or empty
  std::vector<float> gradient;                          // the arrow blocks' entries
  std::vector<ArrowBlock> gradient_blocks;
  std::vector<WorldFrames> worlds;
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
// a snapshot as its JSON text (P above); numbers as the shortest text that reads back to the same float
std::string encode_snapshot(std::int64_t id, const Rollout& r);
// records and the snapshot arrive already encoded (the server keeps them as text)
std::string encode_batch(std::int64_t next, std::int64_t total, bool paused, const std::vector<std::string>& records,
                         std::size_t first, std::size_t count, const std::string* snapshot);

}  // namespace adj::app::wire
