#pragma once
// Robots in the editor: what the viewport draws of them (the simulated, scrubbed or
// optimized joint state, contacts, the highlighted body), the outliner's tree of bodies by
// kinematic chain, the inspector's joint sliders and body/joint/actuator fields, URDF import
// (File > Import URDF, or a .urdf dropped on the window) and the script commands for all of
// it. The Editor holds one RobotUi; panels.cpp, script.cpp and viewer.cpp call in here.
#include <glm/glm.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_model.h"
#include "engine/scene/scene.h"

namespace adj::editor {

class Editor;

struct RobotUi {
  int body_object = -1;      // object whose body is selected (the highlight follows the object selection)
  int body = -1;             // selected body, index in CompiledScene::rigid, or -1
  bool reveal_body = false;  // the inspector opens the selected body's entry (a click picked it)
  // the drawn state: a scrubbed timeline frame, cached
  State scrub;
  State rest;  // the compiled initial joint state, when nothing newer is at hand
  int scrub_frame = -1;
  // URDF joint names by file (the compiled model keeps link names only)
  std::map<std::string, std::vector<std::string>> urdf_joints;
};

// the robots' joint state the viewport shows: the optimizer's final state ("show optimized
// result"), the scrubbed timeline frame, the newest simulated frame, or the compiled initial
// state until the worker has published this revision
const State& robot_display_state(Editor& e);
// its contacts (null when not the newest frame)
const RigidContactsT<float>* robot_display_contacts(Editor& e);
// hands the view the robot state, contacts and highlighted body (viewer, before build())
void robot_prepare_view(Editor& e);

// the selected body of the selected robot (-1: none); selecting one also selects its robot
int robot_selected_body(const Editor& e);
void robot_select_body(Editor& e, int object, int body);

// outliner: the robot's bodies as a tree by kinematic chain (after the robot's own row)
void draw_robot_tree(Editor& e, int object);
// rows the trees add to the outliner (its height)
int robot_outliner_rows(const Editor& e);
// inspector: joint sliders, bodies, actuators of the selected robot (after its fields)
void draw_robot_inspector(Editor& e, int object);

// a robot object referencing the URDF or MJCF file (by extension: .urdf, .xml / .mjcf; relative
// to the scene file when it has one), placed above the ground along the scene's up axis (an
// MJCF turned by -90 deg about x in a y-up scene) and selected, as one undo step; the
// importer's warnings become warning messages; errors name the file and the element, the
// scene stays
bool import_robot(Editor& e, const std::string& path);
// the bounds of an imported robot's per-frame actuator inputs, from its file: an MJCF robot's
// motors' ctrlrange (one pair, the widest when they differ; nothing when an actuator is
// unlimited or a servo); a URDF robot's per input: a PD target inside its joint's range, a
// torque inside the joint's <limit effort> (over the gear); nothing when no input is bounded.
// `why` says where the bounds come from, for the message.
struct RobotInputBounds {
  double lower = -INFINITY, upper = INFINITY;
  std::vector<double> lower_each, upper_each;  // URDF: one per actuator
  std::string why;
};
std::optional<RobotInputBounds> robot_input_bounds(const Editor& e, const scene::Object& o);

// the initial coordinate of `body`'s joint (a revolute/prismatic joint), as the slider sets
// it: merge_key 0 = its own undo step. Errors name the robot and body.
Status robot_set_joint(Editor& e, int object, const std::string& body, double value, uint64_t merge_key = 0);

// script commands (script.h):
//   set-joint ROBOT BODY VALUE       as one drag of the joint's slider (waits for the worker)
//   select-body ROBOT BODY           as clicking the body in the outliner
//   import-urdf PATH                 File > Import URDF/MJCF, .urdf or .xml (waits for the worker)
//   expect-joint ROBOT BODY OP VALUE the drawn state's joint coordinate, OP one of < > = !=
//                                    (= and != within 1e-6)
//   expect-contacts OP N             drawn robot contacts compared with N
//   expect-body NAME|none            the selected body
enum class RobotScriptWait { none, frames, worker };
struct RobotScriptResult {
  Status status;
  RobotScriptWait wait = RobotScriptWait::none;
};
std::optional<RobotScriptResult> robot_script_command(Editor& e, const std::vector<std::string>& words);

// a click at `px` [pixels of a `view`-sized viewport] that picked robot `object`: the body
// whose shapes (sphere centres, capsule axes, box centres) come nearest on screen, selected
void robot_pick_body(Editor& e, int object, glm::vec2 px, glm::vec2 view);
// where a body's centre of mass is drawn now (world), for script clicks; nullopt: no such body
std::optional<glm::vec3> robot_body_centre(Editor& e, int object, const std::string& body);

}  // namespace adj::editor
