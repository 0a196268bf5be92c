#include "engine/optim/policy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <random>

#include "engine/optim/parameters.h"

namespace adj::optim {

template <class S>
Result<PolicyT<S>> PolicyT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task, MlpForm form) {
  PolicyT p;
  Status st = task_names_robot(cs, task) ? p.create_bodies(cs, task, form) : p.create_particles(cs, task);
  if (!st) return st;
  if (st = p.set_action_map(task); !st) return st;
  return p;
}

template <class S>
ObsTermT<S>& PolicyT<S>::add_term(const ObsRowT<S>& row, int size) {
  ObsTermT<S> t;
  t.row = &row;
  t.size = size;
  t.offset = terms_.empty() ? 0 : terms_.back().offset + terms_.back().size;
  terms_.push_back(std::move(t));
  return terms_.back();
}

template <class S>
Status PolicyT<S>::create_particles(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  PolicyT& p = *this;
  std::string where = "task '" + task.name + "': policy";
  const scene::PolicySpec& spec = task.policy;
  std::string object;
  for (const scene::ParamSpec& s : task.parameters)
    if (s.kind == scene::ParamKind::policy) object = s.object;
  const scene::ObjectRange* obj = nullptr;
  std::vector<int> particles;
  if (!object.empty()) {
    obj = cs.find(object);
    if (!obj) return Status::error(where + ": no object named '" + object + "'");
    for (int i = obj->particle_begin; i < obj->particle_end; ++i) particles.push_back(i);
  }
  for (int s : cs.actuated_springs)
    if (!obj || (s >= obj->spring_begin && s < obj->spring_end)) p.springs_.push_back(s);
  for (int t : cs.actuated_tets)
    if (!obj || (t >= obj->tet_begin && t < obj->tet_end)) p.tets_.push_back(t);
  if (p.springs_.empty() && p.tets_.empty()) return Status::error(where + ": no actuated springs or tets to drive");
  if (spec.phases < 0) return Status::error(where + ": phases must be >= 0");
  if (!(spec.phase_period > 0)) return Status::error(where + ": phase_period must be > 0");
  p.phases_ = spec.phases;
  p.phase_period_ = S(spec.phase_period);
  p.frame_dt_ = cs.frame_dt;
  int inputs = p.phases_ + 6 * int(particles.size());
  if (inputs < 1) return Status::error(where + ": no observations (phases = 0 and no object)");
  // the phases, then the object's state
  p.add_term(phases_observation_row<S>(), p.phases_);
  if (!particles.empty()) {
    p.add_term(particle_observation_row<S>(), 6 * int(particles.size())).idx = std::move(particles);
    p.observes_state_ = true;
  }
  std::vector<int> sizes{inputs};
  for (std::size_t l = 0; l < spec.hidden.size(); ++l) {
    if (spec.hidden[l] < 1) return Status::error(where + ": hidden[" + std::to_string(l) + "] must be >= 1");
    sizes.push_back(spec.hidden[l]);
  }
  sizes.push_back(int(p.springs_.size() + p.tets_.size()));
  p.mlp_ = MlpT<S>(std::move(sizes), S(spec.output_scale));
  return Status::ok();
}

template <class S>
Status PolicyT<S>::set_action_map(const scene::Task& task) {
  const int n = output_size();
  auto take = [&](const std::vector<double>& from, const char* key, std::vector<S>& to) {
    if (from.empty()) return Status::ok();
    if (int(from.size()) != n)
      return Status::error("task '" + task.name + "': policy." + key + " has " + std::to_string(from.size()) +
                           " entries; the policy has " + std::to_string(n) + " outputs (" +
                           (drives_bodies() ? "robot \"" + robot_ + "\"'s actuators" : "actuated springs and tets") +
                           "), one entry each");
    to.assign(from.begin(), from.end());
    return Status::ok();
  };
  if (Status st = take(task.policy.action_scale, "action_scale", action_scale_); !st) return st;
  return take(task.policy.action_offset, "action_offset", action_offset_);
}

template <class S>
void PolicyT<S>::set_normalizer(std::vector<S> mean, std::vector<S> std) {
  assert(mean.size() == std.size() && (mean.empty() || int(mean.size()) == input_size()) &&
         "normalizer sized for another policy");
  norm_mean_ = std::move(mean);
  norm_inv_std_.clear();
  for (S x : std) norm_inv_std_.push_back(S(1) / std::max(x, S(1e-6)));
}

template <class S>
void PolicyT<S>::observe(int t, const StateT<S>& s, std::vector<S>& obs, const std::vector<S>* prev_action) const {
  obs.assign(std::size_t(input_size()), S(0));
  for (const ObsTermT<S>& o : terms_) o.row->value(*this, o, t, s, prev_action, obs.data() + o.offset);
  if (norm_mean_.empty()) return;
  for (const ObsTermT<S>& o : terms_)
    if (o.row->normalized)
      for (int k = o.offset; k < o.offset + o.size; ++k) obs[k] = (obs[k] - norm_mean_[k]) * norm_inv_std_[k];
}

template <class S>
void PolicyT<S>::observe_raw(int t, const StateT<S>& s, std::vector<S>& obs) const {
  obs.assign(std::size_t(input_size()), S(0));
  for (const ObsTermT<S>& o : terms_) o.row->value(*this, o, t, s, nullptr, obs.data() + o.offset);
}

template <class S>
void PolicyT<S>::observe_adjoint(const StateT<S>& s, const std::vector<S>& d, StateT<S>& adj,
                                 std::vector<S>* d_prev_action) const {
  for (const ObsTermT<S>& o : terms_)
    if (o.row->adjoint) o.row->adjoint(*this, o, &s, d.data() + o.offset, adj, d_prev_action);
}

namespace {

// sin(2 pi time / period + 2 pi k / phases), k = 0..phases-1
template <class S>
void phases_value(const PolicyT<S>& p, const ObsTermT<S>& o, int t, const StateT<S>&, const std::vector<S>*, S* out) {
  const double two_pi = 6.283185307179586;
  const int n = p.phases();
  const double period = double(p.phase_period());
  if (o.body_clock) {  // the robots' order: (2 pi t) dt
    for (int k = 0; k < n; ++k)
      out[k] = S(std::sin(two_pi * double(t) * double(p.frame_dt()) / period + two_pi * k / n));
    return;
  }
  const double time = double(t) * double(p.frame_dt());
  for (int k = 0; k < n; ++k) out[k] = S(std::sin(two_pi * time / period + two_pi * k / n));
}

// per particle of the object: x_i - c, v_i - v_c (plain means)
template <class S>
void particle_value(const PolicyT<S>&, const ObsTermT<S>& o, int, const StateT<S>& s, const std::vector<S>*, S* out) {
  vec3<S> c, vc;
  for (int i : o.idx) {
    c += s.particle_q[i];
    vc += s.particle_qd[i];
  }
  S inv = S(1) / S(o.idx.size());
  c = c * inv;
  vc = vc * inv;
  for (std::size_t k = 0; k < o.idx.size(); ++k) {
    vec3<S> x = s.particle_q[o.idx[k]] - c, v = s.particle_qd[o.idx[k]] - vc;
    for (int a = 0; a < 3; ++a) {
      out[6 * k + a] = x[a];
      out[6 * k + 3 + a] = v[a];
    }
  }
}

// linear in the state: obs_k = (x_k - mean(x) - m_k) / s_k gives dL/dx_j = g_j / s_j - mean(g / s)
template <class S>
void particle_adjoint(const PolicyT<S>& p, const ObsTermT<S>& o, const StateT<S>*, const S* d, StateT<S>& adj,
                      std::vector<S>*) {
  std::vector<S> scaled;
  const S* g = d;
  if (!p.norm_inv_std().empty()) {
    scaled.assign(d, d + o.size);
    for (int k = 0; k < o.size; ++k) scaled[k] *= p.norm_inv_std()[std::size_t(o.offset + k)];
    g = scaled.data();
  }
  vec3<S> mq, mv;
  for (std::size_t k = 0; k < o.idx.size(); ++k) {
    mq += vec3<S>(g[6 * k], g[6 * k + 1], g[6 * k + 2]);
    mv += vec3<S>(g[6 * k + 3], g[6 * k + 4], g[6 * k + 5]);
  }
  S inv = S(1) / S(o.idx.size());
  mq = mq * inv;
  mv = mv * inv;
  for (std::size_t k = 0; k < o.idx.size(); ++k) {
    adj.particle_q[o.idx[k]] += vec3<S>(g[6 * k], g[6 * k + 1], g[6 * k + 2]) - mq;
    adj.particle_qd[o.idx[k]] += vec3<S>(g[6 * k + 3], g[6 * k + 4], g[6 * k + 5]) - mv;
  }
}

}  // namespace

template <class S>
const ObsRowT<S>& phases_observation_row() {
  static const ObsRowT<S> row{"phases", nullptr, &phases_value<S>, nullptr};
  return row;
}

template <class S>
const ObsRowT<S>& particle_observation_row() {
  static const ObsRowT<S> row{"particle_state", nullptr, &particle_value<S>, &particle_adjoint<S>, true};
  return row;
}

template const ObsRowT<float>& phases_observation_row();
template const ObsRowT<double>& phases_observation_row();
template const ObsRowT<float>& particle_observation_row();
template const ObsRowT<double>& particle_observation_row();

template class PolicyT<float>;
template class PolicyT<double>;

}  // namespace adj::optim
