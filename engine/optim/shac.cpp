#include "engine/optim/shac.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <omp.h>

namespace adj::optim {

ShacWindowTimes& ShacWindowTimes::operator+=(const ShacWindowTimes& o) {
  rollout += o.rollout, sim_forward += o.sim_forward, sim_backward += o.sim_backward;
  policy_forward += o.policy_forward, policy_backward += o.policy_backward, observe += o.observe;
  end_value += o.end_value, idle += o.idle, actor_step += o.actor_step, critic_targets += o.critic_targets;
  critic_fit += o.critic_fit, statistics += o.statistics;
  return *this;
}

void RunningStats::add(const double* x, int n) {
  if (mean.empty()) mean.assign(n, 0.0), m2.assign(n, 0.0);
  ++count;
  for (int k = 0; k < n; ++k) {
    double d = x[k] - mean[k];
    mean[k] += d / double(count);
    m2[k] += d * (x[k] - mean[k]);
  }
}

template <class S>
void RunningStats::add(const std::vector<S>& x) {
  std::vector<double> d(x.begin(), x.end());
  add(d.data(), int(d.size()));
}

double RunningStats::stddev(int k) const { return count > 1 ? std::sqrt(m2[k] / double(count - 1)) : 1.0; }

template <class S>
ShacTrainerT<S>::ShacTrainerT() = default;
template <class S>
ShacTrainerT<S>::~ShacTrainerT() = default;
template <class S>
ShacTrainerT<S>::ShacTrainerT(ShacTrainerT&&) noexcept = default;
template <class S>
ShacTrainerT<S>& ShacTrainerT<S>::operator=(ShacTrainerT&&) noexcept = default;

template <class S>
Result<ShacTrainerT<S>> ShacTrainerT<S>::create(const TaskT<S>& task, ShacOptions options) {
  const scene::Task& spec = task.task();
  const std::string where = "task '" + spec.name + "' (SHAC)";
  if (!spec.has_policy) return Status::error(where + ": the task has no policy to train");
  if (options.window < 1 || options.window > spec.horizon)
    return Status::error(where + ": window " + std::to_string(options.window) + " must lie in 1.." +
                         std::to_string(spec.horizon) + " (the horizon)");
  auto env = task.policy_env({.env_count = 2, .thread_count = options.thread_count});
  if (!env) return Status::error(where + ": " + env.status().message());
  ShacTrainerT r;
  r.options_ = options;
  if (!(r.options_.lr > 0)) r.options_.lr = spec.optimizer.lr;
  r.env_ = std::move(env.value());
  r.horizon_ = spec.horizon;
  const int n = r.env_->mlp().weight_count();
  scene::OptimizerSpec os{scene::OptimizerKind::adam, r.options_.lr, options.clip, 0};
  r.optimizer_ = OptimizerT<S>(os, n);
  r.w_.assign(std::size_t(n), S(0));
  r.env_->mlp().init_weights(r.w_.data(), spec.seed);
  return r;
}

template <class S>
void ShacTrainerT<S>::normalize(const std::vector<S>& raw, std::vector<S>& obs) const {
  obs = raw;
  for (std::size_t k = 0; k < norm_mean_.size(); ++k) obs[k] = (raw[k] - norm_mean_[k]) * norm_inv_std_[k];
}

template <class S>
Result<S> ShacTrainerT<S>::run(int i, int frames, const std::vector<S>& w, std::vector<S>* grad, bool keep) {
  PolicyEnvT<S>& env = *env_;
  env.clear_tape(i);
  raw_.resize(std::size_t(frames));
  std::vector<std::vector<S>> obs(static_cast<std::size_t>(frames));
  std::vector<S> action, d_action, d_obs;
  S sum = S(0);
  for (int t = 0; t < frames; ++t) {
    env.observe(i, raw_[t]);
    normalize(raw_[t], obs[t]);
    env.mlp().forward(w.data(), obs[t], action);
    Result<S> cost = env.step(i, action);
    if (!cost) {
      env.rewind(i);
      return cost.status();
    }
    sum += cost.value();
  }
  Status st;
  if (grad) {  // each frame, last first: the frame's cost, then its action's network
    grad->assign(w.size(), S(0));
    env.begin_backward(i);
    for (int t = frames - 1; t >= 0 && st; --t) {
      st = env.backward_step(i, S(1), d_action);
      if (!st) break;
      env.mlp().backward(w.data(), obs[t], d_action, grad->data(), d_obs);
      for (std::size_t k = 0; k < norm_inv_std_.size(); ++k) d_obs[k] *= norm_inv_std_[k];
      env.add_observation_adjoint(i, d_obs);
    }
  }
  if (keep && st)
    env.clear_tape(i);
  else
    env.rewind(i);
  if (!st) return st;
  return sum;
}

template <class S>
Result<S> ShacTrainerT<S>::window_loss(const std::vector<S>& w, std::vector<S>* grad) {
  return window(w, grad, false);
}

template <class S>
Result<S> ShacTrainerT<S>::window(const std::vector<S>& w, std::vector<S>* grad, bool keep) {
  if (env_->frame(0) + options_.window > horizon_) env_->reset(0, nullptr);  // a new episode
  window_start_ = env_->frame(0);
  norm_mean_.clear();
  norm_inv_std_.clear();
  if (options_.normalize_observations && stats_.count > 1)
    for (std::size_t k = 0; k < stats_.mean.size(); ++k) {
      norm_mean_.push_back(S(stats_.mean[k]));
      norm_inv_std_.push_back(S(1.0 / std::max(stats_.stddev(int(k)), 1e-4)));
    }
  Result<S> value = run(0, options_.window, w, grad, keep);
  const std::string at = "SHAC window at frame " + std::to_string(window_start_);
  if (!value) return Status::error(at + ": " + value.status().message());
  if (!is_finite(value.value())) return Status::error(at + ": loss not finite");
  return value;
}

template <class S>
Result<ShacWindowStats> ShacTrainerT<S>::step_window() {
  std::vector<S> g;
  Result<S> loss = window(w_, &g, true);  // kept: the episode goes on from the window's end
  if (!loss) return loss.status();
  ShacWindowStats s;
  s.window = windows_;
  s.frame = window_start_;
  s.loss = double(loss.value());
  for (S x : g)
    if (!is_finite(x))
      return Status::error("SHAC window at frame " + std::to_string(window_start_) + ": gradient not finite");
  s.grad_norm = optimizer_.step(w_, g);
  for (const std::vector<S>& obs : raw_) stats_.add(obs);  // the window's observations join the statistics
  sim_steps_ += (long long)options_.window * env_->substeps();
  s.sim_steps = sim_steps_;
  ++windows_;
  return s;
}

template <class S>
Result<S> ShacTrainerT<S>::evaluate() {
  env_->reset(1, nullptr);
  Result<S> sum = run(1, horizon_, w_, nullptr, true);
  if (!sum) return Status::error("SHAC evaluation: " + sum.status().message());
  return sum;
}

template void RunningStats::add(const std::vector<float>&);
template void RunningStats::add(const std::vector<double>&);
template class ShacTrainerT<float>;
template class ShacTrainerT<double>;

}  // namespace adj::optim

namespace adj::optim {

namespace {

// Box-Muller with our own uniform draws (std::normal_distribution differs between libraries)
double gaussian(std::mt19937_64& rng) {
  double u1 = std::max(double(rng() >> 11) * 0x1.0p-53, 1e-300), u2 = double(rng() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// a stopwatch for ShacWindowTimes: lap(x) adds the time since the last lap to x
struct Lap {
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void operator()(double& x) {
    const auto now = std::chrono::steady_clock::now();
    x += std::chrono::duration<double>(now - t).count();
    t = now;
  }
};

int team_size(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

}  // namespace

template <class S>
Result<BatchShacTrainerT<S>> BatchShacTrainerT<S>::create(const TaskT<S>& task, BatchShacOptions o,
                                                          PolicyEnvOptions env_options) {
  const std::string where = "task '" + task.task().name + (o.ahac.enabled ? "' (AHAC)" : "' (SHAC)");
  // with ranks, this rank's env holds its block of the copies
  const int total = env_options.env_count;
  const int ranks = o.comm ? o.comm->size() : 1;
  if (total < ranks)
    return Status::error(where + ": " + std::to_string(total) + " copies cannot be shared by " + std::to_string(ranks) +
                         " ranks (each needs one at least)");
  const dist::Block mine = dist::block(total, o.comm ? o.comm->rank() : 0, ranks);
  env_options.env_count = mine.count();
  env_options.world_begin = mine.begin;  // the same randomized worlds on any number of ranks
  auto envs = make_policy_envs(task, env_options, where);
  if (!envs) return envs.status();
  if (o.window < 1 || o.window > envs->train->horizon())
    return Status::error(where + ": window " + std::to_string(o.window) + " must lie in 1.." +
                         std::to_string(envs->train->horizon()) + " (the horizon)");
  if (!(o.actor_lr > 0) || !(o.critic_lr > 0) || !(o.gamma > 0 && o.gamma < 1) || !(o.lambda >= 0 && o.lambda <= 1) ||
      o.critic_passes < 1 || o.critic_minibatches < 1 || !(o.target_alpha >= 0 && o.target_alpha < 1) ||
      !(o.clip >= 0) || !(o.critic_clip >= 0) || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) ||
      !(o.lr_end >= 0) || !(o.grad_bound >= 0))
    return Status::error(where +
                         ": options out of range (lr > 0, gamma in (0, 1), lambda in [0, 1], "
                         "critic passes and minibatches >= 1, target_alpha, beta1, beta2 in [0, 1), clip, "
                         "critic_clip, lr_end, grad_bound >= 0)");
  if (o.ahac.enabled && (!(o.ahac.contact_threshold > 0) || o.ahac.horizon_min < 1 || o.ahac.horizon_min > o.window ||
                         !(o.ahac.dual_lr >= 0)))
    return Status::error(where + ": AHAC options out of range (contact_threshold > 0, horizon_min in 1.." +
                         std::to_string(o.window) + " (the window), dual_lr >= 0)");
  for (int h : o.critic_hidden)
    if (h < 1) return Status::error(where + ": critic layers need width >= 1");
  BatchShacTrainerT r;
  r.options_ = o;
  r.env_ = std::move(envs->train);
  r.eval_ = std::move(envs->eval);
  const int n = total;
  r.mine_ = mine;
  r.w_.assign(r.env_->mlp().weight_count(), S(0));
  r.env_->mlp().init_weights(r.w_.data(), o.seed);
  std::vector<int> sizes{r.env_->observation_size()};
  for (int h : o.critic_hidden) sizes.push_back(h);
  sizes.push_back(1);
  r.critic_ = MlpT<S>(sizes, S(1), true, o.critic_form);
  r.critic_w_.assign(r.critic_.weight_count(), S(0));
  r.critic_.init_weights(r.critic_w_.data(), o.seed + 0x9e3779b97f4a7c15ull);
  r.target_w_ = r.critic_w_;
  if (o.ahac.enabled && o.ahac.double_critic) {  // the second critic starts elsewhere
    r.critic2_w_.assign(r.critic_.weight_count(), S(0));
    r.critic_.init_weights(r.critic2_w_.data(), o.seed + 0x2545f4914f6cdd1dull);
    r.target2_w_ = r.critic2_w_;
  }
  if (o.ahac.enabled) r.env_->measure_contacts(true);
  r.horizon_ = o.window;
  if (o.learned_std) {
    r.log_std_.assign(std::size_t(r.env_->action_size()), S(o.log_std_init));
    const MlpT<S>& net = r.env_->mlp();
    if (net.linear_output())
      return Status::error(where + ": a learned std needs a policy whose outputs a tanh squashes");
    r.actor_z_ = MlpT<S>(net.layer_sizes(), S(1), true, net.form());
  }
  r.actor_opt_.lr = o.actor_lr;
  r.actor_opt_.clip = o.clip;
  r.critic_opt_.lr = o.critic_lr;
  r.critic_opt_.clip = o.critic_clip;
  r.critic2_opt_ = r.critic_opt_;
  r.value_scale_ = S(1.0 / (1.0 - o.gamma));
  r.copies_.resize(std::size_t(n));
  r.rng_.seed(o.seed ^ 0x5851f42d4c957f2dull);
  for (int i = 0; i < n; ++i) r.rngs_.emplace_back(o.seed * 1000003ull + std::uint64_t(i));
  for (int i = mine.begin; i < mine.end; ++i) r.env_->reset(i - mine.begin, &r.rngs_[i]);
  if (Status st = r.broadcast_weights(); !st) return Status::error(where + ": " + st.message());
  return r;
}

template <class S>
double BatchShacTrainerT<S>::Adam::step(const BatchShacOptions& o, std::vector<S>& w, const std::vector<S>& g) {
  if (m.empty()) m.assign(w.size(), 0.0), v.assign(w.size(), 0.0);
  const double norm = global_norm(g);
  const double f = clip > 0 && norm > clip ? clip / norm : 1.0;
  ++t;
  const double c1 = 1.0 - std::pow(o.beta1, t), c2 = 1.0 - std::pow(o.beta2, t);
  for (std::size_t k = 0; k < w.size(); ++k) {
    const double gk = double(g[k]) * f;
    m[k] = o.beta1 * m[k] + (1.0 - o.beta1) * gk;
    v[k] = o.beta2 * v[k] + (1.0 - o.beta2) * gk * gk;
    w[k] -= S(lr * (m[k] / c1) / (std::sqrt(v[k] / c2) + 1e-8));
  }
  return norm;
}

template <class S>
void BatchShacTrainerT<S>::normalize(const std::vector<S>& raw, std::vector<S>& obs) const {
  obs = raw;
  if (norm_mean_.empty()) return;
  for (std::size_t k = 0; k < obs.size(); ++k) obs[k] = (raw[k] - norm_mean_[k]) * norm_inv_std_[k];
}

template <class S>
Status BatchShacTrainerT<S>::run_copy(int i, const std::vector<S>& w, bool backward) {
  PolicyEnvT<S>& env = *env_;
  // with a learned std the network's output before its tanh (z), squashed below after the noise
  const bool squash = !log_std_.empty();
  const MlpT<S>& net = squash ? actor_z_ : env.mlp();
  const S scale = env.mlp().output_scale();
  Copy& c = copies_[i];
  const int W = window_frames();
  const S g = S(options_.gamma), share = S(1) / S(env_count() * W);
  const bool ahac = options_.ahac.enabled;
  const int e = i - mine_.begin;  // the copy in this rank's env
  const int na = net.output_size(), no = net.input_size();
  c.time = {};
  Lap lap;
  c.start = env.frame(e);
  c.obs.resize(std::size_t(W + 1));
  c.raw.resize(std::size_t(W + 1));
  c.cost.resize(std::size_t(W));
  net.resize(c.actor, W);
  env.clear_tape(e);
  std::vector<S> action(static_cast<std::size_t>(na)), d_action, d_obs(static_cast<std::size_t>(no)), d_raw;
  S value = S(0), discount = S(1);
  // frames until the window ends, the episode terminates (then no terminal value) or, with
  // AHAC, a frame ends in stiff contact (then the critics' value there)
  c.frames = W;
  c.done = false;
  c.cut = false;
  c.failed = false;
  c.blowup.clear();
  c.contact.clear();
  std::vector<StateT<S>>* kept = i < int(copy_frames_.size()) ? &copy_frames_[std::size_t(i)] : nullptr;
  if (kept) kept->assign(1, env.state(e));
  for (int t = 0; t < c.frames; ++t) {
    env.observe(e, c.raw[t]);
    normalize(c.raw[t], c.obs[t]);
    std::copy(c.obs[t].begin(), c.obs[t].end(), c.actor.input(t));
    lap(c.time.observe);
    net.forward(packed_w_.data(), c.actor, t, t + 1);
    for (int k = 0; k < na; ++k) action[std::size_t(k)] = net.output(c.actor, t, k);
    if (squash) {  // a = scale tanh(z + std eps)
      c.eps.resize(std::size_t(W));
      c.th.resize(std::size_t(W));
      c.eps[t].resize(action.size());
      c.th[t].resize(action.size());
      for (std::size_t k = 0; k < action.size(); ++k) {
        c.eps[t][k] = S(gaussian(rngs_[i]));
        c.th[t][k] = std::tanh(action[k] + std::exp(log_std_[k]) * c.eps[t][k]);
        action[k] = scale * c.th[t][k];
      }
    } else if (options_.action_noise > 0) {
      for (S& a : action) a += S(options_.action_noise * gaussian(rngs_[i]));
    }
    lap(c.time.policy_forward);
    Result<S> cost = env.step(e, action);
    if (!cost) {
      // a copy whose step fails (a state that blew up) ends its window here and restarts its
      // episode; the window's updates are skipped, named by this message (step() below): the env
      // names the copy by its world (i, on any number of ranks) and the episode frame
      c.frames = t, c.done = true, c.failed = true;
      c.blowup = "the simulation step failed: " + cost.status().message();  // it names env i and the frame
      c.value = c.end_value = S(0);
      c.d_w.assign(w.size(), S(0));
      c.d_log_std.assign(log_std_.size(), S(0));
      lap(c.time.sim_forward);
      return Status::ok();
    }
    c.cost[t] = cost.value();
    if (kept) kept->push_back(env.state(e));
    value += discount * c.cost[t];
    discount *= g;
    if (env.terminated(e)) c.frames = t + 1, c.done = true;
    if (ahac) {
      c.contact.push_back(env.contact_measure(e));
      if (!c.done && double(c.contact.back()) > options_.ahac.contact_threshold) c.frames = t + 1, c.cut = true;
    }
    lap(c.time.sim_forward);
  }
  const int L = c.frames;
  env.observe(e, c.raw[L]);
  normalize(c.raw[L], c.obs[L]);
  lap(c.time.observe);
  // the bootstrap: the critic's value, or the pessimistic one of the double critic's (its gradient
  // flows through the critic that gave it)
  auto end_output = [&](int k) {
    critic_.resize(c.end[k], 1);
    std::copy(c.obs[L].begin(), c.obs[L].end(), c.end[k].input(0));
    critic_.forward(packed_end_[k].data(), c.end[k], 0, 1);
    return critic_.output(c.end[k], 0, 0);
  };
  const bool tc = options_.actor_target_critic;
  c.critic = 0;
  S end = end_output(0);
  if (!critic2_w_.empty())
    if (const S v2 = end_output(1); double_critic_value(end, v2) != end) end = v2, c.critic = 1;
  const std::vector<S>& vw = c.critic == 1 ? (tc ? target2_w_ : critic2_w_) : (tc ? target_w_ : critic_w_);
  c.end_value = c.done ? S(0) : end;
  value += discount * value_scale_ * c.end_value;
  c.value = share * value;
  lap(c.time.end_value);
  if (!backward) return Status::ok();
  // backward: the terminal value's input (none after a termination), then each frame, last first
  c.d_w.assign(w.size(), S(0));
  c.d_log_std.assign(log_std_.size(), S(0));
  const S d_end = c.done ? S(0) : share * discount * value_scale_;
  critic_.backward_samples(vw.data(), c.end[c.critic], &d_end, 0, 1, d_obs.data());
  lap(c.time.end_value);
  auto to_raw = [&](const std::vector<S>& d) {
    d_raw = d;
    if (!norm_inv_std_.empty())
      for (std::size_t k = 0; k < d.size(); ++k) d_raw[k] = d[k] * norm_inv_std_[k];
  };
  env.begin_backward(e);
  to_raw(d_obs);
  env.add_observation_adjoint(e, d_raw);
  lap(c.time.observe);
  const int start = c.start;
  for (int t = L - 1; t >= 0; --t) {
    discount /= g;
    Status st = env.backward_step(e, share * discount, d_action);
    if (!st) return st;
    lap(c.time.sim_backward);
    // the first frame, going back, whose action adjoint is not finite names the blow-up
    if (c.blowup.empty())
      for (S x : d_action)
        if (!is_finite(x)) {
          c.blowup = "env " + std::to_string(i) + ", episode frame " + std::to_string(start + t) +
                     ": the action gradient is not finite";
          break;
        }
    // a = scale tanh(u), u = z + std eps: z takes dJ/du, log std takes dJ/du std eps
    for (std::size_t k = 0; k < log_std_.size(); ++k) {
      d_action[k] *= scale * (S(1) - c.th[t][k] * c.th[t][k]);
      c.d_log_std[k] += d_action[k] * std::exp(log_std_[k]) * c.eps[t][k];
    }
    net.backward(w.data(), c.actor, d_action.data(), t, t + 1, c.d_w.data(), d_obs.data());
    lap(c.time.policy_backward);
    to_raw(d_obs);
    env.add_observation_adjoint(e, d_raw);
    lap(c.time.observe);
  }
  if (c.blowup.empty())
    for (S x : c.d_w)
      if (!is_finite(x)) {
        c.blowup = "env " + std::to_string(i) + ", episode frames " + std::to_string(start) + ".." +
                   std::to_string(start + L - 1) + ": the policy gradient is not finite";
        break;
      }
  lap(c.time.policy_backward);
  return Status::ok();
}

template <class S>
Status BatchShacTrainerT<S>::run_windows(const std::vector<S>& w, bool backward) {
  const int n = env_count(), begin = mine_.begin, end = mine_.end;
  for (int i = begin; i < end; ++i)
    if (copies_[i].failed || env_->terminated(i - begin) || env_->frame(i - begin) + window_frames() > env_->horizon())
      env_->reset(i - begin, &rngs_[i]);
  // the window's networks, packed once for every copy
  const bool tc = options_.actor_target_critic;
  env_->mlp().pack(w.data(), packed_w_);
  critic_.pack((tc ? target_w_ : critic_w_).data(), packed_end_[0]);
  if (!critic2_w_.empty()) critic_.pack((tc ? target2_w_ : critic2_w_).data(), packed_end_[1]);
  // copies one at a time to whichever thread is free (their windows differ in length where
  // episodes end): each copy computes the same bits on any thread
  const int threads = team_size(options_.thread_count);
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int i = begin; i < end; ++i) copies_[i].status = run_copy(i, w, backward);
  rollout_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rollout_threads_ = std::min(threads, std::max(end - begin, 1));
  if (Status st = gather_copies(backward); !st) return st;
  for (int i = 0; i < n; ++i)
    if (!copies_[i].status)
      return Status::error("SHAC window " + std::to_string(iteration_) + ": " + copies_[i].status.message());
  return Status::ok();
}

template <class S>
Result<S> BatchShacTrainerT<S>::actor_loss(const std::vector<S>& w, std::vector<S>* grad,
                                           std::vector<S>* grad_log_std) {
  const std::vector<std::mt19937_64> streams = rngs_;
  Status st = run_windows(w, grad != nullptr || grad_log_std != nullptr);
  for (int i = 0; i < env_->env_count(); ++i) env_->rewind(i);  // this rank's copies
  rngs_ = streams;
  if (!st) return st;
  S loss = S(0);
  for (const Copy& c : copies_) loss += c.value;
  if (grad) {
    grad->assign(w.size(), S(0));
    for (const Copy& c : copies_)
      for (std::size_t k = 0; k < w.size(); ++k) (*grad)[k] += c.d_w[k];
  }
  if (grad_log_std) {
    grad_log_std->assign(log_std_.size(), S(0));
    for (const Copy& c : copies_)
      for (std::size_t k = 0; k < log_std_.size(); ++k) (*grad_log_std)[k] += c.d_log_std[k];
  }
  return loss;
}

template <class S>
Result<BatchShacStats> BatchShacTrainerT<S>::step() {
  Status st = run_windows(w_, true);
  if (!st) return st;
  BatchShacStats stats;
  stats.iteration = iteration_;
  ShacWindowTimes& time = stats.time;
  for (int i = mine_.begin; i < mine_.end; ++i) time += copies_[i].time;
  time.rollout = rollout_;
  time.idle = std::max(0.0, rollout_threads_ * rollout_ - (time.sim_forward + time.sim_backward + time.policy_forward +
                                                           time.policy_backward + time.observe + time.end_value));
  Lap lap;
  std::vector<S> g(w_.size(), S(0));
  double cost_sum = 0;
  long long frames = 0;
  // the actor's parameters: the policy weights, then the learned std's logarithm
  const std::size_t nw = w_.size();
  g.resize(nw + log_std_.size(), S(0));
  for (const Copy& c : copies_) {
    stats.actor_loss += double(c.value);
    stats.end_value += double(c.end_value) / double(env_count());
    for (std::size_t k = 0; k < nw; ++k) g[k] += c.d_w[k];
    for (std::size_t k = 0; k < log_std_.size(); ++k) g[nw + k] += c.d_log_std[k];
    for (int t = 0; t < c.frames; ++t) cost_sum += double(c.cost[t]);
    frames += c.frames;
    stats.terminated += c.done ? 1 : 0;
  }
  const int n = env_count(), W = window_frames();
  stats.window_frames = W;
  stats.mean_cost = cost_sum / double(std::max(frames, 1LL));
  stats.value_share = std::pow(options_.gamma, W) * double(value_scale_) * stats.end_value / double(W) /
                      std::max(std::abs(stats.actor_loss), 1e-30);
  if (options_.lr_decay_windows > 0) {
    double f = std::max(0.0, 1.0 - double(iteration_) / double(options_.lr_decay_windows));
    actor_opt_.lr = options_.lr_end + (options_.actor_lr - options_.lr_end) * f;
    critic_opt_.lr = options_.lr_end + (options_.critic_lr - options_.lr_end) * f;
    critic2_opt_.lr = critic_opt_.lr;
  }
  // a failed step or an exploding gradient skips the window's updates: named by the first copy
  // whose step failed or whose gradient is not finite, or by the copy with the largest gradient
  for (int i = 0; i < n && stats.skip_reason.empty(); ++i) stats.skip_reason = copies_[i].blowup;
  stats.grad_norm = global_norm(g);
  if (stats.skip_reason.empty() && options_.grad_bound > 0 && stats.grad_norm > options_.grad_bound) {
    int worst = 0;
    double worst_norm = -1;
    for (int i = 0; i < n; ++i)
      if (const double v = global_norm(copies_[i].d_w); v > worst_norm) worst = i, worst_norm = v;
    const int start = copies_[worst].start;
    stats.skip_reason = "env " + std::to_string(worst) + ", episode frames " + std::to_string(start) + ".." +
                        std::to_string(start + copies_[worst].frames - 1) + ": the policy gradient's norm " +
                        std::to_string(stats.grad_norm) + " is above the bound " + std::to_string(options_.grad_bound) +
                        " (this copy's share: " + std::to_string(worst_norm) + ")";
  }
  stats.skipped = !stats.skip_reason.empty();
  if (stats.skipped) {
    stats.skip_reason = "SHAC window " + std::to_string(iteration_) + " skipped: " + stats.skip_reason;
    ++skipped_;
  } else {
    std::vector<S> theta = w_;
    theta.insert(theta.end(), log_std_.begin(), log_std_.end());
    actor_opt_.step(options_, theta, g);
    std::copy(theta.begin(), theta.begin() + long(nw), w_.begin());
    std::copy(theta.begin() + long(nw), theta.end(), log_std_.begin());
    lap(time.actor_step);
    fit_critic(stats);
    lap.t = std::chrono::steady_clock::now();
  }
  stats.skipped_windows = skipped_;
  adapt_horizon(stats);
  count_episodes(stats);
  // the window's observations join the running statistics (copy order), then episodes go on
  for (const Copy& c : copies_)
    for (int t = 0; t < c.frames; ++t) stats_.add(c.raw[t]);
  if (options_.normalize_observations && stats_.count > 1) {
    norm_mean_.assign(stats_.mean.begin(), stats_.mean.end());
    norm_inv_std_.resize(norm_mean_.size());
    for (std::size_t k = 0; k < norm_mean_.size(); ++k)
      norm_inv_std_[k] = S(1.0 / std::max(stats_.stddev(int(k)), 1e-4));
  }
  for (int i = 0; i < env_->env_count(); ++i) env_->clear_tape(i);
  lap(time.statistics);
  sim_steps_ += frames * env_->substeps();
  stats.sim_steps = sim_steps_;
  ++iteration_;
  if (distributed() && options_.fingerprint_every > 0 && iteration_ % options_.fingerprint_every == 0)
    if (Status check = check_replicas(); !check) return check;
  return stats;
}

// each copy's episode return grows by the window's rewards (minus its frame costs); an episode
// that ended with the window (terminated, or too near the horizon for the next window: the reset
// run_windows makes next) joins the last kTrainEpisodes, in copy order (the same on every rank);
// one whose step failed is dropped. Called after adapt_horizon: window_frames() is the next window's
template <class S>
void BatchShacTrainerT<S>::count_episodes(BatchShacStats& stats) {
  const int n = env_count(), W = window_frames(), T = env_->horizon();
  episode_return_.resize(std::size_t(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const Copy& c = copies_[std::size_t(i)];
    double& ret = episode_return_[std::size_t(i)];
    for (int t = 0; t < c.frames; ++t) ret -= double(c.cost[std::size_t(t)]);
    if (!c.failed && !c.done && c.start + c.frames + W <= T) continue;  // the episode goes on
    if (!c.failed) {
      recent_returns_.push_back(ret);
      if (int(recent_returns_.size()) > kTrainEpisodes) recent_returns_.pop_front();
    }
    ret = 0;
  }
  stats.train_episodes = int(recent_returns_.size());
  if (recent_returns_.empty()) return;
  double sum = 0;
  for (double r : recent_returns_) sum += r;
  stats.train_return = sum / double(recent_returns_.size());
}

template <class S>
void BatchShacTrainerT<S>::fit_critic(BatchShacStats& stats) {
  const S g = S(options_.gamma), lam = S(options_.lambda), inv_scale = S(1) / value_scale_;
  const int threads = team_size(options_.thread_count), no = critic_.input_size();
  Lap lap;
  // TD(lambda) targets with the target critic(s), in critic units (mean frame cost): every
  // window's states after its first frame through the target critic(s) in one batch
  typename MlpT<S>::Batch& batch = fit_batch_;
  std::vector<int> first;  // the copy's first sample in the batch
  int count = 0;
  for (const Copy& c : copies_) first.push_back(count), count += c.frames;
  const bool two = !critic2_w_.empty();
  std::vector<S> v0(static_cast<std::size_t>(count)), v1(two ? static_cast<std::size_t>(count) : 0);
  critic_.resize(batch, count);
  for (std::size_t i = 0; i < copies_.size(); ++i)
    for (int t = 1; t <= copies_[i].frames; ++t)
      std::copy(copies_[i].obs[t].begin(), copies_[i].obs[t].end(), batch.input(first[i] + t - 1));
  for (int k = 0; k < (two ? 2 : 1); ++k) {
    critic_.pack((k == 0 ? target_w_ : target2_w_).data(), packed_fit_);
    std::vector<S>& v = k == 0 ? v0 : v1;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int q = 0; q < count; ++q) {
      critic_.forward(packed_fit_.data(), batch, q, q + 1);
      v[std::size_t(q)] = critic_.output(batch, q, 0);
    }
  }
  std::vector<const std::vector<S>*> xs;
  std::vector<S> ys, v, target;
  for (std::size_t i = 0; i < copies_.size(); ++i) {
    const Copy& c = copies_[i];
    // a terminated episode's last state is worth nothing
    const int L = c.frames;
    v.assign(std::size_t(L + 1), S(0));
    for (int t = 1; t <= L; ++t) {
      const std::size_t q = std::size_t(first[i] + t - 1);
      v[t] = value_scale_ * (two ? double_critic_value(v0[q], v1[q]) : v0[q]);
    }
    if (c.done) v[L] = S(0);
    td_lambda_targets(c.cost, v, L, g, lam, target);
    for (int t = 0; t < L; ++t) {
      xs.push_back(&c.obs[t]);
      ys.push_back(target[t] * inv_scale);
    }
  }
  lap(stats.time.critic_targets);
  const int m = int(xs.size()), batches = std::min(options_.critic_minibatches, m), size = m / batches;
  std::vector<int> order(static_cast<std::size_t>(m));
  for (int k = 0; k < m; ++k) order[k] = k;
  std::vector<S> grad, err(static_cast<std::size_t>(size)), d_out(static_cast<std::size_t>(size));
  critic_.resize(batch, size);
  const int rows = critic_.row_count();
  // one minibatch step of a critic on the samples order[b size, (b + 1) size); its mean squared
  // error. The samples run on the threads, then the gradient's rows (each summed in sample order)
  auto fit = [&](std::vector<S>& cw, Adam& opt, int b) {
    grad.assign(cw.size(), S(0));
    critic_.pack(cw.data(), packed_fit_);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
      for (int j = 0; j < size; ++j) {
        const std::vector<S>& x = *xs[order[b * size + j]];
        std::copy(x.begin(), x.begin() + no, batch.input(j));
        critic_.forward(packed_fit_.data(), batch, j, j + 1);
        err[j] = critic_.output(batch, j, 0) - ys[order[b * size + j]];
        d_out[j] = S(2) * err[j] / S(size);
        critic_.backward_samples(cw.data(), batch, &d_out[j], j, j + 1, nullptr);
      }
#pragma omp for schedule(dynamic, 4)
      for (int r = 0; r < rows; ++r) critic_.accumulate(batch, 0, size, r, r + 1, grad.data());
    }
    double loss = 0;
    for (int j = 0; j < size; ++j) loss += double(err[j] * err[j]) / size;
    opt.step(options_, cw, grad);
    return loss;
  };
  // AHAC's second critic fits the same targets on the same minibatches; the loss shown is their mean
  for (int pass = 0; pass < options_.critic_passes; ++pass) {
    for (int k = m - 1; k > 0; --k) std::swap(order[k], order[int(rng_() % std::uint64_t(k + 1))]);
    for (int b = 0; b < batches; ++b) {
      const double loss = fit(critic_w_, critic_opt_, b);
      stats.critic_loss = two ? 0.5 * (loss + fit(critic2_w_, critic2_opt_, b)) : loss;
    }
  }
  const S a = S(options_.target_alpha);
  for (std::size_t k = 0; k < target_w_.size(); ++k) target_w_[k] = a * target_w_[k] + (S(1) - a) * critic_w_[k];
  for (std::size_t k = 0; k < target2_w_.size(); ++k) target2_w_[k] = a * target2_w_[k] + (S(1) - a) * critic2_w_[k];
  lap(stats.time.critic_fit);
}

template <class S>
void td_lambda_targets(const std::vector<S>& cost, const std::vector<S>& value, int frames, S gamma, S lambda,
                       std::vector<S>& target) {
  target.assign(std::size_t(frames + 1), S(0));
  target[frames] = value[frames];
  for (int t = frames - 1; t >= 0; --t)
    target[t] = cost[t] + gamma * ((S(1) - lambda) * value[t + 1] + lambda * target[t + 1]);
}

template <class S>
S BatchShacTrainerT<S>::critic_output(const std::vector<S>& obs, int k, bool target) const {
  const std::vector<S>& cw = k == 0 ? (target ? target_w_ : critic_w_) : (target ? target2_w_ : critic2_w_);
  std::vector<S> out;
  critic_.forward(cw.data(), obs, out);
  return out[0];
}

template <class S>
S BatchShacTrainerT<S>::value(const std::vector<S>& obs, bool target) const {
  const S v = critic_output(obs, 0, target);
  return value_scale_ * (critic2_w_.empty() ? v : double_critic_value(v, critic_output(obs, 1, target)));
}

template <class S>
int BatchShacTrainerT<S>::window_frames() const {
  if (!options_.ahac.enabled) return options_.window;
  return std::clamp(int(std::floor(horizon_)), options_.ahac.horizon_min, options_.window);
}

template <class S>
void BatchShacTrainerT<S>::adapt_horizon(BatchShacStats& stats) {
  stats.horizon = horizon_;
  if (!options_.ahac.enabled) return;
  // every copy's frames in copy order (the same sums on every rank)
  const double C = options_.ahac.contact_threshold;
  double violation = 0, measure = 0;
  long long frames = 0;
  for (const Copy& c : copies_) {
    stats.contact_cut += c.cut ? 1 : 0;
    for (S m : c.contact) violation += (double(m) - C) / C, measure += double(m), ++frames;
  }
  const double d = double(std::max(frames, 1LL));
  stats.contact_mean = measure / d;
  const AhacHorizon next = ahac_dual_step(options_.ahac, options_.window, dual_, violation / d);
  dual_ = next.dual, horizon_ = next.horizon;
  stats.horizon = horizon_;
  stats.dual = dual_;
}

template <class S>
Result<S> BatchShacTrainerT<S>::evaluate(const std::function<void(int t, const PolicyEnvT<S>& env)>& observe) {
  PolicyEnvT<S>& env = *eval_;
  const MlpT<S>& net = env.mlp();
  env.reset(0, nullptr);
  std::vector<S> raw, obs, action(static_cast<std::size_t>(net.output_size())), packed;
  net.pack(w_.data(), packed);
  typename MlpT<S>::Batch b;
  net.resize(b, 1);
  S sum = S(0);
  eval_failure_.clear();
  for (int t = 0; t < env.horizon(); ++t) {
    env.observe(0, raw);
    normalize(raw, obs);
    std::copy(obs.begin(), obs.end(), b.input(0));
    net.forward(packed.data(), b, 0, 1);
    for (std::size_t k = 0; k < action.size(); ++k) action[k] = net.output(b, 0, int(k));
    Result<S> c = env.step(0, action);
    if (!c) {  // the episode ends at the failed step; its reward stops there
      eval_failure_ = "SHAC evaluation: " + c.status().message() + " (the episode ends there)";
      env.clear_tape(0);
      break;
    }
    env.clear_tape(0);
    sum += c.value();
    if (observe) observe(t + 1, env);
    if (env.terminated(0)) break;  // the episode ended early: its reward stops there
  }
  return sum / S(env.horizon());
}

template class BatchShacTrainerT<float>;
template class BatchShacTrainerT<double>;
template void td_lambda_targets(const std::vector<float>&, const std::vector<float>&, int, float, float,
                                std::vector<float>&);
template void td_lambda_targets(const std::vector<double>&, const std::vector<double>&, int, double, double,
                                std::vector<double>&);

}  // namespace adj::optim
