// the shared robot files (../shared/robots, read in place) against MuJoCo 4.0's mj_forward
// at the states in mujoco_refs.json: mass matrix, bias, passive and actuator forces and
// qacc, in double, contact and limits off (as the references were taken)
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/io/mujoco_dynamics.h"
#include "engine/io/urdf.h"

using namespace adj;
using nlohmann::json;

namespace {

const std::string kRobots = ADJ_SHARED_ROBOTS;

std::vector<double> flat(const json& j) {
  std::vector<double> v;
  if (j.is_array() && !j.empty() && j[0].is_array()) {
    for (const json& r : j)
      for (const json& x : r) v.push_back(x.get<double>());
  } else {
    for (const json& x : j) v.push_back(x.get<double>());
  }
  return v;
}

// |a - b| <= tol * max(|b_i|, 1e-3 * max_j |b_j|): relative per entry, except entries a
// thousand times below the quantity's largest (round-off of zeros, e.g. 1e-18 in qM)
void match(const std::string& what, const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double big = 0;
  for (double x : want) big = std::max(big, std::abs(x));
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double scale = std::max(std::abs(want[i]), 1e-3 * big);
    double err = scale > 0 ? std::abs(got[i] - want[i]) / scale : std::abs(got[i]);
    worst = std::max(worst, err);
    INFO(what << "[" << i << "]: adjoint " << got[i] << ", mujoco " << want[i]);
    CHECK(err <= tol);
  }
  WARN(what << ": worst relative error " << worst);
}

// MuJoCo's answers, read in place; a missing file fails the test (it is the comparison)
json load_refs() {
  std::ifstream in(kRobots + "/mujoco_refs.json");
  INFO("reading " << kRobots << "/mujoco_refs.json");
  REQUIRE(in.good());
  return json::parse(in);
}

void check_model(const std::string& key, const json& ref) {
  INFO(key);
  auto file = load_robot_file(kRobots + "/" + key);
  INFO(file.status().message());
  REQUIRE(file.is_ok());
  for (const std::string& w : file->warnings) UNSCOPED_INFO("warning: " << w);
  auto d = mujoco_dynamics(file->model, file->layout, flat(ref["qpos"]), flat(ref["qvel"]), flat(ref["ctrl"]),
                           {.contact = false, .limits = false, .equality = false});
  INFO(d.status().message());
  REQUIRE(d.is_ok());
  CHECK(d->nq == ref["nq"].get<int>());
  CHECK(d->nv == ref["nv"].get<int>());
  CHECK(d->nu == ref["nu"].get<int>());
  const json& joints = ref["joints"];
  REQUIRE(d->joint_names.size() == joints.size());
  for (std::size_t k = 0; k < joints.size(); ++k) {
    CHECK(d->joint_names[k] == joints[k]["name"].get<std::string>());
    CHECK(d->joint_types[k] == joints[k]["type"].get<std::string>());
    CHECK(d->joint_qposadr[k] == joints[k]["qposadr"].get<int>());
    CHECK(d->joint_dofadr[k] == joints[k]["dofadr"].get<int>());
  }
  CHECK(std::abs(d->total_mass - ref["total_mass"].get<double>()) <= 1e-9 * ref["total_mass"].get<double>());
  const double tol = 1e-9;
  match(key + " qM", d->qM, flat(ref["qM"]), tol);
  match(key + " qfrc_bias", d->qfrc_bias, flat(ref["qfrc_bias"]), tol);
  match(key + " qfrc_passive", d->qfrc_passive, flat(ref["qfrc_passive"]), tol);
  match(key + " qfrc_actuator", d->qfrc_actuator, flat(ref["qfrc_actuator"]), tol);
  match(key + " qacc", d->qacc, flat(ref["qacc"]), tol);
}

// every model whose key starts with `prefix` ("urdf/", "mjcf/"); at least `at_least` of them
void check_models(const std::string& prefix, int at_least) {
  const json refs = load_refs();
  int n = 0;
  for (auto it = refs.begin(); it != refs.end(); ++it)
    if (it.key().rfind(prefix, 0) == 0) check_model(it.key(), it.value()), ++n;
  CHECK(n >= at_least);
}

}  // namespace

TEST_CASE("mujoco refs: every shared URDF's dynamics match MuJoCo 4.0 to 1e-9", "[rigid][mujoco]") {
  check_models("urdf/", 4);
}

TEST_CASE("mujoco refs: every shared MJCF model's dynamics match MuJoCo 4.0 to 1e-9", "[rigid][mujoco][mjcf]") {
  check_models("mjcf/", 5);
}

TEST_CASE("shared URDFs: the xArm6's link2 inertia is refused by the importer naming the link, balanced as a file read",
          "[rigid][mujoco]") {
  const std::string xarm = kRobots + "/urdf/xarm/xarm6_robot.urdf";
  INFO("the shared robot files are read in place: " << xarm);
  REQUIRE(std::filesystem::exists(xarm));
  RigidBuilder b;
  auto refused = rigid_import_urdf(xarm, b);
  REQUIRE_FALSE(refused.is_ok());
  INFO(refused.status().message());
  CHECK(refused.status().message().find("link \"link2\"") != std::string::npos);
  CHECK(refused.status().message().find("A + B >= C") != std::string::npos);
  // read by itself (adjoint dynamics), as the editor imports it: balanced, the warning names the link
  auto r = load_robot_file(xarm);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  bool said = false;
  for (const std::string& w : r->warnings)
    said = said || (w.find("link2") != std::string::npos && w.find("balance") != std::string::npos);
  CHECK(said);
}

TEST_CASE("URDF warnings name the joint: dynamics friction is not simulated", "[rigid][mujoco]") {
  const char* urdf = R"(<robot name="r">
    <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics damping="0.1" friction="0.5"/></joint>
  </robot>)";
  RigidBuilder b;
  auto r = rigid_import_urdf_string(urdf, "friction.urdf", b);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  // the <limit effort velocity> before it: named by file and line, as everything the engine does not simulate
  REQUIRE(r->warnings.size() == 2);
  CHECK(r->warnings[0].find("friction.urdf:5: <limit effort velocity> ignored") != std::string::npos);
  CHECK(r->warnings[1].find("friction.urdf: joint \"j\": dynamics friction ignored") != std::string::npos);
}

TEST_CASE("URDF cylinders: capsules by default, prisms that touch as cylinders on request", "[rigid][cylinder]") {
  const char* urdf = R"(<robot name="r">
    <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><geometry><cylinder radius="0.3" length="0.1"/></geometry></collision></link>
  </robot>)";
  for (int segments : {0, 24}) {
    RigidBuilder b;
    UrdfOptions opt;
    opt.cylinder_segments = segments;
    auto r = rigid_import_urdf_string(urdf, "wheel.urdf", b, opt);
    REQUIRE(r.is_ok());
    auto m = b.finalize<double>();
    REQUIRE(m.is_ok());
    REQUIRE(m->shape_count() == 1);
    CHECK(m->shape_type[0] == (segments ? GEOM_MESH : GEOM_CAPSULE));
    CHECK(m->body_mass[0] == 1);  // from <inertial>, not the mesh
    if (segments) CHECK(m->shape_hull_vertex_start[1] - m->shape_hull_vertex_start[0] >= 48);
  }
}
