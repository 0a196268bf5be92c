// Parameters of a task: one flat vector theta made of named blocks, each a view into the
// Model or the rollout's inputs, on either side of the scene:
//   bodies (a robot's; first in theta):
//     joint_q            the robot's revolute/prismatic coordinates (quaternions and free-base
//                        positions are left alone), of the initial state
//     joint_qd           every dof of the robot, of the initial state
//     actuator_control   one entry per frame and actuator (torque actuators: input * gear,
//                        from 0; PD: the target, from the joint's initial coordinate)
//     the robot side's model fields of engine/model/field_table.h: actuator_kp/kd (PD actuators),
//     body_mass (bodies with mass; inertia scales with the mass), joint_damping and
//     joint_armature (every dof, bounded below by 0), contact_ke/kd/mu (the robots' contact)
//   particles (after them):
//     initial_position / initial_velocity of an object's particles, per-frame control_force,
//     spring_activation and tet_activation, and any particle-side model field
//   the policy's weights (policy_size of them, on the side the policy drives): apply() and
//     gather() leave them alone, the policy owns them (engine/optim/policy.h).
// An entry is the bodies' when its object is a robot, or it names no object and the robots
// have a field of its kind (contact_*), in a task that names a robot at all; in a scene of
// robots alone every entry of such a task is (split_task). apply() writes theta into the
// model, the initial State and the per-frame Controls before a rollout; gather() reads
// dLoss/dtheta out of the rollout afterwards.
// Each kind is a row of a table per side (ParamRowT: how a block of the kind is made, read
// from the compiled scene, written into the rollout's inputs and gathered from its gradients;
// the particle rows in parameters.cpp, the body rows in parameters_bodies.cpp, a row for every
// model field made from engine/model/field_table.h); each block keeps its row.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/grad/rollout.h"
#include "engine/model/fields.h"
#include "engine/model/model.h"
#include "engine/model/rigid_model.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

// what a block or a loss term reads: a robot's bodies and joints, or the particles
enum class TermSide { bodies, particles };

// one named block of theta: entry (step, element, component) lies at
// offset + (step * elements + element) * width + component
struct ParamBlock {
  scene::ParamKind kind = scene::ParamKind::initial_velocity;
  std::string object;  // object name; empty for contact_* and policy
  int offset = 0;      // first entry in theta
  int count = 0;       // entries = steps * elements * width
  int steps = 1;       // entries per element and component along time: the horizon for per-frame
                       // kinds (control_force, *_activation, actuator_control), `knots` with knots, else 1
  int frames = 1;      // frames the block's inputs cover: the horizon for per-frame kinds, else 1
  int knots = 0;       // per-frame kinds: theta holds the values at `knots` knot frames (knot_frame),
                       // the frames between them linear interpolation; 0: one entry per frame
  int elements = 1;    // particles, springs or tets the block covers (1 for contact_*)
  int width = 1;       // entries per element: 3 for vectors, else 1
  double lower = 0;    // bounds, applied to every entry by clamp()
  double upper = 0;
  std::vector<double> lower_each, upper_each;  // each element's bounds narrowing those, (elements) or empty
  std::vector<int> index;                      // model index of each element (particle, spring, tet...), (elements)
  int first_local = 0;                         // index[0] relative to the object's first particle/spring/tet...
  const FieldInfo* field = nullptr;            // the model field (engine/model/fields.h); null for the
                                               // initial state, per-step inputs and policy weights
  TermSide side = TermSide::particles;         // the side the block reads and writes
  int row = -1;                                // its kind's row in the side's table (param_rows)
  std::vector<std::string> names;              // bodies: each element's name ("knee", "root.3"), (elements)
};

// knots of a per-frame block: knot k (0 <= k < knots) sits on frame round(k (frames - 1) / (knots - 1)),
// the first on frame 0, the last on frames - 1; frame t between knots k and k + 1 takes
// (1 - w) x_k + w x_{k+1}, w = (t - frame_k) / (frame_{k+1} - frame_k). Bounds hold the knots, and
// so every frame. ParametersT writes and gathers every block through frame_block: the rows see
// one entry per frame, theta holds the knots.
int knot_frame(int k, int knots, int frames);
// an entry name's component: ".x", ".y" or ".z" for component c of a block of vectors, else empty
std::string component_suffix(const ParamBlock& b, int c);
// the block as its row writes it: one entry per frame (a block without knots: itself)
ParamBlock frame_block(const ParamBlock& b);
// theta's entries x of block b -> per-frame entries (frame_block(b).count of them)
template <class S>
void knots_to_frames(const ParamBlock& b, const S* x, S* frames);
// per-frame gradient -> the knots' (the interpolation weights times the frames', summed in frame
// order): the transpose of knots_to_frames
template <class S>
void frames_to_knots_grad(const ParamBlock& b, const S* frames, S* g);
// per-frame values -> theta's entries: the values at the knot frames
template <class S>
void sample_knots(const ParamBlock& b, const S* frames, S* x);
// b's steps, frames and knots: a per-frame row's block covers `horizon` frames, with spec.knots
// knots when set; knots on a kind that is not per-frame, or outside 2..horizon, are refused
Status block_frames(const scene::ParamSpec& spec, bool per_frame, int horizon, const std::string& where, ParamBlock& b);

// entry i's bounds (0 <= i < count): the block's, narrowed by its element's own
inline double entry_lower(const ParamBlock& b, int i) {
  return b.lower_each.empty() ? b.lower : std::max(b.lower, b.lower_each[size_t((i / b.width) % b.elements)]);
}
inline double entry_upper(const ParamBlock& b, int i) {
  return b.upper_each.empty() ? b.upper : std::min(b.upper, b.upper_each[size_t((i / b.width) % b.elements)]);
}
// b's per-element bounds from spec's lists, once b.elements is known; a list of another length
// is refused, naming the elements it should bound
Status element_bounds(const scene::ParamSpec& spec, const std::vector<std::string>& names, const std::string& where,
                      ParamBlock& b);

// an object's [begin, end) in a field domain's numbering (scene: [0, 1))
std::pair<int, int> domain_range(const scene::ObjectRange& r, FieldDomain d);
// b's elements for model field f of `obj` (null: a scene-wide field), its width, first_local and
// the lower bound's default; errors (prefixed by `where`) say what the object lacks
template <class S>
Status field_block(const FieldInfo& f, const ModelT<S>& m, const scene::ObjectRange* obj, const std::string& where,
                   ParamBlock& b);

// whether the task names a robot object (a parameter or a loss term on one): then its entries
// bind to the robots' side where they can and its policy drives the robots (TaskRunnerT,
// ScenePolicyEnvT); else everything is the particles'
template <class S>
bool task_names_robot(const scene::CompiledSceneT<S>& cs, const scene::Task& task);

// the task's entries on each side (the rule above), each side's copy of the task holding its
// own parameters and loss terms; the policy goes with the side the task names
struct TaskSides {
  bool robots = false;  // the task names a robot object
  scene::Task robot, particles;
};
template <class S>
TaskSides split_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task);

// per-step kinds: one block entry per frame of the horizon
inline bool is_control(scene::ParamKind k) {
  return k == scene::ParamKind::control_force || k == scene::ParamKind::spring_activation ||
         k == scene::ParamKind::tet_activation;
}

// what a parameter kind's row reads when a block is made
template <class S>
struct ParamBuildT {
  const scene::CompiledSceneT<S>& cs;
  const scene::ObjectRange* object;  // the block's object (null for scene-wide kinds)
  const std::string& where;          // "task 'x': parameters[n] (kind ...)", for messages
  int policy_size;                   // the policy's weights on the block's side (0: none)
};
// what apply() writes: the model, the initial state and the per-frame controls (body masses
// scale the bodies' inertia from the base)
template <class S>
struct ParamTargetT {
  ModelT<S>& model;
  StateT<S>& init;
  std::vector<ControlT<S>>& controls;
  const std::vector<S>& base_mass;
  const std::vector<mat33<S>>& base_inertia;
};
// what gather() reads: dL/d initial state, dL/d Control per step, dL/d model
template <class S>
struct ParamGradsT {
  const StateT<S>& initial;
  const std::vector<ControlT<S>>& controls;
  const ModelGradT<S>& model;
};

// a parameter kind on one side: one row per (kind, side), the model fields' rows made from
// the field table (engine/model/field_table.h). x, g: the block's first entry in theta, its
// gradient
template <class S>
struct ParamRowT {
  scene::ParamKind kind;
  TermSide side;
  const FieldInfo* field;  // a model field's row: the field; else null
  bool per_step;           // one block entry per frame of the horizon
  // the block's elements (index, width, first_local; the bodies' side: names); b.field is set
  Status (*create)(const ParamBuildT<S>& build, ParamBlock& b);
  // theta's starting entries from the compiled scene; null: zero (the policy initialises its weights)
  void (*initial)(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x);
  // write the entries into the model, initial state or controls; null: the policy's weights
  void (*apply)(const ParamBlock& b, const S* x, const ParamTargetT<S>& to);
  // the entries' gradient; null: left at zero (the policy's weights: the policy gathers them)
  void (*gather)(const ParamBlock& b, const ParamGradsT<S>& from, S* g);
};

// each side's rows (parameters.cpp, parameters_bodies.cpp), and the row of a kind on a side (or null)
template <class S>
const std::vector<ParamRowT<S>>& particle_param_rows();
template <class S>
const std::vector<ParamRowT<S>>& body_param_rows();
template <class S>
const ParamRowT<S>* param_row(scene::ParamKind kind, TermSide side);
// the rows of every model field of one side (model fields' blocks are alike on both sides)
template <class S>
std::vector<ParamRowT<S>> field_param_rows(FieldSide side);

template <class S>
class ParametersT {
 public:
  ParametersT() = default;

  // the bodies' blocks, then the particles', each side in the task's order; errors name the
  // task and the parameter (unknown object, object without springs/tets/bodies, duplicate
  // block, bounds upside down, a kind the object's side has not). A policy block
  // (ParamKind::policy, or implied by task.has_policy) holds policy_size weights: last of the
  // bodies' blocks for a robot policy, in the task's order (else last) for a particle policy.
  static Result<ParametersT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task, int policy_size = 0);

  int size() const { return size_; }
  int horizon() const { return horizon_; }
  // the policy block, or null
  const ParamBlock* policy_block() const;
  const std::vector<ParamBlock>& blocks() const { return blocks_; }
  // the bodies' entries: theta's first robot_size() entries
  int robot_size() const { return robot_size_; }
  // whether any block is a per-step control (then apply() fills `horizon` Controls)
  bool has_controls() const { return has_controls_; }
  // whether any block is a model field of the bodies (the rollout then keeps their gradients)
  bool has_model_params() const { return has_body_fields_; }

  // theta read from the compiled scene (particle controls and torque inputs zero, PD targets at
  // the joints' coordinates), clamped to the bounds
  std::vector<S> initial(const scene::CompiledSceneT<S>& cs) const;
  // clamp every entry to its block's bounds
  void clamp(std::vector<S>& theta) const;

  // write theta into the model (a copy of the compiled one: only parameter fields are
  // written, so the same copy can be reused), the initial state (the model's, then theta's
  // entries) and the controls (left empty = zero inputs when no block is a control, else
  // `horizon` Controls); body masses scale the compiled bodies' inertia
  void apply(const std::vector<S>& theta, ModelT<S>& model, StateT<S>& initial,
             std::vector<ControlT<S>>& controls) const;
  // the same with the bodies' inertia scaled from `base` (the compiled bodies)
  void apply(const std::vector<S>& theta, const RigidModelT<S>& base, ModelT<S>& model, StateT<S>& initial,
             std::vector<ControlT<S>>& controls) const;
  // dLoss/dtheta from a rollout that has run backward() (grad is resized and overwritten)
  void gather(const RolloutT<S>& rollout, std::vector<S>& grad) const {
    gather(rollout.grad_initial(), rollout.grad_controls(), rollout.grad_model(), grad);
  }
  // the same from the pieces (dL/d initial state, dL/d Control per step, dL/d model)
  void gather(const StateT<S>& grad_initial, const std::vector<ControlT<S>>& grad_controls,
              const ModelGradT<S>& grad_model, std::vector<S>& grad) const;

  // the block holding entry i and the entry's readable name, e.g.
  // "initial_velocity[ball][0].x", "control_force[ball][t=3][0].y", "spring_rest[cage][2]",
  // "joint_q[cartpole][pole]", "actuator_control[arm][t=3][link1]", "contact_ke"
  const ParamBlock& block_of(int i) const;
  std::string entry_name(int i) const;

 private:
  // each side's blocks from its part of the task (parameters.cpp, parameters_bodies.cpp)
  Status add_particle_blocks(const scene::CompiledSceneT<S>& cs, const scene::Task& task, int policy_size);
  Status add_body_blocks(const scene::CompiledSceneT<S>& cs, const scene::Task& task, int policy_size);
  void apply_to(const std::vector<S>& theta, const std::vector<S>& base_mass, const std::vector<mat33<S>>& base_inertia,
                ModelT<S>& model, StateT<S>& init, std::vector<ControlT<S>>& controls) const;
  std::string entry_name_bodies(const ParamBlock& b, int k) const;

  std::vector<ParamBlock> blocks_;
  int size_ = 0;
  int robot_size_ = 0;
  int horizon_ = 1;
  bool has_controls_ = false;
  bool has_body_fields_ = false;
  std::vector<S> base_mass_;  // the compiled bodies' masses and inertia (body_mass blocks)
  std::vector<mat33<S>> base_inertia_;
};

using Parameters = ParametersT<float>;

}  // namespace adj::optim
