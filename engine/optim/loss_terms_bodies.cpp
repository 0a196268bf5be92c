// The loss rows of body terms (loss.h): a robot body's centre of mass, a joint coordinate,
// the cartpole cost, a walker's running costs and rewards, and the effort of actuator inputs.
// Values read the joints observe() recorded; seeds run on the model's scalar and on tangent
// numbers (the H v products of engine/optim/pods.h).
#include <cassert>
#include <cmath>
#include <type_traits>

#include "engine/articulation/rigid_adjoint.h"
#include "engine/optim/loss.h"

namespace adj::optim {

using scene::LossKind;

namespace {

template <class S>
using Term = LossTermT<S>;

// the joints of frame t a seed reads: the state given, else what observe() recorded
template <class S, class T>
const std::vector<T>& joints_q(const LossT<S>& l, int t, const SeedFramesT<T>& f) {
  if constexpr (std::is_same_v<S, T>)
    if (!f.at) return l.frame_q(t);
  assert(f.at && "a tangent seed of body terms needs the state");
  return f.at->joint_q;
}
template <class S, class T>
const std::vector<T>& joints_qd(const LossT<S>& l, int t, const SeedFramesT<T>& f) {
  if constexpr (std::is_same_v<S, T>)
    if (!f.at) return l.frame_qd(t);
  assert(f.at && "a tangent seed of body terms needs the state");
  return f.at->joint_qd;
}

// create helpers: the term's body of its robot, its target, its unit axis
template <class S>
Status find_body(const LossBuildT<S>& b, const scene::LossTerm& spec, int& out) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  for (int i = b.object->body_begin; i < b.object->body_end; ++i)
    if (m.body_name[i] == spec.body) {
      out = i;
      return Status::ok();
    }
  return Status::error(b.where + ": robot \"" + spec.object + "\" has no body \"" + spec.body + "\"");
}

template <class S>
Status find_target(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  const scene::ObjectRange* tg = b.cs.find(spec.target);
  if (!tg || tg->kind != scene::ObjectKind::target)
    return Status::error(b.where + ": \"" + spec.target + "\" is not a target");
  t.target = {S(tg->target[0]), S(tg->target[1]), S(tg->target[2])};
  t.label += " -> " + spec.target;
  return Status::ok();
}

template <class S>
Status unit_axis(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  double n = std::sqrt(spec.axis[0] * spec.axis[0] + spec.axis[1] * spec.axis[1] + spec.axis[2] * spec.axis[2]);
  if (!(n > 0)) return Status::error(b.where + ": axis is zero");
  t.axis = {S(spec.axis[0] / n), S(spec.axis[1] / n), S(spec.axis[2] / n)};
  return Status::ok();
}

template <class S>
Status running_frames(const LossBuildT<S>& b, const Term<S>& t, const char* what) {
  if (t.frame < 1) return Status::error(b.where + ": step must be >= 1 (the " + what + " runs over frames 1..step)");
  return Status::ok();
}

// position: |c_b(step) - target|^2
template <class S>
Status create_position(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = find_body(b, spec, t.body); !s) return s;
  return find_target(b, spec, t);
}
template <class S>
S value_position(const LossT<S>& l, const Term<S>& t, const std::vector<S>&) {
  vec3<S> d = rigid_body_com<S>(l.rigid_model(), l.frame_q(t.frame), t.body, nullptr) - t.target;
  return dot(d, d);
}
template <class S, class T>
void seed_position(const LossT<S>& l, const Term<S>& t, int f, const SeedFramesT<T>& fr, StateT<T>& adj) {
  if (f != t.frame) return;
  std::vector<vec3<T>> jac;
  vec3<T> d = rigid_body_com(l.rigid_model(), joints_q(l, f, fr), t.body, &jac) - lift<T>(t.target);
  for (int k = 0; k < int(jac.size()); ++k) adj.joint_q[k] += T(t.weight) * T(2) * dot(d, jac[k]);
}

// distance: -dot(c_b(step) - c_b(0), axis)
template <class S>
Status create_distance(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = find_body(b, spec, t.body); !s) return s;
  return unit_axis(b, spec, t);
}
template <class S>
S value_distance(const LossT<S>& l, const Term<S>& t, const std::vector<S>&) {
  vec3<S> d = rigid_body_com<S>(l.rigid_model(), l.frame_q(t.frame), t.body, nullptr) -
              rigid_body_com<S>(l.rigid_model(), l.frame_q(0), t.body, nullptr);
  return -dot(d, t.axis);
}
template <class S, class T>
void seed_distance(const LossT<S>& l, const Term<S>& t, int f, const SeedFramesT<T>& fr, StateT<T>& adj) {
  if (f != t.frame && f != 0) return;
  std::vector<vec3<T>> jac;
  rigid_body_com(l.rigid_model(), joints_q(l, f, fr), t.body, &jac);
  T sign = T((f == t.frame ? -1 : 0) + (f == 0 ? 1 : 0));
  for (int k = 0; k < int(jac.size()); ++k) adj.joint_q[k] += T(t.weight) * sign * dot(lift<T>(t.axis), jac[k]);
}

// joint: (q_b(step) - value)^2
template <class S>
Status create_joint(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  int body = -1;
  if (Status s = find_body(b, spec, body); !s) return s;
  if (m.joint_type[body] != RIGID_JOINT_REVOLUTE && m.joint_type[body] != RIGID_JOINT_PRISMATIC)
    return Status::error(b.where + ": the joint of \"" + spec.body + "\" is not revolute or prismatic");
  t.body = m.joint_q_start[body];
  t.value = S(spec.value);
  return Status::ok();
}
template <class S>
S value_joint(const LossT<S>& l, const Term<S>& t, const std::vector<S>&) {
  S d = l.frame_q(t.frame)[t.body] - t.value;
  return d * d;
}
template <class S, class T>
void seed_joint(const LossT<S>& l, const Term<S>& t, int f, const SeedFramesT<T>& fr, StateT<T>& adj) {
  if (f == t.frame) adj.joint_q[t.body] += T(t.weight) * T(2) * (joints_q(l, f, fr)[t.body] - T(t.value));
}

// cartpole: SHAC's swing-up cost, the mean over frames 1..step
template <class S>
Status create_cartpole(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  const scene::ObjectRange* r = b.object;
  for (int i = r->body_begin; i < r->body_end; ++i) {
    if (m.joint_type[i] == RIGID_JOINT_PRISMATIC && t.x < 0) t.x = m.joint_q_start[i], t.xd = m.joint_dof_start[i];
    if (m.joint_type[i] == RIGID_JOINT_REVOLUTE && t.theta < 0)
      t.theta = m.joint_q_start[i], t.thetad = m.joint_dof_start[i];
  }
  if (t.x < 0 || t.theta < 0)
    return Status::error(b.where + ": \"" + spec.object + "\" needs a prismatic (cart) and a revolute (pole) joint");
  return running_frames(b, t, "cost");
}
template <class S>
S value_cartpole(const LossT<S>& l, const Term<S>& t, const std::vector<S>&) {
  S v = S(0);
  for (int f = 1; f <= t.frame; ++f) {
    const std::vector<S>&q = l.frame_q(f), &qd = l.frame_qd(f);
    S th = q[t.theta], thd = qd[t.thetad], x = q[t.x], xd = qd[t.xd];
    v += S(2) * (S(1) - std::cos(th)) + S(0.1) * thd * thd + S(0.05) * x * x + S(0.1) * xd * xd;
  }
  return v / S(t.frame);
}
template <class S, class T>
void seed_cartpole(const LossT<S>& l, const Term<S>& t, int f, const SeedFramesT<T>& fr, StateT<T>& adj) {
  if (f < 1 || f > t.frame) return;
  const std::vector<T>&q = joints_q(l, f, fr), &qd = joints_qd(l, f, fr);
  const T c = T(t.weight) / T(t.frame);
  adj.joint_q[t.theta] += c * T(2) * rigid::rsin(q[t.theta]);
  adj.joint_qd[t.thetad] += c * T(0.2) * qd[t.thetad];
  adj.joint_q[t.x] += c * T(0.1) * q[t.x];
  adj.joint_qd[t.xd] += c * T(0.2) * qd[t.xd];
}

// the running costs and rewards of one body, each frame 1..step: the cost of one frame and,
// with grad, its adjoints of the body probe
template <class S, class T>
T running_cost(const LossT<S>& l, const Term<S>& t, const std::vector<T>& q, const std::vector<T>& qd,
               RigidBodyProbe<T>* grad) {
  const int up = l.up_axis();
  const RigidBodyProbe<T> p = rigid_body_probe(l.rigid_model(), q, qd, t.body);
  const vec3<T> axis = lift<T>(t.axis);
  if (grad) *grad = RigidBodyProbe<T>{};
  switch (t.kind) {
    case LossKind::height: {
      const T d = T(t.value) - p.c[up];
      if (!(d > T(0))) return T(0);
      if (grad) grad->c[up] = T(-2) * d;
      return d * d;
    }
    case LossKind::upright: {
      // 1 - (R a).up = 1 - sum_j R[up][j] a_j
      if (grad)
        for (int j = 0; j < 3; ++j) grad->R.m[up][j] = -axis[j];
      return T(1) - (p.R * axis)[up];
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
      if (t.kind == LossKind::up_projection) e = vec3<T>(), e[up] = T(1);
      if (grad)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) grad->R.m[i][j] = -e[i] * axis[j];
      return -dot(p.R * axis, e);
    }
    case LossKind::height_reward: {
      // d = clip(h - value, lower, upper); reward above d (d >= 0), below d - quadratic d^2 (d < 0)
      const T h = p.c[up] - T(t.value);
      const bool below = h<T(t.lower), above = h> T(t.upper);
      const T d = below ? T(t.lower) : above ? T(t.upper) : h;
      const bool clipped = below || above, pos = !(d < T(0));
      const T reward = pos ? T(t.above) * d : T(t.below) * d - T(t.quadratic) * d * d;
      if (grad && !clipped) grad->c[up] = pos ? -T(t.above) : -(T(t.below) - T(2) * T(t.quadratic) * d);
      return -reward;
    }
    default:
      return T(0);
  }
}

template <class S>
Status create_running(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = find_body(b, spec, t.body); !s) return s;
  if (Status s = running_frames(b, t, "cost"); !s) return s;
  t.value = S(spec.value);
  if (spec.kind == LossKind::reach) return find_target(b, spec, t);
  if (spec.kind != LossKind::height && spec.kind != LossKind::height_reward)
    if (Status s = unit_axis(b, spec, t); !s) return s;
  if (spec.kind == LossKind::heading) {  // the direction laid in the ground plane, unit
    scene::V3 d = spec.direction;
    d[b.cs.up_axis] = 0;
    const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(n > 0)) return Status::error(b.where + ": direction has no part in the ground plane");
    t.target = {S(d[0] / n), S(d[1] / n), S(d[2] / n)};
  }
  t.lower = S(spec.lower), t.upper = S(spec.upper), t.above = S(spec.above), t.below = S(spec.below);
  t.quadratic = S(spec.quadratic);
  return Status::ok();
}
template <class S>
S value_running(const LossT<S>& l, const Term<S>& t, const std::vector<S>&) {
  S v = S(0);
  for (int f = 1; f <= t.frame; ++f) v += running_cost<S, S>(l, t, l.frame_q(f), l.frame_qd(f), nullptr);
  return v / S(t.frame);
}
template <class S, class T>
void seed_running(const LossT<S>& l, const Term<S>& t, int f, const SeedFramesT<T>& fr, StateT<T>& adj) {
  if (f < 1 || f > t.frame) return;
  const std::vector<T>&q = joints_q(l, f, fr), &qd = joints_qd(l, f, fr);
  RigidBodyProbe<T> g;
  running_cost(l, t, q, qd, &g);
  const T c = T(t.weight) / T(t.frame);
  g.c = g.c * c;
  g.vc = g.vc * c;
  for (auto& row : g.R.m)
    for (T& x : row) x *= c;
  rigid_body_probe_adjoint(l.rigid_model(), q, qd, t.body, g, adj.joint_q, adj.joint_qd);
}

// alive: the mean over frames 1..step of a constant reward (no gradient)
template <class S>
Status create_alive(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  if (Status s = running_frames(b, t, "reward"); !s) return s;
  t.value = S(spec.value);
  return Status::ok();
}
template <class S>
S value_alive(const LossT<S>&, const Term<S>& t, const std::vector<S>&) {
  return -t.value;
}

// effort: the robot's actuator inputs; a policy task without them measures the policy's
// outputs instead (LossT::action_effort)
template <class S>
Status create_effort(const LossBuildT<S>& b, const scene::LossTerm& spec, Term<S>& t) {
  for (const ParamBlock& p : b.params.blocks())
    if (p.kind == scene::ParamKind::actuator_control && (spec.object.empty() || p.object == spec.object)) {
      if (p.knots > 0)
        return Status::error(b.where + ": effort measures one value a frame; " + scene::to_string(p.kind) + " of '" +
                             p.object + "' has \"knots\" (drop the effort term or the knots)");
      t.blocks.push_back({p.offset, p.offset + p.count});
    }
  if (t.blocks.empty() && !b.task.has_policy)
    return Status::error(b.where + ": no actuator_control parameters to measure");
  return Status::ok();
}

}  // namespace

template <class S>
const std::vector<LossRowT<S>>& body_loss_rows() {
  static const std::vector<LossRowT<S>> rows = {
      ADJ_LOSS_ROW(bodies, position, create_position, value_position, &seed_position),
      ADJ_LOSS_ROW(bodies, distance, create_distance, value_distance, &seed_distance),
      ADJ_LOSS_ROW(bodies, joint, create_joint, value_joint, &seed_joint),
      ADJ_LOSS_ROW(bodies, cartpole, create_cartpole, value_cartpole, &seed_cartpole),
      ADJ_LOSS_ROW(bodies, height, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, upright, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, speed, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, reach, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, forward_velocity, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, up_projection, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, heading, create_running, value_running, &seed_running),
      ADJ_LOSS_ROW(bodies, height_reward, create_running, value_running, &seed_running),
      LossRowT<S>{LossKind::alive, TermSide::bodies, &create_alive<S>, &value_alive<S>, nullptr, nullptr},
      LossRowT<S>{LossKind::effort, TermSide::bodies, &create_effort<S>, &effort_value<S>, nullptr, nullptr},
  };
  return rows;
}

template const std::vector<LossRowT<float>>& body_loss_rows();
template const std::vector<LossRowT<double>>& body_loss_rows();

}  // namespace adj::optim
