// PolicyT's robot side (policy.h): the observations of a robot policy (its named terms, or
// the default joint observation, then the phases) and their adjoint through the bodies'
// kinematics (body_probe.h); in a coupled scene its terms may read a particle object's centre of
// mass and velocity too.
#include <cmath>

#include "engine/optim/body_probe.h"
#include "engine/optim/loss.h"
#include "engine/optim/policy.h"

namespace adj::optim {

template <class S>
Status PolicyT<S>::create_bodies(const scene::CompiledSceneT<S>& cs, const scene::Task& task, MlpForm form) {
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
  if (task.policy.observation
          .empty()) {  // per joint: sin/cos of a hinge, else its coordinates; then every dof velocity
    const RigidModelT<S>& m = cs.model.rigid;
    ObsTermT<S> joints;
    int size = 0;
    for (int j = r->body_begin; j < r->body_end; ++j) {
      int q0 = m.joint_q_start[j], nq = m.joint_q_start[j + 1] - q0;
      if (m.joint_type[j] == RIGID_JOINT_REVOLUTE) {
        joints.idx.push_back(q0), joints.mode.push_back(0), size += 2;
      } else {
        for (int k = 0; k < nq; ++k) joints.idx.push_back(q0 + k), joints.mode.push_back(1), ++size;
      }
    }
    for (int d = r->dof_begin; d < r->dof_end; ++d) joints.idx.push_back(d), joints.mode.push_back(2), ++size;
    ObsTermT<S>& t = p.add_term(joints_observation_row<S>(), size);
    t.idx = std::move(joints.idx);
    t.mode = std::move(joints.mode);
  } else if (Result<int> n = p.add_terms(cs, task, *r); !n) {
    return n.status();
  }
  p.add_term(phases_observation_row<S>(), task.policy.phases).body_clock = true;
  const int inputs = p.terms_.back().offset + p.terms_.back().size;
  std::vector<int> sizes{inputs};
  for (int h : task.policy.hidden) sizes.push_back(h);
  sizes.push_back(r->actuator_end - r->actuator_begin);
  p.mlp_ = MlpT<S>(std::move(sizes), S(task.policy.output_scale), false, form);
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
  for (std::size_t i = 0; i < task.policy.observation.size(); ++i) {
    const scene::ObservationTerm& o = task.policy.observation[i];
    const std::string ow =
        "task '" + task.name + "': policy.observation[" + std::to_string(i) + "] (" + scene::to_string(o.kind) + ")";
    const ObsRowT<S>* row = nullptr;
    for (const ObsRowT<S>& x : body_observation_rows<S>())
      if (std::string(x.name) == scene::to_string(o.kind)) row = &x;
    if (!row) return Status::error(ow + ": not an observation of a robot");
    ObsTermT<S>& t = add_term(*row, 0);
    t.scale = S(o.scale);
    if (Status st = row->create(ObsBuildT<S>{cs, r, ow}, o, t); !st) return st;
    reads_previous_action_ = reads_previous_action_ || o.kind == scene::ObservationKind::previous_action;
  }
  return terms_.empty() ? 0 : terms_.back().offset + terms_.back().size;
}

namespace {

using K = scene::ObservationKind;

// the term's body, by name, among the robot's
template <class S>
Status find_body(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  for (int k = b.robot.body_begin; k < b.robot.body_end; ++k)
    if (m.body_name[k] == o.body) t.body = k;
  if (t.body < 0) return Status::error(b.where + ": robot \"" + b.robot.name + "\" has no body \"" + o.body + "\"");
  return Status::ok();
}

template <class S>
Status unit(const ObsBuildT<S>& b, const scene::V3& a, const char* what, vec3<S>& out) {
  const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  if (!(n > 0)) return Status::error(b.where + ": " + what + " is zero");
  out = {S(a[0] / n), S(a[1] / n), S(a[2] / n)};
  return Status::ok();
}

// create: a body term of `size` entries
template <int size, class S>
Status create_body(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  t.size = size;
  return find_body(b, o, t);
}

template <class S>
Status create_up(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  if (Status s = create_body<1>(b, o, t); !s) return s;
  return unit(b, o.axis, "axis", t.axis);
}

template <class S>
Status create_heading(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  if (Status s = create_body<1>(b, o, t); !s) return s;
  scene::V3 d = o.direction;
  d[b.cs.up_axis] = 0;
  if (Status s = unit(b, d, "direction (in the ground plane)", t.dir); !s) return s;
  return unit(b, o.axis, "axis", t.axis);
}

template <class S>
Status create_orientation(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  if (Status s = create_body<4>(b, o, t); !s) return s;
  const RigidModelT<S>& m = b.cs.model.rigid;
  if (m.joint_type[t.body] != RIGID_JOINT_FREE)
    return Status::error(b.where + ": \"" + o.body + "\" has no free joint (its quaternion is the observation)");
  for (int k = 3; k < 7; ++k) t.idx.push_back(m.joint_q_start[t.body] + k);
  return Status::ok();
}

template <class S>
Status create_previous_action(const ObsBuildT<S>& b, const scene::ObservationTerm&, ObsTermT<S>& t) {
  t.size = b.robot.actuator_end - b.robot.actuator_begin;
  return Status::ok();
}

// the robot's hinge and slide joints, less the excluded bodies: their coordinates or dofs
template <class S>
Status create_joints(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  const scene::ObjectRange& r = b.robot;
  for (const std::string& x : o.exclude) {
    bool found = false;
    for (int k = r.body_begin; k < r.body_end; ++k) found = found || m.body_name[k] == x;
    if (!found) return Status::error(b.where + ": exclude: robot \"" + r.name + "\" has no body \"" + x + "\"");
  }
  auto excluded = [&](int k) {
    for (const std::string& x : o.exclude)
      if (m.body_name[k] == x) return true;
    return false;
  };
  for (int k = r.body_begin; k < r.body_end; ++k)
    if ((m.joint_type[k] == RIGID_JOINT_REVOLUTE || m.joint_type[k] == RIGID_JOINT_PRISMATIC) && !excluded(k))
      t.idx.push_back(o.kind == K::joint_positions ? m.joint_q_start[k] : m.joint_dof_start[k]);
  t.size = int(t.idx.size());
  return Status::ok();
}

// value and adjoint of the terms that read joint coordinates (q) or velocities (qd) as they are
template <bool qd, class S>
void coords_value(const PolicyT<S>&, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  const Array<S>& x = qd ? s.joint_qd : s.joint_q;
  for (std::size_t k = 0; k < o.idx.size(); ++k) out[k] = o.scale * x[o.idx[k]];
}
template <bool qd, class S>
void coords_adjoint(const PolicyT<S>&, const ObsTermT<S>& o, const StateT<S>*, const S* d, StateT<S>& adj,
                    std::vector<S>*) {
  Array<S>& x = qd ? adj.joint_qd : adj.joint_q;
  for (std::size_t k = 0; k < o.idx.size(); ++k) x[o.idx[k]] += o.scale * d[k];
}

template <class S>
void previous_action_value(const PolicyT<S>& p, const ObsTermT<S>& o, int, const StateT<S>&, const std::vector<S>* prev,
                           S* out) {
  for (int k = 0; k < p.output_size(); ++k) out[k] = prev ? o.scale * (*prev)[std::size_t(k)] : S(0);
}
template <class S>
void previous_action_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>*, const S* d, StateT<S>&,
                             std::vector<S>* d_prev) {
  if (d_prev)
    for (int k = 0; k < p.output_size(); ++k) (*d_prev)[std::size_t(k)] += o.scale * d[k];
}

// the body probe's terms: the value of the probe, and the probe's adjoint from d
template <class S>
RigidBodyProbe<S> probe(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>& s) {
  return rigid_body_probe(p.rigid_model(), s.joint_q, s.joint_qd, o.body);
}
template <class S>
void probe_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>& s, const RigidBodyProbe<S>& g,
                   StateT<S>& adj) {
  rigid_body_probe_adjoint(p.rigid_model(), s.joint_q, s.joint_qd, o.body, g, adj.joint_q, adj.joint_qd);
}

template <class S>
void height_value(const PolicyT<S>& p, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  out[0] = o.scale * probe(p, o, s).c[p.up_axis()];
}
template <class S>
void height_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>* s, const S* d, StateT<S>& adj,
                    std::vector<S>*) {
  RigidBodyProbe<S> g;
  g.c[p.up_axis()] = o.scale * d[0];
  probe_adjoint(p, o, *s, g, adj);
}

// the com velocity (angular: false) or the angular velocity, world
template <bool angular, class S>
void velocity_value(const PolicyT<S>& p, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  const RigidBodyProbe<S> x = probe(p, o, s);
  const vec3<S>& v = angular ? x.w : x.vc;
  for (int k = 0; k < 3; ++k) out[k] = o.scale * v[k];
}
template <bool angular, class S>
void velocity_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>* s, const S* d, StateT<S>& adj,
                      std::vector<S>*) {
  RigidBodyProbe<S> g;
  vec3<S>& v = angular ? g.w : g.vc;
  for (int k = 0; k < 3; ++k) v[k] = o.scale * d[k];
  probe_adjoint(p, o, *s, g, adj);
}

template <class S>
void up_value(const PolicyT<S>& p, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  out[0] = o.scale * (probe(p, o, s).R * o.axis)[p.up_axis()];
}
template <class S>
void up_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>* s, const S* d, StateT<S>& adj,
                std::vector<S>*) {
  RigidBodyProbe<S> g;  // (R a)[up] = sum_j R[up][j] a_j
  for (int j = 0; j < 3; ++j) g.R.m[p.up_axis()][j] = o.scale * d[0] * o.axis[j];
  probe_adjoint(p, o, *s, g, adj);
}

template <class S>
void heading_value(const PolicyT<S>& p, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  out[0] = o.scale * dot(probe(p, o, s).R * o.axis, o.dir);
}
template <class S>
void heading_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>* s, const S* d, StateT<S>& adj,
                     std::vector<S>*) {
  RigidBodyProbe<S> g;  // (R a).e = sum_ij e_i R[i][j] a_j
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) g.R.m[r][j] = o.scale * d[0] * o.dir[r] * o.axis[j];
  probe_adjoint(p, o, *s, g, adj);
}

// the default observation: per joint sin q, cos q (mode 0), q (1) or qd (2)
template <class S>
void joints_value(const PolicyT<S>&, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  int i = 0;
  for (std::size_t k = 0; k < o.idx.size(); ++k) {
    if (o.mode[k] == 0) {
      out[i++] = std::sin(s.joint_q[o.idx[k]]);
      out[i++] = std::cos(s.joint_q[o.idx[k]]);
    } else {
      out[i++] = o.mode[k] == 1 ? s.joint_q[o.idx[k]] : s.joint_qd[o.idx[k]];
    }
  }
}
template <class S>
void joints_adjoint(const PolicyT<S>&, const ObsTermT<S>& o, const StateT<S>* s, const S* d, StateT<S>& adj,
                    std::vector<S>*) {
  int i = 0;
  for (std::size_t k = 0; k < o.idx.size(); ++k) {
    const int x = o.idx[k];
    if (o.mode[k] == 0) {
      S q = s->joint_q[x];
      adj.joint_q[x] += d[i] * std::cos(q) - d[i + 1] * std::sin(q);
      i += 2;
    } else {
      (o.mode[k] == 1 ? adj.joint_q[x] : adj.joint_qd[x]) += d[i++];
    }
  }
}

// a particle object's centre of mass (object_position) or its velocity (object_velocity), over
// all its particles or those the term lists: sum_i w_i x_i, linear in the state
template <class S>
Status create_object(const ObsBuildT<S>& b, const scene::ObservationTerm& o, ObsTermT<S>& t) {
  const scene::ObjectRange* r = b.cs.find(o.object);
  if (!r || r->particle_end <= r->particle_begin)
    return Status::error(b.where + ": \"" + o.object + "\" is not an object with particles" +
                         (r ? "" : " (no object of that name)"));
  t.size = 3;
  return object_com_weights(b.cs.model, *r, t.idx, t.w, o.particles, b.where);
}
template <bool velocity, class S>
void object_value(const PolicyT<S>&, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  const auto& x = velocity ? s.particle_qd : s.particle_q;
  vec3<S> c;
  for (std::size_t k = 0; k < o.idx.size(); ++k) c += x[o.idx[k]] * o.w[k];
  for (int a = 0; a < 3; ++a) out[a] = o.scale * c[a];
}
template <bool velocity, class S>
void object_adjoint(const PolicyT<S>&, const ObsTermT<S>& o, const StateT<S>*, const S* d, StateT<S>& adj,
                    std::vector<S>*) {
  auto& x = velocity ? adj.particle_qd : adj.particle_q;
  const vec3<S> g(o.scale * d[0], o.scale * d[1], o.scale * d[2]);
  for (std::size_t k = 0; k < o.idx.size(); ++k) x[o.idx[k]] += g * o.w[k];
}

}  // namespace

template <class S>
const std::vector<ObsRowT<S>>& body_observation_rows() {
  static const std::vector<ObsRowT<S>> rows{
      {"height", &create_body<1, S>, &height_value<S>, &height_adjoint<S>},
      {"orientation", &create_orientation<S>, &coords_value<false, S>, &coords_adjoint<false, S>},
      {"velocity", &create_body<3, S>, &velocity_value<false, S>, &velocity_adjoint<false, S>},
      {"angular_velocity", &create_body<3, S>, &velocity_value<true, S>, &velocity_adjoint<true, S>},
      {"joint_positions", &create_joints<S>, &coords_value<false, S>, &coords_adjoint<false, S>},
      {"joint_velocities", &create_joints<S>, &coords_value<true, S>, &coords_adjoint<true, S>},
      {"up_projection", &create_up<S>, &up_value<S>, &up_adjoint<S>},
      {"heading_projection", &create_heading<S>, &heading_value<S>, &heading_adjoint<S>},
      {"previous_action", &create_previous_action<S>, &previous_action_value<S>, &previous_action_adjoint<S>},
      {"object_position", &create_object<S>, &object_value<false, S>, &object_adjoint<false, S>},
      {"object_velocity", &create_object<S>, &object_value<true, S>, &object_adjoint<true, S>},
  };
  return rows;
}

template <class S>
const ObsRowT<S>& joints_observation_row() {
  static const ObsRowT<S> row{"joints", nullptr, &joints_value<S>, &joints_adjoint<S>};
  return row;
}

template const std::vector<ObsRowT<float>>& body_observation_rows();
template const std::vector<ObsRowT<double>>& body_observation_rows();
template const ObsRowT<float>& joints_observation_row();
template const ObsRowT<double>& joints_observation_row();

#define ADJ_BODY_POLICY(S)                                                                                 \
  template Status PolicyT<S>::create_bodies(const scene::CompiledSceneT<S>&, const scene::Task&, MlpForm); \
  template Result<int> PolicyT<S>::add_terms(const scene::CompiledSceneT<S>&, const scene::Task&,          \
                                             const scene::ObjectRange&);

ADJ_BODY_POLICY(float)
ADJ_BODY_POLICY(double)

}  // namespace adj::optim
