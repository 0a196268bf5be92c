// the MJCF importer on small files of its own (tests/data/mjcf): default classes and
// childclass, <include>, joint anchors, several joints in one body, ball joints, servos with
// gear and ref, located warnings and errors, cylinders that touch as cylinders; and the joint
// springs, velocity servos and cylinder contact it brings to the engine, against central
// differences
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <string>

#include "engine/articulation/rigid_queries.h"
#include "engine/io/mjcf.h"
#include "engine/io/mujoco_dynamics.h"
#include "tests/engine/articulation/step_check.h"

using namespace adj;

namespace {

const std::string kData = std::string(ADJ_TEST_DATA) + "/mjcf/";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool any_contains(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  for (const std::string& s : v)
    if (contains(s, a) && contains(s, b)) return true;
  return false;
}

}  // namespace

TEST_CASE("mjcf: classes, childclass, include, springs and servos in MuJoCo's conventions", "[rigid][mjcf]") {
  auto f = load_robot_file(kData + "servo_arm.xml");
  INFO(f.status().message());
  REQUIRE(f.is_ok());
  const RigidModelT<double>& m = f->model;
  // forearm has two joints: a massless "forearm/elbow" body, then "forearm"
  REQUIRE(m.body_count() == 3);
  CHECK(m.body_name[1] == "forearm/elbow");
  CHECK(m.body_name[2] == "forearm");
  CHECK(m.body_mass[1] == 0);
  CHECK(f->timestep == 0.005);
  CHECK(m.collider_count() == 1);  // the floor plane
  CHECK(m.collider_type[0] == 0);
  CHECK(m.collider_size[0].z == Approx(1.0));
  REQUIRE(f->layout.joints.size() == 3);
  CHECK(f->layout.joints[0].name == "shoulder");
  CHECK(f->layout.joints[0].ref == 0.3);
  CHECK(mujoco_qpos0(m, f->layout) == std::vector<double>{0.3, 0, 0});

  // passive: -damping qvel - stiffness (qpos - springref) with the classes' values
  // (stiff: k 3, springref 0.2; stiffer: k 7); actuators: position gear 2 kp 20, ctrl clamped
  // to the default ctrlrange [-1, 1]; velocity gear 0.5 kv 3; motor gear 4, ctrl in [-0.5, 0.5]
  auto d = mujoco_dynamics(m, f->layout, {0.1, -0.3, 0.2}, {0.4, -0.6, 0.9}, {1.5, 0.8, -2},
                           {.contact = false, .limits = false});
  INFO(d.status().message());
  REQUIRE(d.is_ok());
  CHECK(d->qfrc_passive[0] == Approx(-0.5 * 0.4 - 3 * (0.1 - 0.2)).epsilon(1e-12));
  CHECK(d->qfrc_passive[1] == Approx(-0.5 * -0.6 - 7 * (-0.3 - 0.2)).epsilon(1e-12));
  CHECK(d->qfrc_passive[2] == Approx(-0.5 * 0.9 - 3 * (0.2 - 0.2)).margin(1e-12));
  CHECK(d->qfrc_actuator[0] == Approx(2 * 20 * (1.0 - 2 * 0.1)).epsilon(1e-12));
  CHECK(d->qfrc_actuator[1] == Approx(0.5 * 3 * (0.8 - 0.5 * -0.6)).epsilon(1e-12));
  CHECK(d->qfrc_actuator[2] == Approx(4 * -0.5).epsilon(1e-12));
  // armature on the diagonal, a symmetric mass matrix
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) CHECK(d->qM[r * 3 + c] == Approx(d->qM[c * 3 + r]).epsilon(1e-12));

  // warnings name the file and line of what was skipped
  CHECK(any_contains(f->warnings, "servo_arm.xml:", "<sensor>"));
  CHECK(any_contains(f->warnings, "servo_arm.xml:", "<site name=\"tip\">"));
  CHECK(any_contains(f->warnings, "servo_arm.xml:", "<light>"));
}

TEST_CASE("mjcf: two joints in one body equal the same joints in two bodies", "[rigid][mjcf]") {
  auto one = load_robot_file(kData + "servo_arm.xml");
  auto two = load_robot_file(kData + "servo_arm_split.xml");
  INFO(one.status().message() << two.status().message());
  REQUIRE(one.is_ok());
  REQUIRE(two.is_ok());
  const std::vector<double> qpos{0.7, -0.4, 0.9}, qvel{0.3, 1.1, -0.8}, ctrl{0.2, -0.1, 0.3};
  auto a = mujoco_dynamics(one->model, one->layout, qpos, qvel, ctrl, {.contact = false, .limits = false});
  auto b = mujoco_dynamics(two->model, two->layout, qpos, qvel, ctrl, {.contact = false, .limits = false});
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  for (std::size_t i = 0; i < a->qM.size(); ++i) CHECK(a->qM[i] == Approx(b->qM[i]).epsilon(1e-12).margin(1e-14));
  for (std::size_t i = 0; i < a->qacc.size(); ++i) {
    CHECK(a->qfrc_bias[i] == Approx(b->qfrc_bias[i]).epsilon(1e-12).margin(1e-14));
    CHECK(a->qacc[i] == Approx(b->qacc[i]).epsilon(1e-12).margin(1e-14));
  }
}

TEST_CASE("mjcf: a ball joint above its body swings as a pendulum from the anchor", "[rigid][mjcf]") {
  auto f = load_robot_file(kData + "ball_pendulum.xml");
  INFO(f.status().message());
  REQUIRE(f.is_ok());
  // sphere r 0.1, 2 kg, 0.5 m below the anchor: I = 2/5 m r^2 + m L^2 about x and y
  const double ic = 0.4 * 2 * 0.01, il = ic + 2 * 0.25, th = 0.3;
  auto d = mujoco_dynamics(f->model, f->layout, {std::cos(th / 2), std::sin(th / 2), 0, 0}, {0.2, -0.1, 0.4}, {},
                           {.contact = false, .limits = false});
  INFO(d.status().message());
  REQUIRE(d.is_ok());
  REQUIRE(d->nq == 4);
  REQUIRE(d->nv == 3);
  CHECK(d->qM[0] == Approx(il).epsilon(1e-12));
  CHECK(d->qM[4] == Approx(il).epsilon(1e-12));
  CHECK(d->qM[8] == Approx(ic).epsilon(1e-12));
  CHECK(d->qfrc_passive[1] == Approx(0.01).epsilon(1e-12));
  // gravity about the tilt axis: m g L sin(th) (at zero velocity the bias is gravity only)
  auto s = mujoco_dynamics(f->model, f->layout, {std::cos(th / 2), std::sin(th / 2), 0, 0}, {0, 0, 0}, {},
                           {.contact = false, .limits = false});
  REQUIRE(s.is_ok());
  CHECK(s->qfrc_bias[0] == Approx(2 * 9.81 * 0.5 * std::sin(th)).epsilon(1e-12));
  CHECK(s->qfrc_bias[1] == Approx(0).margin(1e-12));
  CHECK(s->qfrc_bias[2] == Approx(0).margin(1e-12));
}

TEST_CASE("mjcf: load-time refusals name the file, line and element", "[rigid][mjcf]") {
  struct Case {
    const char* file;
    const char* element;
    const char* why;
  };
  const Case cases[] = {
      {"bad_quat.xml", "bad_quat.xml:3: <body name=\"b\">", "quat is zero"},
      {"bad_inertia.xml", "bad_inertia.xml:5: <inertial>", "A + B >= C"},
      {"bad_gain.xml", "bad_gain.xml:9: <position>", "kp and kv must be >= 0"},
      {"bad_joint.xml", "bad_joint.xml:4: <joint name=\"j\">", "\"screw\" is not supported"},
      {"missing.xml", "missing.xml", "no such file"},
      {"bad_xml.xml", "bad_xml.xml:4: not well-formed XML", "MISMATCHED_ELEMENT"},
  };
  for (const Case& c : cases) {
    RigidBuilder b;
    auto r = rigid_import_mjcf(kData + c.file, b);
    INFO(c.file << ": " << r.status().message());
    REQUIRE_FALSE(r.is_ok());
    CHECK(contains(r.status().message(), c.element));
    CHECK(contains(r.status().message(), c.why));
  }
}

TEST_CASE("joint springs and velocity servos: step gradients match central differences", "[rigid][mjcf][grad]") {
  auto f = load_robot_file(kData + "servo_arm.xml");
  REQUIRE(f.is_ok());
  RigidModelT<double> m = f->model;
  m.ground = false;
  m.collider_type.clear(), m.collider_pos.clear(), m.collider_rot.clear(), m.collider_size.clear();
  // the massless link between the forearm's two joints gets a little mass: the check also
  // differentiates by every body mass, and a mass of 0 - eps is no body
  m.body_mass[1] = 0.01;
  for (int i = 0; i < 3; ++i) m.body_inertia[1].m[i][i] = 1e-4;
  REQUIRE(m.joint_stiffness[0] == 3);
  REQUIRE(m.actuator_type[1] == RIGID_ACTUATOR_VELOCITY);
  std::mt19937 rng(5);
  StateT<double> s = adj::test::random_state(m, rng, 0.4, 1.0);
  ControlT<double> u = test::joint_control<double>({0.3, -0.2, 0.4});
  adj::test::check_step_gradients(m, s, u,
                                  {.dt = 1.0 / 240,
                                   .substeps = 2,
                                   .fd_eps = 1e-6,
                                   .fd_abs = 1e-6,
                                   .fd_rel = 1e-5,
                                   .rev_of_largest = 1e-12,
                                   .adj_rng = &rng,
                                   .contact_in_step = false});
}

TEST_CASE("mjcf: a cylinder touches as a cylinder: a puck rests on its face", "[rigid][mjcf][cylinder]") {
  auto f = load_robot_file(kData + "puck.xml");
  INFO(f.status().message());
  REQUIRE(f.is_ok());
  RigidModelT<double> m = f->model;
  REQUIRE(m.shape_count() == 1);
  CHECK(m.shape_type[0] == GEOM_MESH);
  // mass and inertia of the true cylinder: m = rho pi r^2 l, Izz = m r^2 / 2
  const double mass = 500 * std::numbers::pi * 0.04 * 0.05;
  CHECK(m.body_mass[0] == Approx(mass).epsilon(1e-12));
  CHECK(m.body_inertia[0].m[2][2] == Approx(mass * 0.04 / 2).epsilon(1e-12));
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = test::world(m);
  StateT<double> s = m.make_state(), next = s;
  ControlT<double> u = m.make_control();
  for (int t = 0; t < 480; ++t) {  // 2 s of frames of 1/240 s, 8 substeps each
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 240).is_ok());
    std::swap(s, next);
  }
  // the free joint's frame sits at the body's 0.1 m: its height is the offset from there
  const double z = 0.1 + s.joint_q[2];
  INFO("rest height " << z);
  CHECK(z > 0.015);
  CHECK(z < 0.026);
  CHECK(std::abs(s.joint_qd[2]) < 0.05);
}

TEST_CASE("mjcf: step gradients with a cylinder on the floor match central differences",
          "[rigid][mjcf][cylinder][grad]") {
  auto f = load_robot_file(kData + "puck.xml");
  REQUIRE(f.is_ok());
  const RigidModelT<double>& m = f->model;
  StateT<double> s = m.make_state();
  // tilted about x and y, its lower rim 5-10 mm into the floor, sliding and spinning
  const double a = 0.04, c = 0.03;
  rigid::quat<double> q = rigid::qmul(rigid::quat<double>(std::cos(a), std::sin(a), 0, 0),
                                      rigid::quat<double>(std::cos(c), 0, std::sin(c), 0));
  const double qs[7] = {0.01, -0.02, -0.1 + 0.025 - 0.002, q.w, q.x, q.y, q.z};
  for (int i = 0; i < 7; ++i) s.joint_q[i] = qs[i];
  const double vs[6] = {0.3, -0.1, -0.05, 0.2, -0.3, 1.0};
  for (int i = 0; i < 6; ++i) s.joint_qd[i] = vs[i];
  RigidContactsT<double> contacts;
  ControlT<double> u = m.make_control();
  REQUIRE(rigid_contacts(m, s, u, contacts).is_ok());
  INFO(contacts.contact_count() << " contacts");
  REQUIRE(contacts.contact_count() > 0);
  std::mt19937 rng(3);
  adj::test::check_step_gradients(m, s, u,
                                  {.dt = 1.0 / 240,
                                   .substeps = 2,
                                   .fd_eps = 1e-6,
                                   .fd_abs = 1e-6,
                                   .fd_rel = 1e-4,
                                   .rev_of_largest = 1e-11,
                                   .adj_rng = &rng});
}

TEST_CASE("mjcf: orientations given as euler and as xyaxes agree", "[rigid][mjcf]") {
  auto a = load_robot_file(kData + "ball_pendulum.xml");
  auto b = load_robot_file(kData + "ball_pendulum_xyaxes.xml");
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  const mat33<double>& ra = a->model.joint_rot[0];
  const mat33<double>& rb = b->model.joint_rot[0];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(ra.m[i][j] == Approx(rb.m[i][j]).margin(1e-12));
  CHECK(ra.m[1][0] == Approx(1).epsilon(1e-12));  // the body's x axis is the world's y
}

TEST_CASE("mjcf: an inertia that violates A + B >= C is refused at its element, or balanced by compiler balanceinertia",
          "[rigid][mjcf]") {
  RigidBuilder rb;
  auto bad = rigid_import_mjcf(kData + "bad_inertia.xml", rb);
  REQUIRE_FALSE(bad.is_ok());
  INFO(bad.status().message());
  CHECK(contains(bad.status().message(), "bad_inertia.xml:5: <inertial>"));
  CHECK(contains(bad.status().message(), "A + B >= C"));
  CHECK(contains(bad.status().message(), "balanceinertia"));
  // a robot file read as the editor imports it (adjoint dynamics): one rule, repaired and said
  auto repaired = load_robot_file(kData + "bad_inertia.xml");
  INFO(repaired.status().message());
  REQUIRE(repaired.is_ok());
  CHECK(any_contains(repaired->warnings, "bad_inertia.xml:5: <inertial>", "balanced"));
  auto ok = load_robot_file(kData + "bad_inertia_balanced.xml");
  INFO(ok.status().message());
  REQUIRE(ok.is_ok());
  CHECK(any_contains(ok->warnings, "bad_inertia_balanced.xml:6: <inertial>", "balanced"));  // the same file, balanced
  const mat33<double>& I = ok->model.body_inertia[0];
  for (int k = 0; k < 3; ++k) CHECK(I.m[k][k] == Approx(0.7 / 3).epsilon(1e-12));
  CHECK(I.m[0][1] == 0);
}

TEST_CASE("mjcf: everything the engine does not simulate is named in a warning, with file, line and why",
          "[rigid][mjcf][fidelity]") {
  RigidBuilder b;
  auto r = rigid_import_mjcf(kData + "unsimulated.xml", b);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  const auto& w = r->warnings;
  for (const std::string& s : w) UNSCOPED_INFO(s);
  const std::string f = "unsimulated.xml:";
  // fluid forces (Gymnasium's swimmer: 31% from MuJoCo without them) and solver settings
  CHECK(any_contains(w, f + "3: <option>: density=\"4000\"", "fluid forces"));
  CHECK(any_contains(w, f + "3: <option>: viscosity=\"0.1\"", "fluid forces"));
  CHECK(any_contains(w, f + "3: <option>: iterations=\"50\"", "solver setting"));
  CHECK(any_contains(w, f + "3: <option>: impratio=\"10\"", "solver setting"));
  CHECK(any_contains(w, f + "10: <geom name=\"torso\">: fluidshape=\"ellipsoid\"", "fluid forces"));
  // per-geom contact parameters, from a default class (its line) and from the geom itself
  CHECK(any_contains(w, f + "5: <geom>: friction=\"1 0.5 0.5\"", "robot contact law"));
  CHECK(any_contains(w, f + "10: <geom name=\"torso\">: condim=\"1\"", "robot contact law"));
  // limits, bodies
  CHECK(any_contains(w, f + "9: <joint name=\"slide\">: solreflimit", "penalty spring"));
  CHECK(any_contains(w, f + "8: <body name=\"swimmer\">: gravcomp=\"1\"", "not simulated"));
  // whole elements: sites, tendons, equality constraints, sensors, contact exclusions
  CHECK(any_contains(w, f + "11: <site name=\"tip\">", "skipped"));
  CHECK(any_contains(w, f + "18: <tendon>", "tendons are not simulated"));
  CHECK(any_contains(w, f + "21: <equality>", "equality constraints are not simulated"));
  CHECK(any_contains(w, f + "24: <sensor>", "sensors are not simulated"));
  CHECK(any_contains(w, f + "27: <contact>", "contact pairs and exclusions are not read"));
  // what only changes the drawing is not a warning
  for (const std::string& s : w) {
    CHECK(!contains(s, "rgba"));
    CHECK(!contains(s, "material"));
    CHECK(!contains(s, "group="));
  }
}

TEST_CASE("mjcf: the initial qpos is the first keyframe's, else a custom init_qpos", "[rigid][mjcf]") {
  auto read = [](const std::string& file) {
    RigidBuilder b;
    auto imp = rigid_import_mjcf(kData + file, b);
    REQUIRE(imp);
    return imp->qpos0;
  };
  CHECK(read("init_qpos.xml") == std::vector<double>{0.25, -0.5});
  CHECK(read("keyframe.xml") == std::vector<double>{0.1, 0.2});
  CHECK(read("bent_knee.xml").empty());
}
