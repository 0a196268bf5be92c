// The script's commands of File > Attach to run... (script.h lists them; app/editor/attach.h)
#include <cstdlib>

#include "app/editor/editor.h"
#include "app/editor/script_commands.h"

namespace adj::editor {

namespace {

Status cmd_attach(ScriptCall& c) {  // attach ADDRESS [TOKEN]: waits until the run's scene is the document
  if (Status st = c.need(1); !st) return st;
  if (Status st = c.e.attach_run(c.w[1], c.w.size() > 2 ? c.w[2] : ""); !st) return st;
  c.wait_until(
      [](Editor& e) {
        if (!e.attached.error.empty()) return true;  // attach-wait and the expectations report it
        return e.attached.has_hello && e.has_scene();
      },
      "the run's hello");
  return {};
}

Status cmd_attach_wait(ScriptCall& c) {  // attach-wait N: N iterations arrived (or the run ended)
  if (Status st = c.need(1); !st) return st;
  bool ok = false;
  const int n = c.arg_int(1, &ok);
  if (!ok) return Status::error("attach-wait: \"" + c.w[1] + "\" is not a number of iterations");
  if (!c.e.attachment.attached()) return Status::error("attach-wait: not attached (attach ADDRESS first)");
  c.wait_until([n](Editor& e) { return e.attached.iterations >= n || e.attached.ended || !e.attached.error.empty(); },
               std::to_string(n) + " iterations of the attached run");
  return {};
}

Status cmd_attach_replay(ScriptCall& c) {  // the newest rollout in the viewport (waits for one)
  if (!c.e.attachment.attached()) return Status::error("attach-replay: not attached");
  c.wait_until([](Editor& e) { return e.start_attach_replay() || !e.attached.error.empty(); },
               "a rollout of the attached run");
  return {};
}

Status cmd_attach_replay_frame(ScriptCall& c) {  // attach-replay-frame N: the replay held at frame N
  if (Status st = c.need(1); !st) return st;
  bool ok = false;
  const int f = c.arg_int(1, &ok);
  const int frames = int(c.e.attach_replay.rollout.particle_q.size());
  if (!c.e.attach_replay.active) return Status::error("attach-replay-frame: no replay (attach-replay first)");
  if (!ok || f < 0 || f >= frames)
    return Status::error("attach-replay-frame: \"" + c.w[1] + "\": the rollout has frames 0.." +
                         std::to_string(frames - 1));
  c.e.attach_replay.playing = false;
  c.e.attach_replay.frame = f;
  c.wait_frames(2);
  return {};
}

Status cmd_attach_control(ScriptCall& c) {  // attach-control pause|resume|stop|checkpoint
  if (Status st = c.need(1); !st) return st;
  if (!c.e.attachment.attached()) return Status::error("attach-control: not attached");
  app::wire::Command cmd;
  if (c.w[1] == "pause")
    cmd = app::wire::Command::pause;
  else if (c.w[1] == "resume")
    cmd = app::wire::Command::resume;
  else if (c.w[1] == "stop")
    cmd = app::wire::Command::stop;
  else if (c.w[1] == "checkpoint")
    cmd = app::wire::Command::checkpoint;
  else
    return Status::error("attach-control: \"" + c.w[1] + "\": expected pause, resume, stop or checkpoint");
  c.e.attachment.control(cmd);
  c.wait_until([](Editor& e) { return !e.attached.control_answer.empty(); }, "the run's answer");
  return {};
}

Status cmd_detach(ScriptCall& c) {
  c.e.detach_run();
  c.wait_frames(2);
  return {};
}

const ScriptCommand k_attach[] = {
    {"attach", cmd_attach},
    {"attach-wait", cmd_attach_wait},
    {"attach-replay", cmd_attach_replay},
    {"attach-replay-frame", cmd_attach_replay_frame},
    {"attach-control", cmd_attach_control},
    {"detach", cmd_detach},
};

}  // namespace

std::span<const ScriptCommand> script_attach_commands() { return k_attach; }

}  // namespace adj::editor
