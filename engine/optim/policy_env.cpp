#include "engine/optim/policy_env.h"

#include <algorithm>
#include <cmath>

namespace adj::optim {

namespace {

// std::uniform_real_distribution differs between standard libraries: draw by hand
double uniform_pm1(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-52 - 1.0; }

// what the env asks of a task: a policy and nothing else to train, frame costs (effort terms:
// a robot policy's action penalty)
Status check_env_task(const scene::Task& task, const PolicyEnvOptions& options, bool effort) {
  const std::string where = "task '" + task.name + "'";
  if (!task.has_policy) return Status::error(where + ": the task has no policy to train");
  for (const scene::ParamSpec& p : task.parameters)
    if (p.kind != scene::ParamKind::policy)
      return Status::error(where + ": only policy weights can be trained frame by frame, not " +
                           scene::to_string(p.kind));
  for (const scene::LossTerm& l : task.loss)
    if ((l.kind == scene::LossKind::effort && !effort) || l.step >= 0)
      return Status::error(where + ": frame costs need loss terms that read the last frame (step -1)" +
                           (effort ? "" : ", without effort"));
  if (options.env_count < 1) return Status::error(where + ": env_count must be >= 1");
  if (!(options.q_range >= 0) || !(options.qd_range >= 0) || !(options.root_position_range >= 0) ||
      !(options.root_angle_range >= 0))
    return Status::error(where + ": q_range, qd_range and the root ranges must be >= 0");
  for (int h : options.hidden)
    if (h < 1) return Status::error(where + ": policy layers need width >= 1");
  return Status::ok();
}

// adj += scale x seed, entry by entry
template <class S>
void add_scaled(StateT<S>& adj, S scale, const StateT<S>& seed) {
  for (std::size_t k = 0; k < adj.particle_q.size(); ++k) adj.particle_q[k] += seed.particle_q[k] * scale;
  for (std::size_t k = 0; k < adj.particle_qd.size(); ++k) adj.particle_qd[k] += seed.particle_qd[k] * scale;
  for (std::size_t k = 0; k < adj.joint_q.size(); ++k) adj.joint_q[k] += scale * seed.joint_q[k];
  for (std::size_t k = 0; k < adj.joint_qd.size(); ++k) adj.joint_qd[k] += scale * seed.joint_qd[k];
}

// a state or a control on another scalar (tangent numbers: the values, tangents zero)
template <class T, class S>
StateT<T> lift_state(const StateT<S>& s) {
  StateT<T> r;
  for (const vec3<S>& x : s.particle_q) r.particle_q.push_back(lift<T>(x));
  for (const vec3<S>& x : s.particle_qd) r.particle_qd.push_back(lift<T>(x));
  for (S x : s.joint_q) r.joint_q.push_back(T(x));
  for (S x : s.joint_qd) r.joint_qd.push_back(T(x));
  return r;
}
template <class T, class S>
ControlT<T> lift_control(const ControlT<S>& c) {
  ControlT<T> r;
  for (const vec3<S>& x : c.particle_f) r.particle_f.push_back(lift<T>(x));
  for (S x : c.spring_act) r.spring_act.push_back(T(x));
  for (S x : c.tet_act) r.tet_act.push_back(T(x));
  for (S x : c.joint_act) r.joint_act.push_back(T(x));
  return r;
}

// PolicyEnvT::action_hvp, forward over reverse, for any world: the frames from s0 on tangent
// numbers (the actions' tangents v), then their reverse pass, whose tangent of dJ/da is H v. The
// world gives a blank control, its policy (apply_outputs / output_grads on tangent numbers), its
// tangent step(in, out, u) and adjoint(in, u, adj_out, adj_in, grad_control), and
// seed(end, state, adj): the frame cost's seeds at the frame's output (end 1) or input (end 0).
// Errors name the env (world w), the frame (frame0 + t) and the pass.
template <class S, class T, class Policy, class Step, class Adjoint, class Seed>
Status tangent_hvp(int w, int frame0, const std::vector<S>& a, const std::vector<S>& v, StateT<T> s0,
                   const ControlT<T>& blank, const Policy& policy, const Step& step, const Adjoint& adjoint,
                   const Seed& seed, std::vector<S>& out) {
  const int na = policy.output_size();
  if (na < 1 || a.size() != v.size() || a.size() % std::size_t(na) != 0)
    return Status::error("env " + std::to_string(w) + ": H v needs actions and a direction of whole frames (" +
                         std::to_string(na) + " entries per frame; got " + std::to_string(a.size()) + " and " +
                         std::to_string(v.size()) + ")");
  const int frames = int(a.size()) / na;
  auto where = [&](int t, const char* pass) {
    return "env " + std::to_string(w) + ", frame " + std::to_string(frame0 + t) + " (H v, " + pass + "): ";
  };
  std::vector<StateT<T>> s(static_cast<std::size_t>(frames + 1));
  std::vector<ControlT<T>> u(static_cast<std::size_t>(frames), blank);
  s[0] = std::move(s0);
  std::vector<T> action(static_cast<std::size_t>(na));
  for (int t = 0; t < frames; ++t) {
    for (int k = 0; k < na; ++k) {
      const std::size_t e = std::size_t(t) * std::size_t(na) + std::size_t(k);
      action[std::size_t(k)] = T(a[e]);
      action[std::size_t(k)].d[0] = v[e];
    }
    policy.apply_outputs(action, u[std::size_t(t)]);
    if (Status st = step(s[std::size_t(t)], s[std::size_t(t) + 1], u[std::size_t(t)]); !st)
      return Status::error(where(t, "forward") + st.message());
  }
  // each frame's cost seeds its states' adjoints (their tangents: the cost's second derivatives
  // along the states' tangents), the step's adjoint moves them to its input
  StateT<T> adj = zero_like(s[0]), adj_in;
  ControlT<T> grad_control;
  std::vector<T> d_action;
  out.assign(a.size(), S(0));
  for (int t = frames - 1; t >= 0; --t) {
    seed(1, s[std::size_t(t) + 1], adj);
    grad_control = blank;
    if (Status st = adjoint(s[std::size_t(t)], u[std::size_t(t)], adj, adj_in, grad_control); !st)
      return Status::error(where(t, "reverse") + st.message());
    seed(0, s[std::size_t(t)], adj_in);
    policy.output_grads(grad_control, d_action);
    for (int k = 0; k < na; ++k) out[std::size_t(t) * std::size_t(na) + std::size_t(k)] = d_action[std::size_t(k)].d[0];
    std::swap(adj, adj_in);
  }
  return Status::ok();
}

}  // namespace

template <class S>
Result<std::unique_ptr<ScenePolicyEnvT<S>>> ScenePolicyEnvT<S>::create(const scene::CompiledSceneT<S>& cs,
                                                                       const scene::Task& task,
                                                                       PolicyEnvOptions options) {
  const std::string where = "task '" + task.name + "'";
  const bool robots = task_names_robot(cs, task);
  if (Status st = check_env_task(task, options, robots); !st) return st;
  if (!robots && options.net != MlpForm{})
    return Status::error(where + ": particle policies are tanh networks with Glorot init (no shac activation, " +
                         "layer_norm or init)");
  auto env = std::unique_ptr<ScenePolicyEnvT>(new ScenePolicyEnvT());
  env->model_ = std::make_unique<ModelT<S>>(cs.model);
  scene::Task net_task = task;
  if (!options.hidden.empty()) net_task.policy.hidden = options.hidden;
  scene::Task one = task;
  one.horizon = 1;
  for (scene::ParamSpec& p : one.parameters) p.knots = 0;  // one frame: no knots between
  Result<PolicyT<S>> pol = PolicyT<S>::create(cs, net_task, options.net);
  if (!pol) return pol.status();
  env->policy_ = std::move(pol.value());
  env->policy_.bind(&env->model_->rigid);
  env->coupled_ = cs.has_particles() && cs.model.body_count() > 0;
  if (robots)
    for (const scene::LossTerm& l : task.loss)
      if (l.kind == scene::LossKind::effort && !l.object.empty() && l.object != env->policy_.robot())
        return Status::error(where + ": effort of \"" + l.object + "\": the policy drives \"" + env->policy_.robot() +
                             "\" (its actions are what an effort term measures)");
  Result<ParametersT<S>> params = ParametersT<S>::create(cs, one, env->policy_.weight_count());
  if (!params) return params.status();
  // each side's terms a loss of their own, read by the side's rule (a coupled task has both)
  const TaskSides sides = split_task(cs, one);
  std::optional<LossT<S>> side_loss[2];
  for (TermSide side : {TermSide::bodies, TermSide::particles}) {
    const scene::Task& st = side == TermSide::bodies ? sides.robot : sides.particles;
    if (st.loss.empty()) continue;
    Result<LossT<S>> loss = LossT<S>::create(cs, st, params.value());
    if (!loss) return loss.status();
    side_loss[int(side)] = std::move(loss.value());
  }
  if (!side_loss[0] && !side_loss[1])
    return LossT<S>::create(cs, one, params.value()).status();  // no terms: its message
  // the action penalty: weight x |a|^2 of each frame (robot policies; particle tasks have no effort terms)
  if (robots && side_loss[int(TermSide::bodies)]) env->effort_ = side_loss[int(TermSide::bodies)]->action_effort();
  if (!task.termination.object.empty()) {
    const scene::ObjectRange* r = cs.find(task.termination.object);
    if (!r || r->kind != scene::ObjectKind::robot)
      return Status::error(where + ": termination: \"" + task.termination.object + "\" is not a robot");
    for (int b = r->body_begin; b < r->body_end; ++b)
      if (cs.model.rigid.body_name[b] == task.termination.body) env->done_body_ = b;
    if (env->done_body_ < 0)
      return Status::error(where + ": termination: robot \"" + r->name + "\" has no body \"" + task.termination.body +
                           "\"");
    env->done_height_ = S(task.termination.height);
  }
  env->initial_ = env->model_->make_state();
  env->options_ = options;
  env->dt_ = cs.frame_dt;
  env->up_ = cs.up_axis;
  env->horizon_ = task.horizon;
  env->substeps_ = cs.substeps;
  // a particle substep's record holds its state and forces: recomputed instead
  env->record_ = !cs.has_particles();
  if (options.randomize && cs.randomize.active())
    for (int i = 0; i < options.env_count; ++i) {
      env->models_.push_back(*env->model_);
      randomize_world(cs.randomize, options.world_seed, options.world_begin + i, env->models_.back());
    }
  env->copies_.resize(std::size_t(options.env_count));
  for (int i = 0; i < options.env_count; ++i) {
    Copy& c = env->copies_[std::size_t(i)];
    c.solver = std::make_unique<SolverT<S>>(
        SolverOptions{.substeps = cs.substeps, .thread_count = options.thread_count, .body_param_grads = false});
    c.body_loss = side_loss[int(TermSide::bodies)];
    c.particle_loss = side_loss[int(TermSide::particles)];
    if (c.body_loss) c.body_loss->bind(&env->world_model(i).rigid);
    c.grad_control = env->model_->make_control();
    c.grad_model = env->model_->make_grad();
    env->reset(i, nullptr);
  }
  return env;
}

template <class S>
S ScenePolicyEnvT<S>::particle_value(Copy& c, const StateT<S>& s) const {
  c.particle_loss->begin();
  c.particle_loss->observe(0, c.start);
  c.particle_loss->observe(1, s);
  return c.particle_loss->value({});
}

template <class S>
S ScenePolicyEnvT<S>::frame_cost(Copy& c, const StateT<S>& in) const {
  // the bodies' terms on (s_t, s_t+1), then the particles' L(s_t+1) - L(s_t) added
  S cost = S(0);
  if (c.body_loss) {
    c.body_loss->begin();
    c.body_loss->observe(0, in);
    c.body_loss->observe(1, c.state);
    cost = c.body_loss->value({});
  }
  if (c.particle_loss) {
    const S now = particle_value(c, c.state);
    cost = c.body_loss ? cost + (now - c.last) : now - c.last;
    c.last = now;
  }
  return cost;
}

template <class S>
void ScenePolicyEnvT<S>::reset(int i, std::mt19937_64* rng) {
  Copy& c = copies_[i];
  c.state = initial_;
  c.frame = 0;
  c.done = false;
  c.action.assign(std::size_t(policy_.output_size()), S(0));
  drop_tape(c);
  if (rng) randomize_start(c.state, *rng);
  c.start = c.state;
  if (c.particle_loss) c.last = particle_value(c, c.state);
}

template <class S>
void ScenePolicyEnvT<S>::randomize_start(StateT<S>& s, std::mt19937_64& rng) const {
  // TODO(optim): randomized particle starts (q_range/qd_range move joints only); safe to leave:
  // the particle tasks train from the task's start, and PPO's draws stay where they were
  const RigidModelT<S>& m = model_->rigid;
  for (int j = 0; j < m.body_count(); ++j) {
    int type = m.joint_type[j];
    if (type != RIGID_JOINT_REVOLUTE && type != RIGID_JOINT_PRISMATIC) continue;
    S& q = s.joint_q[m.joint_q_start[j]];
    q += S(options_.q_range * uniform_pm1(rng));
    q = std::clamp(q, m.joint_lower[j], m.joint_upper[j]);
  }
  for (int d = 0; d < m.dof_count(); ++d) s.joint_qd[d] += S(options_.qd_range * uniform_pm1(rng));
  if (!(options_.root_position_range > 0) && !(options_.root_angle_range > 0)) return;
  for (int j = 0; j < m.body_count(); ++j) {
    if (m.joint_type[j] != RIGID_JOINT_FREE) continue;
    S* q = &s.joint_q[m.joint_q_start[j]];
    for (int k = 0; k < 3; ++k) q[k] += S(options_.root_position_range * uniform_pm1(rng));
    // a uniformly random axis (rejection in the unit ball), an angle within the range
    vec3<double> axis;
    do axis = {uniform_pm1(rng), uniform_pm1(rng), uniform_pm1(rng)};
    while (!(dot(axis, axis) > 1e-6 && dot(axis, axis) <= 1));
    axis = axis / std::sqrt(dot(axis, axis));
    const double half = 0.5 * options_.root_angle_range * uniform_pm1(rng), sh = std::sin(half);
    const rigid::quat<double> turn(std::cos(half), axis.x * sh, axis.y * sh, axis.z * sh);
    const rigid::quat<double> r = rigid::qmul(turn, rigid::quat<double>(q[3], q[4], q[5], q[6]));
    q[3] = S(r.w), q[4] = S(r.x), q[5] = S(r.y), q[6] = S(r.z);
  }
}

// a stored state must have this world's shape
template <class S>
static bool same_shape(const StateT<S>& a, const StateT<S>& b) {
  return a.particle_q.size() == b.particle_q.size() && a.particle_qd.size() == b.particle_qd.size() &&
         a.joint_q.size() == b.joint_q.size() && a.joint_qd.size() == b.joint_qd.size();
}

template <class S>
Status ScenePolicyEnvT<S>::set_episode(int i, const typename PolicyEnvT<S>::Episode& e) {
  Copy& c = copies_[i];
  const int na = policy_.output_size();
  if (!same_shape(e.state, initial_) || !same_shape(e.start, initial_) || e.frame < 0 || e.frame > horizon_)
    return Status::error(env_name(i) + ": the stored episode does not fit this world");
  if (!e.action.empty() && int(e.action.size()) != na)
    return Status::error(env_name(i) + ": the stored episode's action has " + std::to_string(e.action.size()) +
                         " entries, this policy " + std::to_string(na));
  c.state = e.state;
  c.start = e.start;
  c.frame = e.frame;
  c.done = e.done;
  c.action = e.action;
  c.action.resize(std::size_t(na), S(0));
  drop_tape(c);
  if (c.particle_loss)
    c.last = particle_value(c, c.state);  // as step() left it: L of the state, read against the start
  return Status::ok();
}

template <class S>
typename PolicyEnvT<S>::Episode ScenePolicyEnvT<S>::episode(int i) const {
  const Copy& c = copies_[i];
  return {c.state, c.start, c.frame, c.done, c.action};
}

template <class S>
void ScenePolicyEnvT<S>::observe(int i, std::vector<S>& obs) const {
  const Copy& c = copies_[i];
  policy_.observe(c.frame, c.state, obs, &c.action);
}

template <class S>
Result<S> ScenePolicyEnvT<S>::step(int i, const std::vector<S>& action) {
  Copy& c = copies_[i];
  Frame f;
  if (!c.spare.empty()) {
    f = std::move(c.spare.back());
    c.spare.pop_back();
  }
  f.in = c.state;
  f.prev = c.action;
  f.action = action;
  if (f.control.joint_act.size() != std::size_t(model_->rigid.actuator_count()) ||
      f.control.particle_f.size() != std::size_t(model_->particle_count()))
    f.control = model_->make_control();
  f.control.zero();
  policy_.apply_outputs(action, f.control);
  Status st = c.solver->step(world_model(i), f.in, c.state, f.control, dt_, nullptr, record_ ? &f.record : nullptr);
  if (!st) return Status::error(env_name(i) + ", frame " + std::to_string(c.frame) + ": " + st.message());
  S cost = frame_cost(c, f.in);
  if (policy_.drives_bodies())
    for (S a : action) cost += effort_ * a * a;
  if (measure_ && model_->body_count() > 0) {
    if (st = rigid_contacts(world_model(i).rigid, c.state, f.control, c.contacts); !st)
      return Status::error(env_name(i) + ", frame " + std::to_string(c.frame) + ": " + st.message());
    S sq = S(0);
    for (int k = 0; k < c.contacts.contact_count(); ++k) sq += length_sq(c.contacts.force[k]);
    if (model_->particle_count() > 0) {  // the bodies' contacts with particles count too
      body_particle_contacts(world_model(i), c.state, c.particle_contacts);
      for (const vec3<S>& fk : c.particle_contacts.force) sq += length_sq(fk);
    }
    c.contact = std::sqrt(sq);
  }
  c.action = action;
  c.tape.push_back(std::move(f));
  ++c.frame;
  if (done_body_ >= 0)
    c.done = rigid_body_probe(model_->rigid, c.state.joint_q, c.state.joint_qd, done_body_).c[up_] < done_height_;
  return cost;
}

template <class S>
void ScenePolicyEnvT<S>::clear_tape(int i) {
  drop_tape(copies_[i]);
}

template <class S>
void ScenePolicyEnvT<S>::rewind(int i) {
  Copy& c = copies_[i];
  if (c.tape.empty()) return;
  c.state = c.tape.front().in;
  c.action = c.tape.front().prev;
  c.frame -= int(c.tape.size());
  c.done = false;
  drop_tape(c);
  if (c.particle_loss) c.last = particle_value(c, c.state);
}

template <class S>
void ScenePolicyEnvT<S>::begin_backward(int i) {
  Copy& c = copies_[i];
  c.adj.particle_q.assign(c.state.particle_q.size(), vec3<S>());
  c.adj.particle_qd.assign(c.state.particle_qd.size(), vec3<S>());
  c.adj.joint_q.assign(c.state.joint_q.size(), S(0));
  c.adj.joint_qd.assign(c.state.joint_qd.size(), S(0));
  c.d_action.assign(std::size_t(policy_.output_size()), S(0));
  c.back = int(c.tape.size());
}

template <class S>
void ScenePolicyEnvT<S>::add_observation_adjoint(int i, const std::vector<S>& d_obs) {
  Copy& c = copies_[i];
  const bool last = c.back == int(c.tape.size());
  // the previous action the observed state's frame read: the action of the frame reversed next
  // (at the first recorded frame, an action before the tape: its part is dropped with the rest)
  policy_.observe_adjoint(last ? c.state : c.tape[c.back].in, d_obs, c.adj, &c.d_action);
}

template <class S>
void ScenePolicyEnvT<S>::add_cost_seed(Copy& c, int end, const StateT<S>& s, S scale, StateT<S>& adj) const {
  auto blank = [&] {
    c.seed.particle_q.assign(s.particle_q.size(), vec3<S>());
    c.seed.particle_qd.assign(s.particle_qd.size(), vec3<S>());
    c.seed.joint_q.assign(s.joint_q.size(), S(0));
    c.seed.joint_qd.assign(s.joint_qd.size(), S(0));
  };
  if (c.body_loss) {  // the one-frame loss reads (s_t, s_t+1)
    blank();
    c.body_loss->seed(end, s, c.seed);
    add_scaled(adj, scale, c.seed);
  }
  if (c.particle_loss) {  // L(out) - L(in) (the episode's start is no function of the frames recorded)
    blank();
    c.particle_loss->seed(1, c.start, s, c.seed);
    add_scaled(adj, end == 1 ? scale : -scale, c.seed);
  }
}

template <class S>
Status ScenePolicyEnvT<S>::backward_step(int i, S d_cost, std::vector<S>& d_action) {
  Copy& c = copies_[i];
  if (c.back < 1) return Status::error(env_name(i) + ": backward past the recorded frames");
  const int k = c.back - 1;
  const Frame& f = c.tape[k];
  const StateT<S>& out = k + 1 == int(c.tape.size()) ? c.state : c.tape[k + 1].in;
  // the frame's cost reads (in, out): d_cost x its gradient, on out before the step adjoint
  // and on in after it
  if (d_cost != S(0)) add_cost_seed(c, 1, out, d_cost, c.adj);
  c.grad_control.zero();
  Status st = c.solver->step_adjoint(world_model(i), f.in, f.control, dt_, c.adj, c.adj_in, c.grad_control,
                                     c.grad_model, record_ ? &f.record : nullptr);
  if (!st)
    return Status::error(env_name(i) + ", frame " + std::to_string(c.frame - int(c.tape.size()) + k) +
                         " (backward): " + st.message());
  if (d_cost != S(0)) add_cost_seed(c, 0, f.in, d_cost, c.adj_in);
  policy_.output_grads(c.grad_control, d_action);
  if (policy_.drives_bodies()) {  // the next frame's observation of this action (previous_action terms)
    for (std::size_t k = 0; k < d_action.size(); ++k) d_action[k] += c.d_action[k];
    std::fill(c.d_action.begin(), c.d_action.end(), S(0));
  }
  if (effort_ != S(0) && d_cost != S(0)) {  // the action penalty: the frame's action is its actuators' input
    for (std::size_t k = 0; k < d_action.size(); ++k) d_action[k] += d_cost * S(2) * effort_ * f.action[k];
  }
  std::swap(c.adj, c.adj_in);
  c.back = k;
  return Status::ok();
}

template <class S>
Status ScenePolicyEnvT<S>::action_hvp(int i, const std::vector<S>& a, const std::vector<S>& v, S d_cost,
                                      std::vector<S>& out) {
  using T = Dual<S, 1>;
  Copy& c = copies_[i];
  if (coupled_)
    return Status::error(env_name(i) +
                         ": H v needs the step's tangent form, and the coupled step of robots and particles has none");
  ControlT<S> zero = model_->make_control();
  zero.zero();
  const StateT<T> start = lift_state<T>(c.start);
  StateT<T> seed;
  auto add = [&](StateT<T>& adj, T scale) {
    for (std::size_t k = 0; k < adj.particle_q.size(); ++k) adj.particle_q[k] += seed.particle_q[k] * scale;
    for (std::size_t k = 0; k < adj.particle_qd.size(); ++k) adj.particle_qd[k] += seed.particle_qd[k] * scale;
    for (std::size_t k = 0; k < adj.joint_q.size(); ++k) adj.joint_q[k] += scale * seed.joint_q[k];
    for (std::size_t k = 0; k < adj.joint_qd.size(); ++k) adj.joint_qd[k] += scale * seed.joint_qd[k];
  };
  Status st = tangent_hvp(
      options_.world_begin + i, c.frame, a, v, lift_state<T>(c.state), lift_control<T>(zero), policy_,
      [&](const StateT<T>& in, StateT<T>& to, const ControlT<T>& u) {
        return c.solver->tangent_step(world_model(i), in, to, u, dt_);
      },
      [&](const StateT<T>& in, const ControlT<T>& u, const StateT<T>& adj, StateT<T>& adj_in, ControlT<T>& g) {
        return c.solver->tangent_step_adjoint(world_model(i), in, u, dt_, adj, adj_in, g);
      },
      [&](int end, const StateT<T>& state, StateT<T>& adj) {
        if (c.body_loss) {  // the one-frame loss reads (s_t, s_t+1)
          seed = zero_like(state);
          c.body_loss->seed(end, state, seed);
          add(adj, T(d_cost));
        }
        if (c.particle_loss && d_cost != S(0)) {  // the frame cost L(out) - L(in)
          seed = zero_like(state);
          c.particle_loss->seed(1, start, state, seed);
          add(adj, T(end == 1 ? d_cost : -d_cost));
        }
      },
      out);
  // the action penalty's Hessian: 2 effort d_cost on the diagonal
  if (st && policy_.drives_bodies())
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += d_cost * S(2) * effort_ * v[k];
  return st;
}

template <class S>
void ScenePolicyEnvT<S>::drop_tape(Copy& c) {
  for (Frame& f : c.tape) c.spare.push_back(std::move(f));
  c.tape.clear();
}

template class ScenePolicyEnvT<float>;
template class ScenePolicyEnvT<double>;

}  // namespace adj::optim
