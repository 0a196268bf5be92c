// PolicyT's robot side (policy.h): the observations of a robot policy (its named terms, or
// the default joint observation, then the phases) and their adjoint through the bodies'
// kinematics (body_probe.h).
#include <cmath>

#include "engine/optim/body_probe.h"
#include "engine/optim/policy.h"

namespace adj::optim {

template <class S>
Status PolicyT<S>::create_bodies(const scene::CompiledSceneT<S>& cs, const scene::Task& task, MlpActivation hidden) {
  PolicyT& p = *this;
  const std::string where = "task '" + task.name + "': policy";
  for (const scene::ParamSpec& ps : task.parameters)
    if (ps.kind == scene::ParamKind::policy && !ps.object.empty()) p.robot_ = ps.object;
  const scene::ObjectRange* r = nullptr;
  if (p.robot_.empty()) {
    for (const scene::ObjectRange& o : cs.objects)
      if (o.kind == scene::ObjectKind::robot) {
        r = &o;
        break;
      }
  } else {
    r = cs.find(p.robot_);
  }
  if (!r || r->kind != scene::ObjectKind::robot) return Status::error(where + ": no robot to drive");
  p.robot_ = r->name;
  if (r->actuator_end <= r->actuator_begin)
    return Status::error(where + ": robot \"" + r->name + "\" has no actuators");
  const RigidModelT<S>& m = cs.model.rigid;
  for (int j = r->body_begin; j < r->body_end; ++j) {
    int q0 = m.joint_q_start[j], nq = m.joint_q_start[j + 1] - q0;
    if (m.joint_type[j] == RIGID_JOINT_REVOLUTE)
      p.joint_obs_.push_back({0, q0});
    else
      for (int k = 0; k < nq; ++k) p.joint_obs_.push_back({1, q0 + k});
  }
  for (int d = r->dof_begin; d < r->dof_end; ++d) p.joint_obs_.push_back({2, d});
  int inputs = task.policy.phases;
  if (task.policy.observation.empty()) {
    for (const JointObs& o : p.joint_obs_) inputs += o.kind == 0 ? 2 : 1;
  } else {
    p.joint_obs_.clear();
    Result<int> n = p.add_terms(cs, task, *r);
    if (!n) return n.status();
    inputs += *n;
  }
  std::vector<int> sizes{inputs};
  for (int h : task.policy.hidden) sizes.push_back(h);
  sizes.push_back(r->actuator_end - r->actuator_begin);
  p.mlp_ = MlpT<S>(std::move(sizes), S(task.policy.output_scale), false, hidden);
  p.actuator_begin_ = r->actuator_begin;
  p.actuator_count_ = r->actuator_end - r->actuator_begin;
  p.phases_ = task.policy.phases;
  p.phase_period_ = S(task.policy.phase_period);
  p.frame_dt_ = cs.frame_dt;
  p.model_ = &cs.model.rigid;
  p.up_ = cs.up_axis;
  return Status::ok();
}

template <class S>
Result<int> PolicyT<S>::add_terms(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                  const scene::ObjectRange& r) {
  using K = scene::ObservationKind;
  const RigidModelT<S>& m = cs.model.rigid;
  int inputs = 0;
  for (std::size_t i = 0; i < task.policy.observation.size(); ++i) {
    const scene::ObservationTerm& o = task.policy.observation[i];
    const std::string ow =
        "task '" + task.name + "': policy.observation[" + std::to_string(i) + "] (" + scene::to_string(o.kind) + ")";
    Term t{o.kind, -1, {}, {}, {}, S(o.scale)};
    const bool joints = o.kind == K::joint_positions || o.kind == K::joint_velocities || o.kind == K::previous_action;
    for (int b = r.body_begin; b < r.body_end && !joints; ++b)
      if (m.body_name[b] == o.body) t.body = b;
    if (!joints && t.body < 0) return Status::error(ow + ": robot \"" + r.name + "\" has no body \"" + o.body + "\"");
    auto unit = [&](const scene::V3& a, const char* what, vec3<S>& out) -> Status {
      const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
      if (!(n > 0)) return Status::error(ow + ": " + what + " is zero");
      out = {S(a[0] / n), S(a[1] / n), S(a[2] / n)};
      return Status::ok();
    };
    int size = 1;
    switch (o.kind) {
      case K::height:
      case K::up_projection:
        break;
      case K::heading_projection: {
        scene::V3 d = o.direction;
        d[cs.up_axis] = 0;
        if (Status s = unit(d, "direction (in the ground plane)", t.dir); !s) return s;
        break;
      }
      case K::orientation:
        if (m.joint_type[t.body] != RIGID_JOINT_FREE)
          return Status::error(ow + ": \"" + o.body + "\" has no free joint (its quaternion is the observation)");
        for (int k = 3; k < 7; ++k) t.idx.push_back(m.joint_q_start[t.body] + k);
        size = 4;
        break;
      case K::velocity:
      case K::angular_velocity:
        size = 3;
        break;
      case K::previous_action:
        size = r.actuator_end - r.actuator_begin;
        reads_previous_action_ = true;
        break;
      case K::joint_positions:
      case K::joint_velocities: {
        for (const std::string& x : o.exclude) {
          bool found = false;
          for (int b = r.body_begin; b < r.body_end; ++b) found = found || m.body_name[b] == x;
          if (!found) return Status::error(ow + ": exclude: robot \"" + r.name + "\" has no body \"" + x + "\"");
        }
        auto excluded = [&](int b) {
          for (const std::string& x : o.exclude)
            if (m.body_name[b] == x) return true;
          return false;
        };
        for (int b = r.body_begin; b < r.body_end; ++b)
          if ((m.joint_type[b] == RIGID_JOINT_REVOLUTE || m.joint_type[b] == RIGID_JOINT_PRISMATIC) && !excluded(b))
            t.idx.push_back(o.kind == K::joint_positions ? m.joint_q_start[b] : m.joint_dof_start[b]);
        size = int(t.idx.size());
        break;
      }
    }
    if (o.kind == K::up_projection || o.kind == K::heading_projection)
      if (Status s = unit(o.axis, "axis", t.axis); !s) return s;
    terms_.push_back(std::move(t));
    inputs += size;
  }
  return inputs;
}

template <class S>
void PolicyT<S>::observe_bodies(int t, const StateT<S>& s, std::vector<S>& obs,
                                const std::vector<S>* prev_action) const {
  obs.clear();
  using K = scene::ObservationKind;
  for (const Term& o : terms_) {
    if (o.kind == K::previous_action) {
      for (int k = 0; k < output_size(); ++k)
        obs.push_back(prev_action ? o.scale * (*prev_action)[std::size_t(k)] : S(0));
      continue;
    }
    if (o.kind == K::orientation || o.kind == K::joint_positions || o.kind == K::joint_velocities) {
      const Array<S>& x = o.kind == K::joint_velocities ? s.joint_qd : s.joint_q;
      for (int k : o.idx) obs.push_back(o.scale * x[k]);
      continue;
    }
    const RigidBodyProbe<S> p = rigid_body_probe(*model_, s.joint_q, s.joint_qd, o.body);
    const vec3<S> ra = p.R * o.axis;
    switch (o.kind) {
      case K::height:
        obs.push_back(o.scale * p.c[up_]);
        break;
      case K::velocity:
      case K::angular_velocity: {
        const vec3<S>& v = o.kind == K::velocity ? p.vc : p.w;
        for (int k = 0; k < 3; ++k) obs.push_back(o.scale * v[k]);
        break;
      }
      case K::up_projection:
        obs.push_back(o.scale * ra[up_]);
        break;
      case K::heading_projection:
        obs.push_back(o.scale * dot(ra, o.dir));
        break;
      default:
        break;
    }
  }
  for (const JointObs& o : joint_obs_) {
    if (o.kind == 0) {
      obs.push_back(std::sin(s.joint_q[o.index]));
      obs.push_back(std::cos(s.joint_q[o.index]));
    } else {
      obs.push_back(o.kind == 1 ? s.joint_q[o.index] : s.joint_qd[o.index]);
    }
  }
  const double two_pi = 6.283185307179586;
  for (int k = 0; k < phases_; ++k)
    obs.push_back(S(std::sin(two_pi * double(t) * double(frame_dt_) / double(phase_period_) + two_pi * k / phases_)));
}

template <class S>
void PolicyT<S>::observe_adjoint(const StateT<S>& s, const std::vector<S>& d, StateT<S>& adj,
                                 std::vector<S>* d_prev_action) const {
  if (!drives_bodies()) {  // the particles' observations are linear in the state
    observe_adjoint(d, adj);
    return;
  }
  size_t i = 0;
  using K = scene::ObservationKind;
  for (const Term& o : terms_) {
    if (o.kind == K::previous_action) {
      for (int k = 0; k < output_size(); ++k, ++i)
        if (d_prev_action) (*d_prev_action)[std::size_t(k)] += o.scale * d[i];
      continue;
    }
    if (o.kind == K::orientation || o.kind == K::joint_positions || o.kind == K::joint_velocities) {
      Array<S>& x = o.kind == K::joint_velocities ? adj.joint_qd : adj.joint_q;
      for (int k : o.idx) x[k] += o.scale * d[i++];
      continue;
    }
    // the probe's adjoint, through the body's kinematics
    RigidBodyProbe<S> g;
    switch (o.kind) {
      case K::height:
        g.c[up_] = o.scale * d[i++];
        break;
      case K::velocity:
      case K::angular_velocity: {
        vec3<S>& v = o.kind == K::velocity ? g.vc : g.w;
        for (int k = 0; k < 3; ++k) v[k] = o.scale * d[i++];
        break;
      }
      case K::up_projection:  // (R a)[up] = sum_j R[up][j] a_j
        for (int j = 0; j < 3; ++j) g.R.m[up_][j] = o.scale * d[i] * o.axis[j];
        ++i;
        break;
      case K::heading_projection:  // (R a).e = sum_ij e_i R[i][j] a_j
        for (int r = 0; r < 3; ++r)
          for (int j = 0; j < 3; ++j) g.R.m[r][j] = o.scale * d[i] * o.dir[r] * o.axis[j];
        ++i;
        break;
      default:
        break;
    }
    rigid_body_probe_adjoint(*model_, s.joint_q, s.joint_qd, o.body, g, adj.joint_q, adj.joint_qd);
  }
  for (const JointObs& o : joint_obs_) {
    if (o.kind == 0) {
      S q = s.joint_q[o.index];
      adj.joint_q[o.index] += d[i] * std::cos(q) - d[i + 1] * std::sin(q);
      i += 2;
    } else {
      (o.kind == 1 ? adj.joint_q[o.index] : adj.joint_qd[o.index]) += d[i++];
    }
  }
}

#define ADJ_BODY_POLICY(S)                                                                                       \
  template Status PolicyT<S>::create_bodies(const scene::CompiledSceneT<S>&, const scene::Task&, MlpActivation); \
  template Result<int> PolicyT<S>::add_terms(const scene::CompiledSceneT<S>&, const scene::Task&,                \
                                             const scene::ObjectRange&);                                         \
  template void PolicyT<S>::observe_bodies(int, const StateT<S>&, std::vector<S>&, const std::vector<S>*) const; \
  template void PolicyT<S>::observe_adjoint(const StateT<S>&, const std::vector<S>&, StateT<S>&, std::vector<S>*) const;
ADJ_BODY_POLICY(float)
ADJ_BODY_POLICY(double)

}  // namespace adj::optim
