#include "engine/optim/rigid_loss.h"

#include <cmath>

#include "engine/articulation/rigid_adjoint.h"

namespace adj::optim {

using scene::LossKind;

template <class T, class S>
vec3<T> rigid_body_com(const RigidModelT<S>& m, const std::vector<T>& q, int body, std::vector<vec3<T>>* jac) {
  constexpr int N = 8;
  using D = Dual<T, N>;
  const int nq = m.q_count(), nv = m.dof_count();
  rigid::Work<D> w;
  w.resize(m.body_count(), nq, nv);
  rigid::Params<D> par = rigid::lift_params<D>(m);
  std::vector<D> qd(nv), qq(nq);
  if (jac) jac->assign(nq, vec3<T>{});
  vec3<T> c{};
  for (int lo = 0; lo < std::max(nq, 1); lo += N) {
    for (int k = 0; k < nq; ++k) qq[k] = (jac && k >= lo && k < lo + N) ? D::var(q[k], k - lo) : D(q[k]);
    rigid::kinematics(m, par, qq.data(), qd.data(), w);
    vec3<D> cd = w.p[body] + w.R[body] * lift<D>(m.body_com[body]);
    c = {cd.x.v, cd.y.v, cd.z.v};
    if (!jac) break;
    for (int k = lo; k < std::min(nq, lo + N); ++k) (*jac)[k] = {cd.x.d[k - lo], cd.y.d[k - lo], cd.z.d[k - lo]};
  }
  return c;
}

template <class T, class S>
RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd,
                                   int body) {
  rigid::Work<T> w;
  w.resize(m.body_count(), m.q_count(), m.dof_count());
  rigid::kinematics(m, rigid::lift_params<T>(m), q.data(), qd.data(), w);
  RigidBodyProbe<T> r;
  r.R = w.R[body];
  r.c = w.p[body] + w.R[body] * lift<T>(m.body_com[body]);
  r.vc = w.v[body].v + cross(w.v[body].w, r.c);
  r.w = w.v[body].w;
  return r;
}

template <class T, class S>
void rigid_body_probe_adjoint(const RigidModelT<S>& m, const std::vector<T>& q, const std::vector<T>& qd, int body,
                              const RigidBodyProbe<T>& adj, std::vector<T>& adj_q, std::vector<T>& adj_qd) {
  const int nb = m.body_count(), nv = m.dof_count();
  rigid::Work<T> w;
  w.resize(nb, m.q_count(), nv);
  const rigid::Params<T> par = rigid::lift_params<T>(m);
  rigid::kinematics(m, par, q.data(), qd.data(), w);
  rigid::AdjWork<T> g;
  g.reset(nb, nv);
  rigid::Params<T> adj_par;
  adj_par.body_mass.assign(std::size_t(nb), T(0));
  // vc = v.v + v.w x c, c = p + R com
  const rigid::svec<T>& v = w.v[body];
  const vec3<T> c = w.p[body] + w.R[body] * lift<T>(m.body_com[body]);
  g.v[body].v += adj.vc;
  g.v[body].w += cross(c, adj.vc) + adj.w;
  const vec3<T> gc = adj.c + cross(adj.vc, v.w);
  g.p[body] += gc;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g.R[body].m[i][j] += adj.R.m[i][j] + gc[i] * m.body_com[body][j];
  // the body and its ancestors, leaves to root (parents come before children)
  for (int i = body; i >= 0; --i)
    rigid::body_kinematics_adjoint(m, par, q.data(), qd.data(), w, i, adj_q.data(), adj_qd.data(), adj_par, g);
}

template <class S>
Result<RigidLossT<S>> RigidLossT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                            const RigidParametersT<S>& params) {
  RigidLossT loss;
  const RigidModelT<S>& m = cs.model.rigid;
  const std::string where = "task '" + task.name + "'";
  for (size_t i = 0; i < task.loss.size(); ++i) {
    const scene::LossTerm& l = task.loss[i];
    const std::string lw = where + ": loss[" + std::to_string(i) + "] (" + scene::to_string(l.kind) + ")";
    Term t;
    t.kind = l.kind;
    t.weight = S(l.weight);
    t.frame = l.step < 0 ? task.horizon : l.step;
    if (t.frame > task.horizon) return Status::error(lw + ": step is past the horizon");
    t.label = std::string(scene::to_string(l.kind)) + "[" + l.object + (l.body.empty() ? "" : "." + l.body) + "]";
    const scene::ObjectRange* r = cs.find(l.object);
    if (l.kind != LossKind::effort && (!r || r->kind != scene::ObjectKind::robot))
      return Status::error(lw + ": \"" + l.object + "\" is not a robot");
    auto find_body = [&](int& out) -> Status {
      for (int b = r->body_begin; b < r->body_end; ++b)
        if (m.body_name[b] == l.body) {
          out = b;
          return Status::ok();
        }
      return Status::error(lw + ": robot \"" + l.object + "\" has no body \"" + l.body + "\"");
    };
    // the term's target object: its point, and the label names it
    auto find_target = [&]() -> Status {
      const scene::ObjectRange* tg = cs.find(l.target);
      if (!tg || tg->kind != scene::ObjectKind::target)
        return Status::error(lw + ": \"" + l.target + "\" is not a target");
      t.target = {S(tg->target[0]), S(tg->target[1]), S(tg->target[2])};
      t.label += " -> " + l.target;
      return Status::ok();
    };
    switch (l.kind) {
      case LossKind::position: {
        if (Status s = find_body(t.body); !s) return s;
        if (Status s = find_target(); !s) return s;
        break;
      }
      case LossKind::distance: {
        if (Status s = find_body(t.body); !s) return s;
        double n = std::sqrt(l.axis[0] * l.axis[0] + l.axis[1] * l.axis[1] + l.axis[2] * l.axis[2]);
        if (!(n > 0)) return Status::error(lw + ": axis is zero");
        t.axis = {S(l.axis[0] / n), S(l.axis[1] / n), S(l.axis[2] / n)};
        break;
      }
      case LossKind::joint: {
        int b = -1;
        if (Status s = find_body(b); !s) return s;
        if (m.joint_type[b] != RIGID_JOINT_REVOLUTE && m.joint_type[b] != RIGID_JOINT_PRISMATIC)
          return Status::error(lw + ": the joint of \"" + l.body + "\" is not revolute or prismatic");
        t.body = m.joint_q_start[b];
        t.value = S(l.value);
        break;
      }
      case LossKind::cartpole:
        for (int b = r->body_begin; b < r->body_end; ++b) {
          if (m.joint_type[b] == RIGID_JOINT_PRISMATIC && t.x < 0)
            t.x = m.joint_q_start[b], t.xd = m.joint_dof_start[b];
          if (m.joint_type[b] == RIGID_JOINT_REVOLUTE && t.theta < 0)
            t.theta = m.joint_q_start[b], t.thetad = m.joint_dof_start[b];
        }
        if (t.x < 0 || t.theta < 0)
          return Status::error(lw + ": \"" + l.object + "\" needs a prismatic (cart) and a revolute (pole) joint");
        if (t.frame < 1) return Status::error(lw + ": step must be >= 1 (the cost runs over frames 1..step)");
        break;
      case LossKind::height:
      case LossKind::upright:
      case LossKind::speed:
      case LossKind::reach:
      case LossKind::forward_velocity:
      case LossKind::up_projection:
      case LossKind::heading:
      case LossKind::height_reward: {
        if (Status s = find_body(t.body); !s) return s;
        if (t.frame < 1) return Status::error(lw + ": step must be >= 1 (the cost runs over frames 1..step)");
        t.value = S(l.value);
        if (l.kind == LossKind::reach) {
          if (Status s = find_target(); !s) return s;
          break;
        }
        if (l.kind != LossKind::height && l.kind != LossKind::height_reward) {
          double n = std::sqrt(l.axis[0] * l.axis[0] + l.axis[1] * l.axis[1] + l.axis[2] * l.axis[2]);
          if (!(n > 0)) return Status::error(lw + ": axis is zero");
          t.axis = {S(l.axis[0] / n), S(l.axis[1] / n), S(l.axis[2] / n)};
        }
        if (l.kind == LossKind::heading) {  // the direction laid in the ground plane, unit
          scene::V3 d = l.direction;
          d[cs.up_axis] = 0;
          const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
          if (!(n > 0)) return Status::error(lw + ": direction has no part in the ground plane");
          t.target = {S(d[0] / n), S(d[1] / n), S(d[2] / n)};
        }
        t.lower = S(l.lower), t.upper = S(l.upper), t.above = S(l.above), t.below = S(l.below);
        t.quadratic = S(l.quadratic);
        break;
      }
      case LossKind::alive:
        if (t.frame < 1) return Status::error(lw + ": step must be >= 1 (the reward runs over frames 1..step)");
        t.value = S(l.value);
        break;
      case LossKind::effort:
        for (const ParamBlock& b : params.blocks())
          if (b.kind == scene::ParamKind::actuator_control && (l.object.empty() || b.object == l.object))
            t.blocks.push_back({b.offset, b.offset + b.count});
        // a policy task's effort measures the policy's outputs (its robot's actuator inputs): the
        // runner and the policy envs add it (action_effort())
        if (t.blocks.empty() && !task.has_policy)
          return Status::error(lw + ": no actuator_control parameters to measure");
        if (t.blocks.empty()) loss.action_effort_ += S(l.weight);
        break;
      default:
        return Status::error(lw +
                             ": not defined for robots (position, distance, joint, effort, cartpole, height, upright, "
                             "speed, reach, forward_velocity, up_projection, heading, height_reward, alive are)");
    }
    loss.terms_.push_back(t);
  }
  if (loss.terms_.empty()) return Status::error(where + ": no loss terms");
  loss.model_ = &cs.model.rigid;
  loss.up_ = cs.up_axis;
  return loss;
}

template <class S>
template <class T>
T RigidLossT<S>::running_cost(const Term& t, const std::vector<T>& q, const std::vector<T>& qd,
                              RigidBodyProbe<T>* grad) const {
  const RigidBodyProbe<T> p = rigid_body_probe(*model_, q, qd, t.body);
  const vec3<T> axis = lift<T>(t.axis);
  if (grad) *grad = RigidBodyProbe<T>{};
  switch (t.kind) {
    case LossKind::height: {
      const T d = T(t.value) - p.c[up_];
      if (!(d > T(0))) return T(0);
      if (grad) grad->c[up_] = T(-2) * d;
      return d * d;
    }
    case LossKind::upright: {
      // 1 - (R a).up = 1 - sum_j R[up][j] a_j
      if (grad)
        for (int j = 0; j < 3; ++j) grad->R.m[up_][j] = -axis[j];
      return T(1) - (p.R * axis)[up_];
    }
    case LossKind::speed: {
      const T d = dot(p.vc, axis) - T(t.value);
      if (grad) grad->vc = axis * (T(2) * d);
      return d * d;
    }
    case LossKind::reach: {
      const vec3<T> d = p.c - lift<T>(t.target);
      if (grad) grad->c = d * T(2);
      return dot(d, d);
    }
    // rewards: the cost is minus the reward
    case LossKind::forward_velocity:
      if (grad) grad->vc = axis * T(-1);
      return -dot(p.vc, axis);
    case LossKind::up_projection:
    case LossKind::heading: {
      // -(R a).e = -sum_ij e_i R[i][j] a_j (e: up, or the heading direction)
      vec3<T> e = lift<T>(t.target);
      if (t.kind == LossKind::up_projection) e = vec3<T>(), e[up_] = T(1);
      if (grad)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) grad->R.m[i][j] = -e[i] * axis[j];
      return -dot(p.R * axis, e);
    }
    case LossKind::height_reward: {
      // d = clip(h - value, lower, upper); reward above d (d >= 0), below d - quadratic d^2 (d < 0)
      const T h = p.c[up_] - T(t.value);
      const bool below = h<T(t.lower), above = h> T(t.upper);
      const T d = below ? T(t.lower) : above ? T(t.upper) : h;
      const bool clipped = below || above, pos = !(d < T(0));
      const T reward = pos ? T(t.above) * d : T(t.below) * d - T(t.quadratic) * d * d;
      if (grad && !clipped) grad->c[up_] = pos ? -T(t.above) : -(T(t.below) - T(2) * T(t.quadratic) * d);
      return -reward;
    }
    default:
      return T(0);
  }
}

template <class S>
void RigidLossT<S>::begin() {
  q_.clear();
  qd_.clear();
}

template <class S>
void RigidLossT<S>::observe(int t, const StateT<S>& s) {
  if (int(q_.size()) <= t) q_.resize(t + 1), qd_.resize(t + 1);
  q_[t] = s.joint_q;
  qd_[t] = s.joint_qd;
}

template <class S>
S RigidLossT<S>::value(const std::vector<S>& theta) {
  term_values_.assign(terms_.size(), S(0));
  S total = S(0);
  for (size_t k = 0; k < terms_.size(); ++k) {
    const Term& t = terms_[k];
    S v = S(0);
    switch (t.kind) {
      case LossKind::position: {
        vec3<S> d = rigid_body_com<S>(*model_, q_[t.frame], t.body, nullptr) - t.target;
        v = dot(d, d);
        break;
      }
      case LossKind::distance: {
        vec3<S> d = rigid_body_com<S>(*model_, q_[t.frame], t.body, nullptr) -
                    rigid_body_com<S>(*model_, q_[0], t.body, nullptr);
        v = -dot(d, t.axis);
        break;
      }
      case LossKind::joint: {
        S d = q_[t.frame][t.body] - t.value;
        v = d * d;
        break;
      }
      case LossKind::cartpole:
        for (int f = 1; f <= t.frame; ++f) {
          S th = q_[f][t.theta], thd = qd_[f][t.thetad], x = q_[f][t.x], xd = qd_[f][t.xd];
          v += S(2) * (S(1) - std::cos(th)) + S(0.1) * thd * thd + S(0.05) * x * x + S(0.1) * xd * xd;
        }
        v /= S(t.frame);
        break;
      case LossKind::effort:
        for (auto [a, b] : t.blocks)
          for (int i = a; i < b; ++i) v += theta[i] * theta[i];
        break;
      case LossKind::height:
      case LossKind::upright:
      case LossKind::speed:
      case LossKind::reach:
      case LossKind::forward_velocity:
      case LossKind::up_projection:
      case LossKind::heading:
      case LossKind::height_reward:
        for (int f = 1; f <= t.frame; ++f) v += running_cost<S>(t, q_[f], qd_[f], nullptr);
        v /= S(t.frame);
        break;
      case LossKind::alive:  // the mean over frames 1..step of a constant reward (no gradient)
        v = -t.value;
        break;
      default:
        break;
    }
    term_values_[k] = t.weight * v;
    total += term_values_[k];
  }
  return total;
}

template <class S>
template <class T>
void RigidLossT<S>::seed(int f, const StateT<T>& s, StateT<T>& adj) const {
  std::vector<vec3<T>> jac;
  for (const Term& t : terms_) {
    const T w = T(t.weight);
    switch (t.kind) {
      case LossKind::position:
        if (f == t.frame) {
          vec3<T> d = rigid_body_com(*model_, s.joint_q, t.body, &jac) - lift<T>(t.target);
          for (int k = 0; k < int(jac.size()); ++k) adj.joint_q[k] += w * T(2) * dot(d, jac[k]);
        }
        break;
      case LossKind::distance:
        if (f == t.frame || f == 0) {
          rigid_body_com(*model_, s.joint_q, t.body, &jac);
          T sign = T((f == t.frame ? -1 : 0) + (f == 0 ? 1 : 0));
          for (int k = 0; k < int(jac.size()); ++k) adj.joint_q[k] += w * sign * dot(lift<T>(t.axis), jac[k]);
        }
        break;
      case LossKind::joint:
        if (f == t.frame) adj.joint_q[t.body] += w * T(2) * (s.joint_q[t.body] - T(t.value));
        break;
      case LossKind::height:
      case LossKind::upright:
      case LossKind::speed:
      case LossKind::reach:
      case LossKind::forward_velocity:
      case LossKind::up_projection:
      case LossKind::heading:
      case LossKind::height_reward:
        if (f >= 1 && f <= t.frame) {
          RigidBodyProbe<T> g;
          running_cost(t, s.joint_q, s.joint_qd, &g);
          const T c = w / T(t.frame);
          g.c = g.c * c;
          g.vc = g.vc * c;
          for (auto& row : g.R.m)
            for (T& x : row) x *= c;
          rigid_body_probe_adjoint(*model_, s.joint_q, s.joint_qd, t.body, g, adj.joint_q, adj.joint_qd);
        }
        break;
      case LossKind::cartpole:
        if (f >= 1 && f <= t.frame) {
          const T c = w / T(t.frame);
          adj.joint_q[t.theta] += c * T(2) * rigid::rsin(s.joint_q[t.theta]);
          adj.joint_qd[t.thetad] += c * T(0.2) * s.joint_qd[t.thetad];
          adj.joint_q[t.x] += c * T(0.1) * s.joint_q[t.x];
          adj.joint_qd[t.xd] += c * T(0.2) * s.joint_qd[t.xd];
        }
        break;
      default:
        break;
    }
  }
}

template <class S>
void RigidLossT<S>::add_effort(const std::vector<S>& theta, std::vector<S>& grad) const {
  for (const Term& t : terms_)
    if (t.kind == LossKind::effort)
      for (auto [a, b] : t.blocks)
        for (int i = a; i < b; ++i) grad[i] += t.weight * S(2) * theta[i];
}

#define ADJ_RIGID_LOSS_INSTANTIATE(S, T)                                                                           \
  template void RigidLossT<S>::seed(int, const StateT<T>&, StateT<T>&) const;                                      \
  template RigidBodyProbe<T> rigid_body_probe(const RigidModelT<S>&, const std::vector<T>&, const std::vector<T>&, \
                                              int);                                                                \
  template void rigid_body_probe_adjoint(const RigidModelT<S>&, const std::vector<T>&, const std::vector<T>&, int, \
                                         const RigidBodyProbe<T>&, std::vector<T>&, std::vector<T>&);              \
  template vec3<T> rigid_body_com(const RigidModelT<S>&, const std::vector<T>&, int, std::vector<vec3<T>>*);

template class RigidLossT<float>;
template class RigidLossT<double>;
ADJ_RIGID_LOSS_INSTANTIATE(float, float)
ADJ_RIGID_LOSS_INSTANTIATE(double, double)
using TangentF = Dual<float, 1>;
using TangentD = Dual<double, 1>;
ADJ_RIGID_LOSS_INSTANTIATE(float, TangentF)
ADJ_RIGID_LOSS_INSTANTIATE(double, TangentD)

}  // namespace adj::optim
