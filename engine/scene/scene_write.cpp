// Scene -> JSON text (keys in a fixed order) and the atomic save
#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "engine/scene/scene_json.h"
#include "engine/scene/scene_json_detail.h"

namespace adj::scene {

namespace json_detail {
ojson v3(const V3& v) { return ojson::array({v[0], v[1], v[2]}); }
}  // namespace json_detail

using namespace json_detail;

namespace {

// a cloth's or soft body's optimized initial state, when it has one
void write_particle_state(ojson& j, const std::vector<V3>& positions, const std::vector<V3>& velocities) {
  auto list = [](const std::vector<V3>& vs) {
    ojson a = ojson::array();
    for (const V3& v : vs) a.push_back(v3(v));
    return a;
  };
  if (!positions.empty()) j["particle_positions"] = list(positions);
  if (!velocities.empty()) j["particle_velocities"] = list(velocities);
}

ojson write_object(const Object& o) {
  ojson j;
  j["name"] = o.name;
  if (!o.visible) j["visible"] = false;
  switch (o.kind) {
    case ObjectKind::particles: {
      j["type"] = "particles";
      ojson ps = ojson::array();
      for (const Particle& p : o.particles.particles)
        ps.push_back(
            {{"position", v3(p.position)}, {"velocity", v3(p.velocity)}, {"mass", p.mass}, {"radius", p.radius}});
      j["particles"] = ps;
      ojson ss = ojson::array();
      for (const Spring& s : o.particles.springs)
        ss.push_back({{"i", s.i}, {"j", s.j}, {"ke", s.ke}, {"kd", s.kd}, {"rest", s.rest}, {"actuated", s.actuated}});
      j["springs"] = ss;
      break;
    }
    case ObjectKind::cloth: {
      const ClothObject& c = o.cloth;
      j["type"] = "cloth";
      if (!c.mesh.empty()) j["mesh"] = c.mesh;
      j["grid"] = {{"nx", c.nx}, {"ny", c.ny}, {"cell", c.cell}};
      j["position"] = v3(c.position);
      j["rotation"] = v3(c.rotation);
      j["scale"] = c.scale;
      j["velocity"] = v3(c.velocity);
      j["particle_mass"] = c.particle_mass;
      j["radius"] = c.radius;
      j["pin_left"] = c.pin_left;
      if (c.pin_right) j["pin_right"] = true;
      const ClothMaterialSpec& m = c.material;
      j["material"] = {{"tri_ke", m.tri_ke},   {"tri_ka", m.tri_ka}, {"tri_kd", m.tri_kd}, {"edge_ke", m.edge_ke},
                       {"edge_kd", m.edge_kd}, {"lift", m.lift},     {"drag", m.drag}};
      write_particle_state(j, c.particle_positions, c.particle_velocities);
      break;
    }
    case ObjectKind::soft: {
      const SoftObject& s = o.soft;
      j["type"] = "soft";
      if (!s.mesh.empty()) {
        j["mesh"] = s.mesh;
        j["cell"] = s.cell;
      }
      j["grid"] = {{"nx", s.nx}, {"ny", s.ny}, {"nz", s.nz}, {"cell", s.cell}};
      j["position"] = v3(s.position);
      j["rotation"] = v3(s.rotation);
      j["scale"] = s.scale;
      j["velocity"] = v3(s.velocity);
      j["radius"] = s.radius;
      j["pin_left"] = s.pin_left;
      if (s.actuated) j["actuated"] = true;
      const SoftMaterialSpec& m = s.material;
      j["material"] = {{"density", m.density}, {"mu", m.mu}, {"lambda", m.lambda}, {"kd", m.kd}};
      write_particle_state(j, s.particle_positions, s.particle_velocities);
      break;
    }
    case ObjectKind::collider: {
      const Collider& c = o.collider;
      j["type"] = c.kind == ColliderKind::mesh ? "mesh_collider" : to_string(c.kind);
      if (c.kind == ColliderKind::ground) {
        j["height"] = c.position[1];
        break;
      }
      j["position"] = v3(c.position);
      if (c.kind == ColliderKind::plane) j["normal"] = v3(c.normal);
      if (c.kind == ColliderKind::box || c.kind == ColliderKind::sphere || c.kind == ColliderKind::capsule)
        j["size"] = v3(c.size);
      if (c.kind != ColliderKind::plane) j["rotation"] = v3(c.rotation);
      if (c.kind == ColliderKind::mesh) {
        j["mesh"] = c.mesh;
        j["scale"] = c.scale;
      }
      break;
    }
    case ObjectKind::robot:
      return write_robot(o);
    case ObjectKind::target:
      j["type"] = "target";
      j["position"] = v3(o.target.position);
      j["radius"] = o.target.radius;
      if (!o.target.points.empty()) {
        ojson ps = ojson::array();
        for (const V3& q : o.target.points) ps.push_back(v3(q));
        j["points"] = ps;
      }
      break;
  }
  return j;
}

size_t value_count(const Task& t) {
  size_t n = 0;
  for (const ParamValues& v : t.values) n += v.values.size();
  return n;
}

ojson write_values(const std::vector<ParamValues>& values) {
  ojson vs = ojson::array();
  for (const ParamValues& v : values) {
    ojson vj{{"kind", to_string(v.kind)}};
    if (!v.object.empty()) vj["object"] = v.object;
    vj["values"] = v.values;
    vs.push_back(vj);
  }
  return vs;
}

// the keys a task's SHAC block sets (none: empty)
ojson write_shac(const ShacSpec& s) {
  ojson j = ojson::object();
  auto put = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  put("window", s.window);
  put("envs", s.envs);
  put("actor_lr", s.actor_lr);
  put("critic_lr", s.critic_lr);
  put("lr_decay", s.lr_decay);
  put("lr_end", s.lr_end);
  put("betas", s.betas);
  put("clip", s.clip);
  put("critic_clip", s.critic_clip);
  put("grad_bound", s.grad_bound);
  put("gamma", s.gamma);
  put("lambda", s.lambda);
  put("critic_hidden", s.critic_hidden);
  put("activation", s.activation);
  put("layer_norm", s.layer_norm);
  put("init", s.init);
  put("critic_iterations", s.critic_iterations);
  put("critic_minibatches", s.critic_minibatches);
  put("target_alpha", s.target_alpha);
  put("action_noise", s.action_noise);
  put("log_std_init", s.log_std_init);
  put("normalize_observations", s.normalize_observations);
  return j;
}

// the keys a task's AHAC block sets (none: empty)
ojson write_ahac(const AhacSpec& s) {
  ojson j = ojson::object();
  if (s.contact_threshold) j["contact_threshold"] = *s.contact_threshold;
  if (s.horizon_min) j["horizon_min"] = *s.horizon_min;
  if (s.dual_lr) j["dual_lr"] = *s.dual_lr;
  if (s.double_critic) j["double_critic"] = *s.double_critic;
  return j;
}

// sidecar: the file name its stored values go to instead (empty: inline)
ojson write_task(const Task& t, const std::string& sidecar = "") {
  ojson j;
  j["name"] = t.name;
  j["horizon"] = t.horizon;
  j["checkpoint_every"] = t.checkpoint_every;
  if (!t.termination.object.empty())
    j["termination"] = {
        {"object", t.termination.object}, {"body", t.termination.body}, {"height", t.termination.height}};
  j["seed"] = t.seed;
  ojson ps = ojson::array();
  for (const ParamSpec& p : t.parameters) {
    ojson pj{{"kind", to_string(p.kind)}};
    if (!p.object.empty()) pj["object"] = p.object;
    // per-element bounds are written narrowed by the block's, so that reading gives the same
    if (!p.lower_each.empty()) {
      std::vector<double> l = p.lower_each;
      for (double& x : l) x = std::max(x, p.lower);
      pj["lower"] = l;
    } else if (std::isfinite(p.lower)) {
      pj["lower"] = p.lower;
    }
    if (!p.upper_each.empty()) {
      std::vector<double> u = p.upper_each;
      for (double& x : u) x = std::min(x, p.upper);
      pj["upper"] = u;
    } else if (std::isfinite(p.upper)) {
      pj["upper"] = p.upper;
    }
    if (p.knots > 0) pj["knots"] = p.knots;
    ps.push_back(pj);
  }
  j["parameters"] = ps;
  if (!t.values.empty() && !sidecar.empty())
    j["values_file"] = sidecar;
  else if (!t.values.empty())
    j["values"] = write_values(t.values);
  ojson ls = ojson::array();
  for (const LossTerm& l : t.loss) {
    ojson lj{{"kind", to_string(l.kind)}};
    if (!l.object.empty()) lj["object"] = l.object;
    if (!l.target.empty()) lj["target"] = l.target;
    lj["step"] = l.step;
    lj["axis"] = v3(l.axis);
    lj["weight"] = l.weight;
    if (!l.body.empty()) lj["body"] = l.body;
    if (!l.particles.empty()) lj["particles"] = l.particles;
    if (l.value != 0.0 || l.kind == LossKind::joint || l.kind == LossKind::height || l.kind == LossKind::speed)
      lj["value"] = l.value;
    if (l.kind == LossKind::heading) lj["direction"] = v3(l.direction);
    if (l.kind == LossKind::height_reward) {
      if (std::isfinite(l.lower)) lj["lower"] = l.lower;
      if (std::isfinite(l.upper)) lj["upper"] = l.upper;
      lj["above"] = l.above;
      lj["below"] = l.below;
      lj["quadratic"] = l.quadratic;
    }
    ls.push_back(lj);
  }
  j["loss"] = ls;
  if (ojson sh = write_shac(t.shac); !sh.empty()) j["shac"] = sh;
  if (ojson ah = write_ahac(t.ahac); !ah.empty()) j["ahac"] = ah;
  j["optimizer"] = {{"kind", to_string(t.optimizer.kind)},
                    {"lr", t.optimizer.lr},
                    {"clip", t.optimizer.clip},
                    {"iterations", t.optimizer.iterations}};
  if (t.optimizer.backtrack) j["optimizer"]["backtrack"] = true;
  if (t.has_policy) {
    j["policy"] = {{"hidden", t.policy.hidden},
                   {"phases", t.policy.phases},
                   {"phase_period", t.policy.phase_period},
                   {"output_scale", t.policy.output_scale}};
    const PolicySpec defaults;
    if (!t.policy.action_scale.empty()) j["policy"]["action_scale"] = t.policy.action_scale;
    if (!t.policy.action_offset.empty()) j["policy"]["action_offset"] = t.policy.action_offset;
    if (t.policy.start_root_position_range > 0 || t.policy.start_root_angle_range > 0) {
      j["policy"]["start_root_position_range"] = t.policy.start_root_position_range;
      j["policy"]["start_root_angle_range"] = t.policy.start_root_angle_range;
    }
    if (!t.policy.observation.empty()) {
      ojson os = ojson::array();
      for (const ObservationTerm& o : t.policy.observation) {
        ojson oj{{"kind", to_string(o.kind)}};
        if (!o.body.empty()) oj["body"] = o.body;
        if (!o.object.empty()) oj["object"] = o.object;
        if (o.kind == ObservationKind::up_projection || o.kind == ObservationKind::heading_projection)
          oj["axis"] = v3(o.axis);
        if (o.kind == ObservationKind::heading_projection) oj["direction"] = v3(o.direction);
        if (o.scale != 1.0) oj["scale"] = o.scale;
        if (!o.exclude.empty()) oj["exclude"] = o.exclude;
        if (!o.particles.empty()) oj["particles"] = o.particles;
        os.push_back(oj);
      }
      j["policy"]["observation"] = os;
    }
    if (t.policy.start_q_range != defaults.start_q_range || t.policy.start_qd_range != defaults.start_qd_range) {
      j["policy"]["start_q_range"] = t.policy.start_q_range;
      j["policy"]["start_qd_range"] = t.policy.start_qd_range;
    }
  }
  return j;
}

}  // namespace

namespace {

// `sidecar` names the values file that tasks in `big` refer to (empty: every task inline)
std::string scene_json(const Scene& s, const std::string& sidecar, const std::vector<bool>& big) {
  ojson j;
  j["format"] = "adjoint-scene";
  j["version"] = k_format_version;
  j["name"] = s.name;
  const Settings& st = s.settings;
  const ContactSettings& c = st.contact;
  j["settings"] = {{"dt", st.dt},
                   {"substeps", st.substeps},
                   {"gravity", v3(st.gravity)},
                   {"damping", st.damping},
                   {"backend", st.backend},
                   {"contact",
                    {{"ke", c.ke},
                     {"kd", c.kd},
                     {"kf", c.kf},
                     {"mu", c.mu},
                     {"eps", c.eps},
                     {"particle_contact", c.particle_contact}}}};
  if (st.up != "y") j["settings"]["up"] = st.up;
  if (st.integrator != "explicit") j["settings"]["integrator"] = st.integrator;
  const RobotContactSettings& rc = st.robot_contact;
  if (!(rc == RobotContactSettings{})) {
    j["settings"]["robot_contact"] = {{"ke", rc.ke}, {"kd", rc.kd}, {"kf", rc.kf}, {"mu", rc.mu}, {"eps", rc.eps}};
    if (rc.law != "smooth") j["settings"]["robot_contact"]["law"] = rc.law;
  }
  if (st.randomize.active()) {
    ojson rj = ojson::object();
    for (const RandomQuantity& q : random_quantities()) {
      const RandomRange& rr = st.randomize.*q.range;
      if (!rr.active()) continue;
      rj[q.name] = rr.log_uniform ? ojson{{"range", {rr.lo, rr.hi}}, {"distribution", "log_uniform"}}
                                  : ojson::array({rr.lo, rr.hi});
    }
    j["settings"]["randomize"] = rj;
  }
  ojson objs = ojson::array();
  for (const Object& o : s.objects) objs.push_back(write_object(o));
  j["objects"] = objs;
  ojson tasks = ojson::array();
  for (size_t i = 0; i < s.tasks.size(); ++i)
    tasks.push_back(write_task(s.tasks[i], i < big.size() && big[i] ? sidecar : std::string()));
  j["tasks"] = tasks;
  return j.dump(2) + "\n";
}

// path.tmp-XXXX written and flushed; false (and nothing left behind) on failure
bool write_temp(const std::filesystem::path& target, const std::string& text, std::filesystem::path* tmp) {
  namespace fs = std::filesystem;
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  *tmp = dir / (target.filename().string() + ".tmp-" + std::to_string(rd() % 1000000));
  std::FILE* f = std::fopen(tmp->c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::error_code ec;
    fs::remove(*tmp, ec);
  }
  return ok;
}

}  // namespace

std::string to_json(const Scene& s) { return scene_json(s, "", {}); }

Status save_scene(const Scene& scene, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  // large stored values go to the sidecar (task names must tell its entries apart)
  std::vector<bool> big(scene.tasks.size(), false);
  bool any = false, unique = true;
  for (size_t i = 0; i < scene.tasks.size(); ++i) {
    big[i] = value_count(scene.tasks[i]) > k_inline_values;
    any = any || big[i];
    for (size_t k = 0; k < i; ++k) unique = unique && scene.tasks[k].name != scene.tasks[i].name;
  }
  if (!unique) any = false;
  const std::string sidecar = sidecar_name(target.filename().string());
  const std::string text = scene_json(scene, any ? sidecar : "", big);
  fs::path tmp, side_tmp;
  if (any) {
    ojson tasks = ojson::object();
    for (size_t i = 0; i < scene.tasks.size(); ++i)
      if (big[i]) tasks[scene.tasks[i].name] = write_values(scene.tasks[i].values);
    ojson side{{"format", "adjoint-values"}, {"version", 1}, {"tasks", tasks}};
    if (!write_temp(target.parent_path() / sidecar, side.dump() + "\n", &side_tmp))
      return Status::error(path + ": cannot write its values file " + sidecar + " (" + std::strerror(errno) +
                           "); the previous files are untouched");
  }
  if (!write_temp(target, text, &tmp)) {
    std::error_code ec;
    if (any) fs::remove(side_tmp, ec);
    return Status::error(path + ": cannot write (" + std::strerror(errno) + "); the previous file is untouched");
  }
  // the values file first: a scene file never names values that are not there yet
  std::error_code ec;
  if (any) fs::rename(side_tmp, target.parent_path() / sidecar, ec);
  if (!ec) fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fs::remove(side_tmp, ignored);
    return Status::error(path + ": cannot replace the file: " + ec.message());
  }
  return Status::ok();
}

}  // namespace adj::scene
