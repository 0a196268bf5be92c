// The authored document: what a scene file holds, as plain values (doubles, so a file
// survives load -> save -> load exactly). engine/scene/scene_json.h reads and writes it;
// engine/scene/compile.h turns it into a Model.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/collision/contact_law.h"
#include "engine/model/field_table.h"
#include "engine/model/randomize.h"

namespace adj::scene {

using V3 = std::array<double, 3>;

inline constexpr int k_format_version = 1;

// contact laws (engine/collision/contact_law.h), both with its one set of defaults
struct ContactSettings {
  double ke = kContactKe;         // normal stiffness [N/m]
  double kd = kContactKd;         // normal damping [N s/m]
  double kf = kContactKf;         // friction stiffness [N s/m]; 0 = no friction
  double mu = kContactMu;         // Coulomb coefficient
  double eps = kContactEps;       // friction smoothing width around zero slip [m/s]
  bool particle_contact = false;  // particle-particle contact (hash grid)

  bool operator==(const ContactSettings&) const = default;
};

// contact of robots (engine/articulation) with the ground, colliders and each other; the particle
// contact above is separate. kg-scale robots usually state a stiffer law than the default
// (the robot scenes in assets/scenes: ke 1e4, kd 1e2, kf 1e2, mu 0.8)
struct RobotContactSettings {
  double ke = kContactKe;    // normal stiffness [N/m]
  double kd = kContactKd;    // normal damping [N s/m]
  double kf = kContactKf;    // friction slope [N s/m]; 0 = off
  double mu = kContactMu;    // Coulomb coefficient
  double eps = kContactEps;  // friction smoothing width around zero slip [m/s]
  // the ground's law: "smooth" (contact_force) or "depth_damped" (depth_damped_contact_force:
  // damping and the friction bound scale with the depth, dflex's law); colliders and body
  // pairs always follow the smooth one, so a scene with either rejects "depth_damped"
  std::string law = "smooth";

  bool operator==(const RobotContactSettings&) const = default;
};

struct Settings {
  double dt = 1.0 / 60.0;  // frame step [s]; each frame runs `substeps` solver substeps
  int substeps = 8;
  // the scene's up axis, "y" or "z": the ground's normal (a ground's height is along it), the
  // camera's up, and gravity's default (-9.81 along it). robots from URDF and MJCF files are
  // z-up: in a z-up scene they stand without a rotation (written only when "z")
  std::string up = "y";
  V3 gravity{0, -9.81, 0};      // [m/s^2]
  double damping = 0.0;         // global velocity damping [1/s]
  std::string backend = "cpu";  // "cpu" or "cuda"
  // the particles' time integration: "explicit" (semi-implicit Euler) or "implicit" (backward
  // Euler, engine/solver/implicit.h; written only when "implicit")
  std::string integrator = "explicit";
  ContactSettings contact;
  RobotContactSettings robot_contact;  // written only when it differs from the defaults
  // per-world parameter factors of a run over many worlds (engine/model/randomize.h); written
  // only when something is randomized
  Randomization randomize;

  bool operator==(const Settings&) const = default;
  int up_index() const { return up == "z" ? 2 : 1; }  // the up axis's coordinate
};

struct Particle {
  V3 position{0, 0, 0};  // [m]
  V3 velocity{0, 0, 0};  // [m/s]
  double mass = 1.0;     // [kg]; 0 = pinned
  double radius = 0.05;  // contact radius [m]

  bool operator==(const Particle&) const = default;
};

struct Spring {
  int i = 0, j = 0;       // particle indices within the object
  double ke = 100.0;      // [N/m]
  double kd = 1.0;        // [N s/m]
  double rest = -1.0;     // [m]; < 0: the initial distance
  bool actuated = false;  // rest length scaled by (1 + control) each step

  bool operator==(const Spring&) const = default;
};

// free particles with springs between them (mass-spring systems, robots)
struct ParticlesObject {
  std::vector<Particle> particles;
  std::vector<Spring> springs;

  bool operator==(const ParticlesObject&) const = default;
};

struct ClothMaterialSpec {
  double tri_ke = 1e3, tri_ka = 1e3, tri_kd = 1.0;  // membrane stretch, area, damping
  double edge_ke = 0.1, edge_kd = 0.0;              // bending
  double lift = 0.0, drag = 0.0;                    // aerodynamics (scene-wide in the model)

  bool operator==(const ClothMaterialSpec&) const = default;
};

// a grid (mesh empty) or any triangle mesh from an OBJ file
struct ClothObject {
  std::string mesh;             // OBJ path relative to the scene file; empty = grid
  int nx = 16, ny = 16;         // grid cells
  double cell = 0.1;            // grid cell size [m]
  V3 position{0, 1, 0};         // grid corner or mesh origin [m]
  V3 rotation{0, 0, 0};         // XYZ Euler angles [deg]
  double scale = 1.0;           // mesh scale
  V3 velocity{0, 0, 0};         // initial velocity [m/s]
  double particle_mass = 0.01;  // [kg]
  double radius = 0.02;         // contact radius [m]
  bool pin_left = false;        // pin the grid's x = 0 column
  bool pin_right = false;       // pin the grid's x = nx column (both: a hammock)
  ClothMaterialSpec material;
  // optimized initial state, one entry per particle in the compiled order (empty: the grid or
  // mesh positions, `velocity` for all); the rest shape stays the grid's or mesh's
  std::vector<V3> particle_positions;   // [m]
  std::vector<V3> particle_velocities;  // [m/s]

  bool operator==(const ClothObject&) const = default;
};

struct SoftMaterialSpec {
  double density = 1e3;  // [kg/m^3]
  double mu = 1e4;       // Lame mu [Pa]
  double lambda = 1e4;   // Lame lambda [Pa]
  double kd = 0.0;       // strain-rate damping

  bool operator==(const SoftMaterialSpec&) const = default;
};

// a grid of cells (mesh empty, 5 tets per cell) or a voxelized closed OBJ mesh
struct SoftObject {
  std::string mesh;
  int nx = 2, ny = 2, nz = 2;
  double cell = 0.25;    // [m]
  V3 position{0, 1, 0};  // grid corner or mesh origin [m]
  V3 rotation{0, 0, 0};  // mesh rotation [deg]
  double scale = 1.0;
  V3 velocity{0, 0, 0};
  double radius = 0.02;
  bool pin_left = false;
  bool actuated = false;  // tets take Control.tet_act (policy outputs, tet_activation parameters)
  SoftMaterialSpec material;
  std::vector<V3> particle_positions;   // optimized initial state, as ClothObject's [m]
  std::vector<V3> particle_velocities;  // [m/s]

  bool operator==(const SoftObject&) const = default;
};

enum class ColliderKind { ground, plane, sphere, box, capsule, mesh };

struct Collider {
  ColliderKind kind = ColliderKind::ground;
  V3 position{0, 0, 0};  // centre (ground: height = position[1]; plane: a point) [m]
  V3 normal{0, 1, 0};    // plane normal
  V3 size{1, 1, 1};      // box half extents; sphere/capsule: size[0] radius, capsule size[1] half height
  V3 rotation{0, 0, 0};  // [deg]
  std::string mesh;      // mesh collider OBJ path relative to the scene file
  double scale = 1.0;

  bool operator==(const Collider&) const = default;
};

// a marker that losses refer to
struct Target {
  V3 position{0, 0, 0};
  double radius = 0.1;     // drawn size [m]
  std::vector<V3> points;  // optional per-particle goal positions [m] (shape loss), empty = none

  bool operator==(const Target&) const = default;
};

enum class RobotJointKind { revolute, prismatic, ball, free, fixed };
enum class RobotShapeKind { sphere, box, capsule, mesh };
enum class RobotActuatorKind { torque, pd, thrust };

// a collision shape of a robot body (with a density it also gives the body mass)
struct RobotShape {
  RobotShapeKind kind = RobotShapeKind::sphere;
  V3 position{0, 0, 0};    // in the body frame [m]
  V3 rotation{0, 0, 0};    // XYZ Euler angles in the body frame [deg]
  V3 size{0.1, 0.1, 0.1};  // sphere (r), box half extents, capsule (r, half height along y) [m]
  std::string file;    // mesh: OBJ, STL or Collada (load_mesh), relative to the scene file (engine/model/rigid_mesh.h)
  V3 scale{1, 1, 1};   // mesh: per-axis scale of its vertices
  double density = 0;  // [kg/m^3]; 0 = no mass
  int group = 1;       // body-body contact filter: shapes a, b touch if (group_a & mask_b) and
  int mask = -1;       // (group_b & mask_a); -1 = every bit

  bool operator==(const RobotShape&) const = default;
};

// a body and the joint that attaches it to its parent (bodies listed parent first)
struct RobotBody {
  std::string name;
  std::string parent;  // parent body's name; empty = the world (a root)
  RobotJointKind joint = RobotJointKind::revolute;
  V3 position{0, 0, 0};                                     // joint frame origin in the parent body frame [m]
  V3 rotation{0, 0, 0};                                     // joint frame axes in the parent frame, XYZ Euler [deg]
  V3 axis{0, 0, 1};                                         // revolute/prismatic axis in the joint frame
  double lower = -std::numeric_limits<double>::infinity();  // limit [rad or m]
  double upper = std::numeric_limits<double>::infinity();
  double limit_ke = 0, limit_kd = 0;  // limit penalty; ke 0 = no limit
  double damping = 0;                 // viscous, per dof
  double armature = 0;                // rotor inertia, per dof
  double mass = 0;                    // > 0: given mass [kg], com and inertia replace the shapes'
  V3 com{0, 0, 0};                    // centre of mass, body frame [m]
  V3 inertia{0, 0, 0};                // principal moments about the com, body axes [kg m^2]
  std::vector<RobotShape> shapes;

  bool operator==(const RobotBody&) const = default;
};

struct RobotActuator {
  std::string body;  // the body whose joint it drives
  RobotActuatorKind kind = RobotActuatorKind::torque;
  int dof = 0;            // dof within the joint
  double gear = 1;        // torque = gear * control
  double kp = 0, kd = 0;  // pd: kp (control - q) - kd qd
  V3 position{0, 0, 0};   // thrust: point of application, body frame [m]
  V3 axis{0, 1, 0};       // thrust: force direction, body frame (force = gear * control)

  bool operator==(const RobotActuator&) const = default;
};

// an initial joint state: coordinates and velocities of one body's joint (rest = empty)
struct RobotInitial {
  std::string body;
  std::vector<double> q, qd;

  bool operator==(const RobotInitial&) const = default;
};

// a robot (engine/model, engine/io): listed body by body ("robot"), or imported from a URDF file
// ("urdf": bodies are the URDF links, named as there) or an MJCF file ("mjcf": bodies are the
// MJCF bodies, one per joint where a body has several: engine/io/mjcf.h)
// a scene's override of one joint of an imported robot (URDF joint or MJCF joint, by name);
// what is unset keeps the file's value
struct RobotJointOverride {
  std::string name;
  std::optional<double> damping;    // [N m s/rad or N s/m]
  std::optional<double> armature;   // [kg m^2 or kg]
  std::optional<double> stiffness;  // joint spring toward q = 0 [N m/rad or N/m]
  std::optional<double> limit_ke;   // limit penalty stiffness (the joint must have limits)
  std::optional<double> limit_kd;   // and damping
  // set on any joint: the file's actuators (their gear and ctrlrange) are replaced by one torque
  // actuator per joint that states it, torque = strength * action, in the file's joint order
  std::optional<double> strength;  // [N m or N per unit action]

  bool operator==(const RobotJointOverride&) const = default;
};

// mjcf: how to read the file where it differs from MuJoCo's reading (engine/io/mjcf.h's
// MjcfOptions; dflex reads DiffRL's locomotion robots so). unset: the file's own values
struct RobotImport {
  double density = 0;                    // > 0: every geom's density [kg/m^3]; the file's ignored
  std::optional<double> joint_damping;   // every joint whose own element does not state it
  std::optional<double> joint_armature;  // (its <default> class ignored)
  std::optional<double> joint_stiffness;
  std::optional<std::array<double, 2>> hinge_range;  // [deg] limits of hinges the file leaves unlimited

  bool operator==(const RobotImport&) const = default;
};

struct RobotObject {
  std::string urdf;                      // robot file path relative to the scene file; empty = `bodies`
  bool mjcf = false;                     // the file is MJCF (type "mjcf"), not URDF
  V3 position{0, 0, 0};                  // placement of the root joint frames [m]
  V3 rotation{0, 0, 0};                  // [deg]
  bool fixed_base = true;                // urdf: root link welded to the world, else a free joint
  bool default_actuators = true;         // urdf: one actuator per revolute/prismatic joint
  RobotActuator default_actuator;        // urdf: its kind and gains (body ignored)
  std::vector<RobotBody> bodies;         // "robot"
  std::vector<RobotActuator> actuators;  // "robot"; urdf: added after the defaults
  std::vector<RobotInitial> initial;
  // urdf/mjcf: limit penalty of every limited joint (< 0: the importer's 1000 N m/rad, 10 N m s/rad)
  double limit_ke = -1, limit_kd = -1;
  bool balance_inertia = false;            // urdf/mjcf: repair inertias that violate A + B >= C (warned)
  int cylinder_segments = 0;               // urdf: > 2: cylinders touch as prisms of this many sides; 0: as capsules
  std::vector<RobotJointOverride> joints;  // urdf/mjcf: per-joint overrides, by name
  RobotImport import;                      // mjcf: reading choices

  bool operator==(const RobotObject&) const = default;
};

enum class ObjectKind { particles, cloth, soft, collider, target, robot };

struct Object {
  std::string name;
  ObjectKind kind = ObjectKind::particles;
  bool visible = true;
  ParticlesObject particles;  // kind == particles
  ClothObject cloth;          // kind == cloth
  SoftObject soft;            // kind == soft
  Collider collider;          // kind == collider
  Target target;              // kind == target
  RobotObject robot;          // kind == robot

  bool operator==(const Object&) const = default;
};

// what an optimizer may change: the initial state, per-step inputs and policy weights, then
// every differentiable model field (one per row of engine/model/field_table.h, its JSON name
// the row's kind: spring_rest, spring_ke, spring_kd, tri_ke, tri_ka, tri_kd, edge_ke, lift,
// drag, tet_mu, tet_lambda, particle_mass, gravity, contact_ke/kd/mu, body_mass, actuator_kp/kd)
enum class ParamKind {
  initial_position,   // object's particles' initial positions
  initial_velocity,   // object's particles' initial velocities
  control_force,      // per-step external force on each of the object's particles
  spring_activation,  // per-step actuation of the object's actuated springs
  policy,             // the task's policy network weights
  tet_activation,     // per-step activation of the object's tets (Control.tet_act)
  joint_q,            // robot's initial joint coordinates (revolute/prismatic)
  joint_qd,           // robot's initial joint velocities (every dof)
  actuator_control,   // per-step input of each of the robot's actuators
// model fields; contact_ke/kd/mu act on the robot contact when the task has robot
// parameters or losses
#define ADJ_X(decl, kind, ...) ADJ_FIELD_DECLARES_##decl(kind, )
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
};
#define ADJ_X(decl, kind, ...) ADJ_FIELD_DECLARES_##decl(+1)
inline constexpr int k_param_kind_count = int(ParamKind::actuator_control) + 1 ADJ_MODEL_FIELDS(ADJ_X);
#undef ADJ_X

struct ParamSpec {
  ParamKind kind = ParamKind::initial_velocity;
  std::string object;  // name of the object (empty for contact_* and policy)
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  // bounds of each element (one per actuator, joint, particle...: "lower": [..] in JSON),
  // narrowing the bounds above; empty = none
  std::vector<double> lower_each, upper_each;
  // per-frame kinds (is_per_frame): the optimizer's variables are the values at `knots` frames
  // spread over the horizon, the frames between them linear interpolation (engine/optim/parameters.h,
  // knot_frame); 0 = one value per frame. 2 <= knots <= horizon
  int knots = 0;

  bool operator==(const ParamSpec&) const = default;
};

enum class LossKind {
  position,  // |centre of mass of object at step - target|^2
  distance,  // -(centre of mass displacement along axis) at step (distance travelled)
  shape,     // mean |x_i(step) - (x_i(0) + offset)|^2: final shape vs the initial one moved to target;
             // mean |x_i(step) - p_i|^2 when the target lists points p_i (one per particle)
  velocity,  // |mean velocity of object at step|^2
  effort,    // sum over steps and entries of control^2
  // robots: position and distance read the robot's `body` (its com); effort its actuator_control
  joint,     // (q_body(step) - value)^2: the body's joint coordinate against a value
  cartpole,  // SHAC's swing-up cost, mean over frames 1..step: 2(1 - cos theta) + 0.1 thetadot^2
             // + 0.05 x^2 + 0.1 xdot^2 (x: the robot's first prismatic joint, theta: its first revolute)
  // robots, running costs: the mean over frames 1..step of a cost on the robot's `body`
  height,   // max(0, value - com height)^2: the body's centre of mass below `value` [m] is penalized
            // (height along the scene's up axis)
  upright,  // 1 - (R_body axis) . up: the body-frame `axis` (unit) tilted away from the scene's up
  speed,    // (com velocity . axis - value)^2: forward speed along the world `axis` against `value` [m/s]
  reach,    // |com - target|^2: the body's centre of mass against a target object, every frame (a running
            // position term: "get there soon and stay"; the same cost for BPTT and the policy envs)
  // robots, running rewards (the locomotion suite's, docs/scene-format.md): the cost is minus
  // the reward, so that an episode's summed costs are minus its summed reward
  forward_velocity,  // reward com velocity . axis (world `axis`, unit) [m/s]
  up_projection,     // reward (R_body axis) . up: the body-frame `axis` against the scene's up
  heading,           // reward (R_body axis) . direction: the body-frame `axis` against the world
                     // `direction` laid in the ground plane (unit)
  height_reward,     // reward of d = clip(com height - value, lower, upper): above d for d >= 0,
                     // below d - quadratic d^2 for d < 0
  alive,             // reward `value` per frame (a constant: an episode that ends early forgoes it)
};

struct LossTerm {
  LossKind kind = LossKind::position;
  std::string object;  // object the term measures
  std::string target;  // target object's name (position, shape)
  int step = -1;       // frame the term reads; -1 = the last
  V3 axis{1, 0, 0};    // distance, speed: world direction; upright: the body-frame axis that points up
  double weight = 1.0;
  std::string body;    // robots: the body the term reads
  double value = 0.0;  // joint: the target coordinate [rad or m]; height: min height [m]; speed: [m/s]
  // heading: the world direction to face
  V3 direction{1, 0, 0};
  // height_reward's shape (defaults: the reward is d = height - value)
  double lower = -std::numeric_limits<double>::infinity(), upper = std::numeric_limits<double>::infinity();
  double above = 1, below = 1, quadratic = 0;
  // particle terms: the object's particles the term reads (indices within the object, as its
  // grid or mesh numbers them); empty: all of them
  std::vector<int> particles;

  bool operator==(const LossTerm&) const = default;
};

enum class OptimizerKind { sgd, adam };

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adam;
  double lr = 0.01;
  double clip = 0.0;  // global gradient norm clip; 0 = none
  int iterations = 50;
  // a step that raised the loss (or made the rollout fail) is undone: the next point is the
  // step from the last accepted point at half the length, and so on; an accepted point reached
  // without a retreat doubles the length back (at most the optimizer's own step)
  bool backtrack = false;

  bool operator==(const OptimizerSpec&) const = default;
};

// a named term of a robot policy's observation (engine/optim/policy.h); the terms read
// the policy's robot, or a particle object of the scene (object_*: coupled scenes), in the order listed
enum class ObservationKind {
  height,              // the body's centre-of-mass height along the scene's up (1)
  orientation,         // the body's free joint's quaternion coordinates w, x, y, z (4)
  velocity,            // the body's centre-of-mass velocity, world (3) [m/s]
  angular_velocity,    // the body's angular velocity, world (3) [rad/s]
  joint_positions,     // the robot's hinge and slide coordinates, in joint order (one each)
  joint_velocities,    // their velocities (one each)
  up_projection,       // (R_body axis) . up (1)
  heading_projection,  // (R_body axis) . direction, direction laid in the ground plane (1)
  previous_action,     // the policy's outputs of the frame before (zero at an episode's start), one per actuator
  object_position,     // a particle object's centre of mass (mass-weighted, as the loss terms'), world (3) [m]
  object_velocity,     // its centre-of-mass velocity, world (3) [m/s]
};
// the last kind (the loops over every kind)
inline constexpr ObservationKind last_observation_kind = ObservationKind::object_velocity;
// whether a term reads a particle object (its `object`) rather than one of the robot's bodies
inline bool reads_object(ObservationKind k) {
  return k == ObservationKind::object_position || k == ObservationKind::object_velocity;
}

struct ObservationTerm {
  ObservationKind kind = ObservationKind::height;
  std::string body;            // the body the term reads (the joint terms and object_*: unused)
  std::string object;          // object_*: the particle object the term reads
  std::vector<int> particles;  // object_*: the particles read, numbered within the object (empty: all)
  V3 axis{1, 0, 0};            // up_projection, heading_projection: the body-frame axis
  V3 direction{1, 0, 0};       // heading_projection: the world direction to face
  double scale = 1.0;          // every entry times this
  // joint_positions, joint_velocities: bodies whose joint is left out (a planar robot's root
  // slide along the ground: "torso/rootx")
  std::vector<std::string> exclude;

  bool operator==(const ObservationTerm&) const = default;
};

struct PolicySpec {
  std::vector<int> hidden{32};  // hidden layer widths (tanh)
  int phases = 4;               // sine phase observations (DiffTaichi robots)
  double phase_period = 1.0;    // [s]
  double output_scale = 1.0;    // actions = scale * tanh(last layer)
  // each action's control (Isaac Lab's action scale and offset): control_k = action_offset_k +
  // action_scale_k * action_k, one entry per output (a robot's actuators in the file's order;
  // a particle policy's actuated springs, then tets); empty: scale 1, offset 0
  std::vector<double> action_scale, action_offset;
  // the randomized starts SHAC, PPO and PODS train from (robots): each joint coordinate moved by
  // up to start_q_range [rad or m], each dof velocity by up to start_qd_range [rad/s or m/s]
  double start_q_range = 3.14159, start_qd_range = 0.5;
  // and each free root moved by up to start_root_position_range [m] per axis and turned by up to
  // start_root_angle_range [rad] about a random axis (0: as the task starts)
  double start_root_position_range = 0, start_root_angle_range = 0;
  // robots: the observation as named terms (then with the phases); empty: each joint's sin and
  // cos (hinges) or coordinates, every dof velocity, then the phases
  std::vector<ObservationTerm> observation;

  bool operator==(const PolicySpec&) const = default;
};

// SHAC's configuration for a policy task (engine/optim/shac.h BatchShacOptions): each key set
// overrides the trainer's default, an absent one keeps it (the cartpole swing-up's settings), so
// scenes without the block train as before. The locomotion scenes state the published set-up.
struct ShacSpec {
  std::optional<int> window;                                 // frames per window
  std::optional<int> envs;                                   // copies trained together (the command's --envs wins)
  std::optional<double> actor_lr, critic_lr;                 // Adam steps
  std::optional<bool> lr_decay;                              // linear decay over the run's windows towards lr_end
  std::optional<double> lr_end;                              // the learning rates' value at the last window
  std::optional<std::array<double, 2>> betas;                // Adam's moment decays (both networks)
  std::optional<double> clip, critic_clip;                   // global gradient-norm clips (0: none)
  std::optional<double> grad_bound;                          // a window whose actor gradient norm is above: skipped
  std::optional<double> gamma, lambda;                       // discount, TD(lambda)
  std::optional<std::vector<int>> critic_hidden;             // the critic's hidden layer widths
  std::optional<std::string> activation;                     // "tanh" | "elu": both networks' hidden layers
  std::optional<bool> layer_norm;                            // both networks: LayerNorm after each hidden layer
  std::optional<std::string> init;                           // "glorot" | "orthogonal": both networks' weights
  std::optional<int> critic_iterations, critic_minibatches;  // critic passes per window, minibatches per pass
  std::optional<double> target_alpha;                        // target <- alpha target + (1 - alpha) critic
  std::optional<double> action_noise;                        // fixed exploration std (without log_std_init)
  std::optional<double> log_std_init;                        // a learned state-independent std, log of its start
  std::optional<bool> normalize_observations;                // running mean and std

  bool operator==(const ShacSpec&) const = default;
};

// AHAC's configuration for a policy task (engine/optim/ahac.h AhacOptions): `--method ahac`
// trains with the task's SHAC block and these keys over AhacOptions' defaults
struct AhacSpec {
  std::optional<double> contact_threshold;  // C [N]: a window ends after a frame ending in stiffer contact
  std::optional<int> horizon_min;           // the adaptive horizon's floor [frames] (its ceiling: shac.window)
  std::optional<double> dual_lr;            // the dual variable's step
  std::optional<bool> double_critic;        // two critics, their minimum

  bool operator==(const AhacSpec&) const = default;
};

// optimized values of a parameter the objects cannot hold: per-frame inputs
// (control_force, spring/tet_activation, actuator_control: frame-major, then element, then
// component, as the optimizer lays them out) and policy weights (kind policy, object empty).
// A task runner starts from them instead of zeros or a seeded initialization.
struct ParamValues {
  ParamKind kind = ParamKind::control_force;
  std::string object;
  std::vector<double> values;

  bool operator==(const ParamValues&) const = default;
};

struct Task {
  std::string name;
  int horizon = 60;  // frames (each `substeps` solver steps)
  std::vector<ParamSpec> parameters;
  std::vector<LossTerm> loss;
  OptimizerSpec optimizer;
  bool has_policy = false;
  PolicySpec policy;
  ShacSpec shac;  // how `--method shac` trains the policy
  AhacSpec ahac;  // and `--method ahac` (with the SHAC block)
  uint64_t seed = 0;
  // policy tasks: an episode ends early when the robot `object`'s `body` has its centre of mass
  // below `height` along the scene's up (empty object: never; the policy envs, SHAC)
  struct Termination {
    std::string object, body;
    double height = 0;

    bool operator==(const Termination&) const = default;
  } termination;
  int checkpoint_every = 0;         // 0 = ceil(sqrt(steps)), 1 = keep every state
  std::vector<ParamValues> values;  // what Apply kept of per-frame inputs and policy weights
                                    // (saved inline, or large ones in a sidecar file: scene_json.h)

  bool operator==(const Task&) const = default;
};

struct Scene {
  std::string name;
  Settings settings;
  std::vector<Object> objects;
  std::vector<Task> tasks;

  const Object* find(const std::string& object_name) const;
  const Task* find_task(const std::string& task_name) const;  // empty name: the first task

  bool operator==(const Scene&) const = default;
};

// names for file I/O and messages
const char* to_string(ObjectKind k);
const char* to_string(ColliderKind k);
const char* to_string(ParamKind k);
// what the editor calls a parameter kind ("spring rest lengths")
const char* label(ParamKind k);
// kinds that name no object (contact, aerodynamics, gravity, policy)
bool is_scene_wide(ParamKind k);
// kinds with one value per frame of the horizon (control_force, spring/tet_activation,
// actuator_control): the kinds that take "knots"
bool is_per_frame(ParamKind k);
// kinds of robot objects only (joint_q/qd, actuator_control, the robot side's model fields)
bool is_robot_param(ParamKind k);
const char* to_string(LossKind k);
const char* to_string(OptimizerKind k);
const char* to_string(ObservationKind k);
const char* to_string(RobotJointKind k);
const char* to_string(RobotShapeKind k);
const char* to_string(RobotActuatorKind k);

}  // namespace adj::scene
