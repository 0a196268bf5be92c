#include "app/cmd_dynamics.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/io/mujoco_dynamics.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::app {

namespace {

// "a,b,c" -> numbers; false (with the reason) on anything else
bool parse_numbers(const std::string& text, const char* what, std::vector<double>& out, std::string& why) {
  out.clear();
  if (text.empty()) return true;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    double x = std::strtod(item.c_str(), &end);
    while (end && (*end == ' ' || *end == '\t')) ++end;
    if (item.empty() || !end || *end != '\0') {
      why = std::string(what) + ": \"" + item + "\" is not a number";
      return false;
    }
    out.push_back(x);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return true;
}

// a scene's robots as one model (the scene's gravity and ground), laid out joint by joint
Result<RobotFileModel> load_scene_robots(const std::string& path) {
  auto doc = scene::load_scene(path);
  if (!doc) return doc.status();
  auto compiled = scene::compile<double>(*doc, std::filesystem::path(path).parent_path().string());
  if (!compiled) return Status::error(path + ": " + compiled.status().message());
  if (!compiled->has_robots()) return Status::error(path + ": the scene has no robots");
  RobotFileModel r;
  r.model = std::move(compiled->model.rigid);
  r.layout = mujoco_layout_of(r.model);
  r.timestep = double(compiled->frame_dt) / compiled->substeps;
  r.warnings = std::move(compiled->warnings);
  return r;
}

void print_vector(const char* name, const std::vector<double>& v) {
  std::printf("%-14s", name);
  for (double x : v) std::printf(" %14.8g", x);
  std::printf("\n");
}

void print_text(const std::string& path, const MujocoDynamics& d, const std::vector<double>& qpos,
                const std::vector<double>& qvel, const std::vector<double>& ctrl) {
  std::printf("%s: nq %d, nv %d, nu %d; mass %.10g kg (moving bodies); gravity %g %g %g m/s^2\n", path.c_str(), d.nq,
              d.nv, d.nu, d.total_mass, d.gravity[0], d.gravity[1], d.gravity[2]);
  std::printf("joints (MuJoCo order):\n");
  for (std::size_t k = 0; k < d.joint_names.size(); ++k)
    std::printf("  %-24s %-6s qpos %d, dof %d\n", d.joint_names[k].c_str(), d.joint_types[k].c_str(),
                d.joint_qposadr[k], d.joint_dofadr[k]);
  print_vector("qpos", qpos);
  print_vector("qvel", qvel);
  print_vector("ctrl", ctrl);
  std::printf("qM (%d x %d, armature included):\n", d.nv, d.nv);
  for (int r = 0; r < d.nv; ++r) {
    std::printf("%-14s", "");
    for (int c = 0; c < d.nv; ++c) std::printf(" %14.8g", d.qM[std::size_t(r) * d.nv + c]);
    std::printf("\n");
  }
  print_vector("qfrc_bias", d.qfrc_bias);
  print_vector("qfrc_passive", d.qfrc_passive);
  print_vector("qfrc_actuator", d.qfrc_actuator);
  print_vector("qfrc_limit", d.qfrc_limit);
  print_vector("qfrc_equality", d.qfrc_equality);
  print_vector("qfrc_contact", d.qfrc_contact);
  print_vector("qacc", d.qacc);
  std::printf(
      "(qfrc_limit, qfrc_equality and qfrc_contact are the engine's penalties, constraint forces in MuJoCo; "
      "--no-limits --no-equality --no-contact compare with mj_forward without constraints)\n");
}

nlohmann::json to_json(const std::string& path, const MujocoDynamics& d, const std::vector<double>& qpos,
                       const std::vector<double>& qvel, const std::vector<double>& ctrl,
                       const std::vector<std::string>& warnings) {
  nlohmann::json j;
  j["file"] = path;
  j["nq"] = d.nq, j["nv"] = d.nv, j["nu"] = d.nu;
  j["total_mass"] = d.total_mass;
  j["gravity"] = d.gravity;
  nlohmann::json joints = nlohmann::json::array();
  for (std::size_t k = 0; k < d.joint_names.size(); ++k)
    joints.push_back({{"name", d.joint_names[k]},
                      {"type", d.joint_types[k]},
                      {"qposadr", d.joint_qposadr[k]},
                      {"dofadr", d.joint_dofadr[k]}});
  j["joints"] = joints;
  j["qpos"] = qpos, j["qvel"] = qvel, j["ctrl"] = ctrl;
  nlohmann::json M = nlohmann::json::array();
  for (int r = 0; r < d.nv; ++r)
    M.push_back(
        std::vector<double>(d.qM.begin() + std::ptrdiff_t(r) * d.nv, d.qM.begin() + std::ptrdiff_t(r + 1) * d.nv));
  j["qM"] = M;
  j["qfrc_bias"] = d.qfrc_bias;
  j["qfrc_passive"] = d.qfrc_passive;
  j["qfrc_actuator"] = d.qfrc_actuator;
  j["qfrc_limit"] = d.qfrc_limit;
  j["qfrc_equality"] = d.qfrc_equality;
  j["qfrc_contact"] = d.qfrc_contact;
  j["qacc"] = d.qacc;
  j["warnings"] = warnings;
  return j;
}

}  // namespace

int run_dynamics(const DynamicsCmdOptions& o) {
  std::string ext = std::filesystem::path(o.model_path).extension().string();
  Result<RobotFileModel> file = ext == ".json" ? load_scene_robots(o.model_path) : load_robot_file(o.model_path);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.status().message().c_str());
    return 1;
  }
  for (const std::string& w : file->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::vector<double> qpos, qvel, ctrl;
  std::string why;
  if (!parse_numbers(o.qpos, "--qpos", qpos, why) || !parse_numbers(o.qvel, "--qvel", qvel, why) ||
      !parse_numbers(o.ctrl, "--ctrl", ctrl, why)) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  if (o.qpos.empty()) qpos = mujoco_qpos0(file->model, file->layout);
  if (o.qvel.empty()) qvel.assign(std::size_t(file->model.dof_count()), 0.0);
  if (o.ctrl.empty()) ctrl.assign(file->layout.actuators.size(), 0.0);
  auto d = mujoco_dynamics(file->model, file->layout, qpos, qvel, ctrl,
                           {.contact = o.contact, .limits = o.limits, .equality = o.equality});
  if (!d) {
    std::fprintf(stderr, "%s: %s\n", o.model_path.c_str(), d.status().message().c_str());
    return 1;
  }
  if (o.json)
    std::printf("%s\n", to_json(o.model_path, *d, qpos, qvel, ctrl, file->warnings).dump(1).c_str());
  else
    print_text(o.model_path, *d, qpos, qvel, ctrl);
  return 0;
}

}  // namespace adj::app
