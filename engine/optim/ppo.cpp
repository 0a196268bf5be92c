#include "engine/optim/ppo.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace adj::optim {

namespace {

constexpr double k_log_sqrt_2pi = 0.91893853320467274178;

// std::uniform/normal distributions differ between standard libraries: draw by hand
double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

double normal(std::mt19937_64& rng) {
  // Box-Muller, one value per call
  double u1 = std::max(uniform01(rng), 1e-300), u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace

void RunningMeanStd::resize(int n) {
  mean.assign(std::size_t(n), 0.0);
  var.assign(std::size_t(n), 1.0);
  count = 0;
}

void RunningMeanStd::update(const double* x, int rows) {
  if (rows < 1) return;
  const int n = size();
  for (int k = 0; k < n; ++k) {
    double m = 0, v = 0;
    for (int r = 0; r < rows; ++r) m += x[r * n + k];
    m /= rows;
    for (int r = 0; r < rows; ++r) v += (x[r * n + k] - m) * (x[r * n + k] - m);
    v /= rows;
    if (count == 0) {
      mean[k] = m, var[k] = v;
      continue;
    }
    // Chan et al.: the merged population variance of both sets
    const double total = count + rows, d = m - mean[k];
    mean[k] += d * rows / total;
    var[k] = (var[k] * count + v * rows + d * d * count * rows / total) / total;
  }
  count += rows;
}

void RunningMeanStd::normalize(std::vector<double>& x, double clip) const {
  for (int k = 0; k < size(); ++k) x[k] = std::clamp((x[k] - mean[k]) / std::sqrt(var[k] + 1e-8), -clip, clip);
}

void generalized_advantages(const std::vector<GaeFrame>& frames, double last_value, double gamma, double lambda,
                            std::vector<double>& adv) {
  const int n = int(frames.size());
  adv.assign(std::size_t(n), 0.0);
  double next_adv = 0, next_value = last_value;
  for (int t = n - 1; t >= 0; --t) {
    const GaeFrame& f = frames[t];
    // an ended episode bootstraps from its last state and carries nothing from the next one
    if (f.done) next_value = f.boot, next_adv = 0;
    const double delta = f.reward + gamma * next_value - f.value;
    adv[t] = next_adv = delta + gamma * lambda * next_adv;
    next_value = f.value;
  }
}

PpoTrainer::PpoTrainer() = default;
PpoTrainer::~PpoTrainer() = default;
PpoTrainer::PpoTrainer(PpoTrainer&&) noexcept = default;
PpoTrainer& PpoTrainer::operator=(PpoTrainer&&) noexcept = default;

const MlpT<double>& PpoTrainer::net() const { return env_->mlp(); }
int PpoTrainer::env_count() const { return total_; }

Result<PpoTrainer> PpoTrainer::create(const TaskT<double>& task, PpoOptions options, PolicyEnvOptions env_options) {
  const std::string where = "task '" + task.task().name + "' (PPO)";
  bool ok = options.steps_per_env >= 1 && options.epochs >= 1 && options.minibatches >= 1 && options.lr > 0 &&
            options.clip_ratio > 0 && options.value_clip >= 0 && options.gamma > 0 && options.gamma <= 1 &&
            options.lambda >= 0 && options.lambda <= 1 && options.entropy_coef >= 0 && options.obs_clip > 0 &&
            options.reward_clip > 0 && options.lr_anneal_steps >= 0;
  for (int h : options.value_hidden) ok = ok && h >= 1;
  if (!ok)
    return Status::error(where +
                         ": options out of range (steps_per_env, epochs, minibatches, value_hidden >= 1; "
                         "lr, clip_ratio, obs_clip, reward_clip > 0; value_clip, entropy_coef, lr_anneal_steps >= "
                         "0; gamma in (0, 1]; lambda in [0, 1])");
  env_options.thread_count = options.thread_count;
  // with ranks, this rank's env holds its block of the copies (randomized worlds keep their index)
  const int copies = env_options.env_count, ranks = options.comm ? options.comm->size() : 1;
  if (copies < ranks)
    return Status::error(where + ": " + std::to_string(copies) + " copies cannot be shared by " +
                         std::to_string(ranks) + " ranks (each needs one at least)");
  const dist::Block mine = dist::block(copies, options.comm ? options.comm->rank() : 0, ranks);
  env_options.env_count = mine.count();
  env_options.world_begin = mine.begin;
  auto envs = make_policy_envs(task, env_options, where);
  if (!envs) return envs.status();
  if (options.minibatches > copies * options.steps_per_env)
    return Status::error(where + ": options out of range (minibatches > env_count x steps_per_env)");
  PpoTrainer r;
  r.options_ = options;
  r.rng_.seed(options.seed);
  r.mine_ = mine;
  r.total_ = copies;
  for (int i = 0; i < copies; ++i) r.rngs_.emplace_back(options.seed * 1000003ull + std::uint64_t(i) + 1);
  r.env_ = std::move(envs->train);
  r.eval_ = std::move(envs->eval);
  r.substeps_ = r.env_->substeps();
  const MlpT<double>& net = r.env_->mlp();
  const int nw = net.weight_count(), na = net.output_size(), no = net.input_size();
  r.pi_.assign(std::size_t(nw + na), options.initial_log_std);
  net.init_weights(r.pi_.data(), task.task().seed);  // the network BPTT starts from
  std::vector<int> sizes{no};
  sizes.insert(sizes.end(), options.value_hidden.begin(), options.value_hidden.end());
  sizes.push_back(1);
  r.value_net_ = MlpT<double>(sizes, 1.0, true);
  r.v_.assign(std::size_t(r.value_net_.weight_count()), 0.0);
  r.value_net_.init_weights(r.v_.data(), r.rng_());
  scene::OptimizerSpec os{scene::OptimizerKind::adam, options.lr, options.max_grad_norm, 0};
  r.pi_opt_ = OptimizerT<double>(os, nw + na);
  r.v_opt_ = OptimizerT<double>(os, r.value_net_.weight_count());
  r.obs_rms_.resize(no);
  r.ret_rms_.resize(1);
  r.disc_return_.assign(std::size_t(copies), 0.0);
  r.ep_return_.assign(std::size_t(copies), 0.0);
  // every copy starts an episode; the statistics start from their first observations
  r.obs_.resize(std::size_t(copies));
  std::vector<double> raw;
  for (int i = mine.begin; i < mine.end; ++i) {
    r.env_->reset(i - mine.begin, &r.rngs_[std::size_t(i)]);
    r.env_->observe(i - mine.begin, r.obs_[std::size_t(i)]);
    raw.insert(raw.end(), r.obs_[std::size_t(i)].begin(), r.obs_[std::size_t(i)].end());
  }
  if (Status st = r.gather_copies(raw, no); !st) return Status::error(where + ": " + st.message());
  if (Status st = r.broadcast_weights(); !st) return Status::error(where + ": " + st.message());
  if (options.normalize_observations) {
    r.obs_rms_.update(raw.data(), copies);
    for (int i = mine.begin; i < mine.end; ++i) r.obs_rms_.normalize(r.obs_[std::size_t(i)], options.obs_clip);
  }
  return r;
}

void PpoTrainer::observe_normalized(PolicyEnvT<double>& env, int i, std::vector<double>& obs) {
  env.observe(i, obs);
  if (!options_.normalize_observations) return;
  obs_rms_.normalize(obs, options_.obs_clip);
}

double PpoTrainer::value_of(const std::vector<double>& obs) const {
  std::vector<double> out;
  value_net_.forward(v_.data(), obs, out);
  return out[0];
}

Result<double> PpoTrainer::evaluate(const std::function<void(int t, const PolicyEnvT<double>& env)>& observe) {
  std::vector<double> obs, mean;
  eval_->reset(0, nullptr);
  double sum = 0;
  eval_failure_.clear();
  for (int t = 0; t < eval_->horizon(); ++t) {
    observe_normalized(*eval_, 0, obs);
    net().forward(pi_.data(), obs, mean);
    Result<double> cost = eval_->step(0, mean);
    eval_->clear_tape(0);
    if (!cost) {  // the episode ends at the failed step; its cost stops there
      eval_failure_ = "PPO evaluation: " + cost.status().message() + " (the episode ends there)";
      break;
    }
    sum += cost.value();
    if (observe) observe(t + 1, *eval_);
  }
  return sum / double(eval_->horizon());
}

// every copy runs steps_per_env frames; a copy whose episode reaches the horizon restarts.
// A rank steps its own copies; the statistics and the batch are every copy's (gathered)
Status PpoTrainer::collect(PpoIteration& it) {
  const int n = total_, T = options_.steps_per_env, begin = mine_.begin, end = mine_.end;
  const int nw = net().weight_count(), na = net().output_size(), no = net().input_size();
  const double bound = net().output_scale();
  batch_.assign(std::size_t(n) * T, Sample{});
  failure_.assign(std::size_t(n), std::string());
  std::vector<double> mean, applied(static_cast<std::size_t>(na)), raw, returns;
  // the first copies' frames (keep_copy_frames), of those this rank steps
  for (int i = begin; i < end && std::size_t(i) < copy_frames_.size(); ++i)
    copy_frames_[std::size_t(i)].assign(1, env_->state(i - begin));
  for (int t = 0; t < T; ++t) {
    raw.clear(), returns.clear();
    for (int i = begin; i < end; ++i) {
      const int e = i - begin;  // the copy in this rank's env
      Sample& s = batch_[std::size_t(t) * n + i];
      s.obs = obs_[i];
      net().forward(pi_.data(), s.obs, mean);
      s.action = mean;
      for (int k = 0; k < na; ++k) {
        const double z = normal(rngs_[std::size_t(i)]), ls = pi_[nw + k];
        s.action[k] = mean[k] + std::exp(ls) * z;
        s.logp += -0.5 * z * z - ls - k_log_sqrt_2pi;
        applied[k] = std::clamp(s.action[k], -bound, bound);
      }
      s.value = value_of(s.obs);
      Result<double> cost = env_->step(e, applied);
      if (!cost) {
        // a copy whose step fails (a state that blew up) does not end the run: its episode
        // restarts, the frame's reward is 0, and iterate() skips the update, naming it
        if (failure_[std::size_t(i)].empty())
          failure_[std::size_t(i)] = "the simulation step failed: " + cost.status().message();
        ep_return_[i] = disc_return_[i] = 0;
        env_->reset(e, &rngs_[std::size_t(i)]);
        cost = 0.0;
      }
      env_->clear_tape(e);
      if (std::size_t(i) < copy_frames_.size()) copy_frames_[std::size_t(i)].push_back(env_->state(e));
      s.reward = s.unscaled = -cost.value();
      ep_return_[i] += s.reward;
      disc_return_[i] = options_.gamma * disc_return_[i] + s.reward * options_.reward_scale;
      returns.push_back(disc_return_[i]);
      s.done = env_->frame(e) >= env_->horizon();
      env_->observe(e, obs_[i]);
      raw.insert(raw.end(), obs_[i].begin(), obs_[i].end());
    }
    // the statistics take this frame's observations and returns of every copy, in copy order
    if (Status st = gather_copies(raw, no); !st) return st;
    if (Status st = gather_copies(returns, 1); !st) return st;
    if (options_.normalize_observations) obs_rms_.update(raw.data(), n);
    if (options_.normalize_rewards) ret_rms_.update(returns.data(), n);
    for (int i = begin; i < end; ++i) {
      Sample& s = batch_[std::size_t(t) * n + i];
      s.reward *= options_.reward_scale;
      if (options_.normalize_rewards)
        s.reward =
            std::clamp(s.reward / std::sqrt(ret_rms_.var[0] + 1e-8), -options_.reward_clip, options_.reward_clip);
      if (options_.normalize_observations) obs_rms_.normalize(obs_[i], options_.obs_clip);
      if (!s.done) continue;
      // a time limit: the last state's value stands for the rest of the return
      s.boot = value_of(obs_[i]);
      s.episode_return = ep_return_[i];
      ep_return_[i] = disc_return_[i] = 0;
      env_->reset(i - begin, &rngs_[std::size_t(i)]);
      observe_normalized(*env_, i - begin, obs_[i]);
    }
  }
  last_value_.assign(std::size_t(n), 0.0);
  for (int i = begin; i < end; ++i) last_value_[i] = value_of(obs_[i]);
  sim_steps_ += (long long)substeps_ * n * T;
  if (Status st = gather_samples(); !st) return st;
  // the iteration's numbers, summed frame by frame and copy by copy
  double reward_sum = 0, finished = 0;
  for (const Sample& s : batch_) {
    reward_sum += s.unscaled;
    if (s.done) ++it.episodes, finished += s.episode_return;
  }
  it.mean_reward = reward_sum / double(n * T);
  if (it.episodes > 0) last_mean_return_ = finished / it.episodes;
  it.mean_return = last_mean_return_;
  return Status::ok();
}

Status PpoTrainer::gather_copies(std::vector<double>& values, int width) {
  if (!distributed()) return Status::ok();
  return dist::allgather_blocks(*options_.comm, values, total_, width, "copies (PPO)");
}

Status PpoTrainer::gather_samples() {
  if (!distributed()) return Status::ok();
  const int n = total_, T = options_.steps_per_env;
  dist::Bytes mine;
  dist::ByteWriter out(mine);
  for (int i = mine_.begin; i < mine_.end; ++i) {
    out.put(last_value_[i]), out.put_string(failure_[std::size_t(i)]);
    for (int t = 0; t < T; ++t) {
      const Sample& s = batch_[std::size_t(t) * n + i];
      out.put_vector(s.obs), out.put_vector(s.action);
      out.put(s.logp), out.put(s.value), out.put(s.reward), out.put(s.boot), out.put(s.unscaled);
      out.put(s.episode_return), out.put(s.done);
    }
  }
  std::vector<dist::Bytes> parts;
  if (Status st = options_.comm->allgather(mine, parts); !st) return st;
  for (int r = 0; r < int(parts.size()); ++r) {
    if (r == options_.comm->rank()) continue;
    const dist::Block b = dist::block(n, r, int(parts.size()));
    dist::ByteReader in(parts[r]);
    bool ok = true;
    for (int i = b.begin; i < b.end && ok; ++i) {
      ok = in.get(last_value_[i]) && in.get_string(failure_[std::size_t(i)]);
      for (int t = 0; t < T && ok; ++t) {
        Sample& s = batch_[std::size_t(t) * n + i];
        ok = in.get_vector(s.obs) && in.get_vector(s.action) && in.get(s.logp) && in.get(s.value) && in.get(s.reward) &&
             in.get(s.boot) && in.get(s.unscaled) && in.get(s.episode_return) && in.get(s.done);
      }
    }
    if (!ok || !in.done()) return Status::error("PPO: rank " + std::to_string(r) + "'s samples arrived malformed");
  }
  return Status::ok();
}

Status PpoTrainer::broadcast_weights() {
  if (!distributed()) return Status::ok();
  dist::Bytes bytes;
  dist::ByteWriter out(bytes);
  out.put_vector(pi_), out.put_vector(v_);
  if (Status st = options_.comm->broadcast(bytes, 0); !st) return st;
  dist::ByteReader in(bytes);
  if (!(in.get_vector(pi_) && in.get_vector(v_) && in.done()))
    return Status::error("rank 0's weights arrived malformed on rank " + std::to_string(options_.comm->rank()));
  return Status::ok();
}

Status PpoTrainer::check_replicas() {
  return dist::compare_fingerprints(*options_.comm, fingerprint(),
                                    "PPO, after " + std::to_string(iteration_) + " iterations");
}

void PpoTrainer::advantages() {
  const int n = env_count(), T = options_.steps_per_env;
  std::vector<GaeFrame> frames(static_cast<std::size_t>(T));
  std::vector<double> adv;
  for (int i = 0; i < n; ++i) {
    for (int t = 0; t < T; ++t) {
      const Sample& s = batch_[std::size_t(t) * n + i];
      frames[t] = {s.reward, s.value, s.done, s.boot};
    }
    generalized_advantages(frames, last_value_[i], options_.gamma, options_.lambda, adv);
    for (int t = 0; t < T; ++t) {
      Sample& s = batch_[std::size_t(t) * n + i];
      s.adv = adv[t];
      s.ret = adv[t] + s.value;
    }
  }
}

void PpoTrainer::keep_copy_frames(int copies) {
  copy_frames_.assign(std::size_t(std::clamp(copies, 0, env_count())), {});
}

Result<PpoIteration> PpoTrainer::iterate() {
  auto t0 = std::chrono::steady_clock::now();
  PpoIteration it;
  it.iteration = iteration_++;
  // linear annealing over the budget, set before the batch is collected
  double frac = 1.0;
  if (options_.lr_anneal_steps > 0) frac = std::max(0.0, 1.0 - double(sim_steps_) / double(options_.lr_anneal_steps));
  it.lr = options_.lr * frac;
  pi_opt_.set_lr(it.lr);
  v_opt_.set_lr(it.lr);
  if (Status st = collect(it); !st) return st;
  for (const std::string& f : failure_)
    if (!f.empty()) {
      it.skipped = true;
      it.skip_reason = "PPO iteration " + std::to_string(it.iteration) + " skipped: " + f;
      ++skipped_;
      break;
    }
  if (!it.skipped) {
    advantages();
    update(it);
  }
  it.skipped_iterations = skipped_;
  if (distributed() && options_.fingerprint_every > 0 && iteration_ % options_.fingerprint_every == 0)
    if (Status st = check_replicas(); !st) return st;
  it.sim_steps = sim_steps_;
  it.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return it;
}

void PpoTrainer::update(PpoIteration& it) {
  const int n = int(batch_.size()), mb = n / options_.minibatches;
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int epoch = 0; epoch < options_.epochs; ++epoch) {
    // Fisher-Yates with our own draws (std::shuffle's use of the engine is unspecified)
    for (int i = n - 1; i > 0; --i) std::swap(order[i], order[int(rng_() % std::uint64_t(i + 1))]);
    it.approx_kl = 0;
    for (int m = 0; m < options_.minibatches; ++m) minibatch_step(order.data() + std::ptrdiff_t(m) * mb, mb, it);
    it.approx_kl /= options_.minibatches;
  }
}

// one Adam step of each network on the samples idx[0..n)
void PpoTrainer::minibatch_step(const int* idx, int n, PpoIteration& it) {
  const int nw = net().weight_count(), na = net().output_size();
  // the advantages normalized over the minibatch
  double am = 0, av = 0;
  for (int q = 0; q < n; ++q) am += batch_[idx[q]].adv;
  am /= n;
  for (int q = 0; q < n; ++q) av += (batch_[idx[q]].adv - am) * (batch_[idx[q]].adv - am);
  const double asd = std::sqrt(av / n) + 1e-8;
  std::vector<double> g_pi(pi_.size(), 0.0), g_v(v_.size(), 0.0), mean, d_out(static_cast<std::size_t>(na)), d_in, val,
      d_val(1);
  double pl = 0, vl = 0, kl = 0;
  const double eps = options_.clip_ratio, vc = options_.value_clip;
  for (int q = 0; q < n; ++q) {
    const Sample& s = batch_[idx[q]];
    const double adv = (s.adv - am) / asd;
    net().forward(pi_.data(), s.obs, mean);
    double logp = 0;
    for (int k = 0; k < na; ++k) {
      const double ls = pi_[nw + k], z = (s.action[k] - mean[k]) * std::exp(-ls);
      logp += -0.5 * z * z - ls - k_log_sqrt_2pi;
    }
    const double ratio = std::exp(logp - s.logp), clipped = std::clamp(ratio, 1 - eps, 1 + eps);
    pl -= std::min(ratio * adv, clipped * adv) / n;
    kl += (ratio - 1 - (logp - s.logp)) / n;
    // d(-surrogate)/d logp: the unclipped branch carries the gradient, the clipped one none
    const double g = ratio * adv <= clipped * adv ? -ratio * adv / n : 0.0;
    if (g != 0.0) {
      for (int k = 0; k < na; ++k) {
        const double ls = pi_[nw + k], inv_var = std::exp(-2 * ls), d = s.action[k] - mean[k];
        d_out[k] = g * d * inv_var;
        g_pi[nw + k] += g * (d * d * inv_var - 1);
      }
      net().backward(pi_.data(), s.obs, d_out, g_pi.data(), d_in);
    }
    // the value loss 0.5 max((v - R)^2, (v_clipped - R)^2), v_clipped within vc of the old value
    value_net_.forward(v_.data(), s.obs, val);
    const double v = val[0], e1 = v - s.ret;
    double d_v = e1, l = e1 * e1;
    if (vc > 0) {
      const double dv = v - s.value, vcl = s.value + std::clamp(dv, -vc, vc), e2 = vcl - s.ret;
      if (e2 * e2 > l) l = e2 * e2, d_v = std::abs(dv) < vc ? e2 : 0.0;
    }
    vl += 0.5 * l / n;
    d_val[0] = options_.value_coef * d_v / n;
    if (d_val[0] != 0.0) value_net_.backward(v_.data(), s.obs, d_val, g_v.data(), d_in);
  }
  // the entropy bonus: H = sum of log sigma + const, so -coef per log sigma
  for (int k = 0; k < na; ++k) g_pi[nw + k] -= options_.entropy_coef;
  pi_opt_.step(pi_, g_pi);
  v_opt_.step(v_, g_v);
  it.policy_loss = pl;
  it.value_loss = vl;
  it.approx_kl += kl;
}

}  // namespace adj::optim
