#pragma once
// `adjoint dynamics MODEL [--qpos a,b,...] [--qvel ...] [--ctrl ...] [--no-contact] [--no-limits]
// [--json]`: a URDF, MJCF or scene file's mass matrix, bias, passive and actuator forces and
// qacc at one state, in MuJoCo's coordinates and names (engine/io/mujoco_dynamics.h)
#include <string>

namespace adj::app {

struct DynamicsCmdOptions {
  std::string model_path;  // .urdf, .xml / .mjcf, or a scene (.json)
  std::string qpos;        // comma-separated; empty = qpos0 (the model as written)
  std::string qvel;        // empty = zeros
  std::string ctrl;        // empty = zeros
  bool contact = true;     // the engine's penalty contact (qfrc_contact)
  bool limits = true;      // the engine's joint limit penalties (qfrc_limit)
  bool equality = true;    // the engine's joint couplings, URDF mimic (qfrc_equality)
  bool json = false;       // JSON on stdout (keys as MuJoCo names them)
};

// exit code: 0 ok, 1 error (message printed: the file and element, or the bad argument)
int run_dynamics(const DynamicsCmdOptions& options);

}  // namespace adj::app
