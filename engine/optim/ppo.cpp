#include "engine/optim/ppo.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

void Mlp::init(std::vector<int> layer_sizes, std::mt19937_64& rng) {
  sizes = std::move(layer_sizes);
  w.clear();
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    int in = sizes[l], out = sizes[l + 1];
    double a = std::sqrt(6.0 / (in + out));
    for (int k = 0; k < in * out; ++k) w.push_back(a * (2 * uniform01(rng) - 1));
    for (int k = 0; k < out; ++k) w.push_back(0.0);
  }
}

double Mlp::forward(const std::vector<double>& x) const {
  std::vector<double> a = x, z;
  const double* W = w.data();
  const int L = int(sizes.size()) - 1;
  for (int l = 0; l < L; ++l) {
    int in = sizes[l], n = sizes[l + 1];
    z.assign(n, 0.0);
    for (int r = 0; r < n; ++r) {
      double s = W[in * n + r];
      for (int c = 0; c < in; ++c) s += W[r * in + c] * a[c];
      z[r] = l == L - 1 ? s : std::tanh(s);
    }
    W += (in + 1) * n;
    a.swap(z);
  }
  return a[0];
}

void Mlp::backward(const std::vector<double>& x, double d_out, double* d_w) const {
  const int L = int(sizes.size()) - 1;
  std::vector<std::vector<double>> act(L + 1);
  std::vector<int> off(L);
  act[0] = x;
  for (int l = 0, o = 0; l < L; ++l) {
    int in = sizes[l], n = sizes[l + 1];
    off[l] = o;
    act[l + 1].assign(n, 0.0);
    for (int r = 0; r < n; ++r) {
      double s = w[o + in * n + r];
      for (int c = 0; c < in; ++c) s += w[o + r * in + c] * act[l][c];
      act[l + 1][r] = l == L - 1 ? s : std::tanh(s);
    }
    o += (in + 1) * n;
  }
  std::vector<double> da(sizes.back(), 0.0), dz;
  da[0] = d_out;
  for (int l = L - 1; l >= 0; --l) {
    int in = sizes[l], n = sizes[l + 1], o = off[l];
    dz.assign(n, 0.0);
    for (int r = 0; r < n; ++r) dz[r] = l == L - 1 ? da[r] : da[r] * (1 - act[l + 1][r] * act[l + 1][r]);
    std::vector<double> prev(in, 0.0);
    for (int r = 0; r < n; ++r) {
      d_w[o + in * n + r] += dz[r];
      for (int c = 0; c < in; ++c) {
        d_w[o + r * in + c] += dz[r] * act[l][c];
        prev[c] += w[o + r * in + c] * dz[r];
      }
    }
    da.swap(prev);
  }
}

PpoTrainer::PpoTrainer() = default;
PpoTrainer::~PpoTrainer() = default;
PpoTrainer::PpoTrainer(PpoTrainer&&) noexcept = default;
PpoTrainer& PpoTrainer::operator=(PpoTrainer&&) noexcept = default;

Result<PpoTrainer> PpoTrainer::create(const TaskT<double>& task, PpoOptions options, PolicyEnvOptions env_options) {
  const std::string where = "task '" + task.task().name + "' (PPO)";
  if (options.episodes_per_iteration < 1 || options.epochs < 1 || options.minibatch < 1 || !(options.lr > 0) ||
      !(options.clip_ratio > 0) || options.value_hidden < 1 || !(options.gamma > 0 && options.gamma <= 1) ||
      !(options.lambda >= 0 && options.lambda <= 1))
    return Status::error(where +
                         ": options out of range (episodes, epochs, minibatch, value_hidden >= 1; "
                         "lr, clip_ratio > 0; gamma in (0, 1]; lambda in [0, 1])");
  env_options.thread_count = options.thread_count;
  auto envs = make_policy_envs(task, env_options, where);
  if (!envs) return envs.status();
  PpoTrainer r;
  r.options_ = options;
  r.rng_.seed(options.seed);
  r.env_ = std::move(envs->train);
  r.eval_ = std::move(envs->eval);
  r.substeps_ = r.env_->substeps();
  const MlpT<double>& net = r.env_->mlp();
  const int nw = net.weight_count(), na = net.output_size();
  r.pi_.assign(nw + na, options.initial_log_std);
  net.init_weights(r.pi_.data(), task.task().seed);  // the network BPTT starts from
  r.value_.init({net.input_size(), options.value_hidden, 1}, r.rng_);
  r.v_ = r.value_.w;
  scene::OptimizerSpec os{scene::OptimizerKind::adam, options.lr, options.max_grad_norm, 0};
  r.pi_opt_ = OptimizerT<double>(os, nw + na);
  r.v_opt_ = OptimizerT<double>(os, r.value_.weight_count());
  return r;
}

Result<double> PpoTrainer::env_episode(bool sample, std::vector<Sample>* out, int copy) {
  PolicyEnvT<double>& env = sample ? *env_ : *eval_;
  const int i = sample ? copy % env.env_count() : 0;
  const int nw = net().weight_count(), na = net().output_size();
  env.reset(i, sample ? &rng_ : nullptr);
  std::vector<double> obs, mean;
  double sum = 0;
  for (int t = 0; t < env.horizon(); ++t) {
    env.observe(i, obs);
    net().forward(pi_.data(), obs, mean);
    Sample smp;
    smp.action = mean;
    if (sample) {
      for (int k = 0; k < na; ++k) {
        double e = normal(rng_), ls = pi_[nw + k];
        smp.action[k] = mean[k] + std::exp(ls) * e;
        smp.logp += -0.5 * e * e - ls - k_log_sqrt_2pi;
      }
      smp.value = value_.forward(obs);
    }
    Result<double> cost = env.step(i, smp.action);
    if (!cost) return Status::error("PPO episode: " + cost.status().message());
    env.clear_tape(i);
    if (sample) sim_steps_ += substeps_;
    smp.reward = -cost.value();
    sum += cost.value();
    if (out) {
      smp.obs = obs;
      out->push_back(std::move(smp));
    }
  }
  return sum / double(env.horizon());
}

Result<double> PpoTrainer::evaluate() { return env_episode(false, nullptr, 0); }

Result<PpoIteration> PpoTrainer::iterate() {
  auto t0 = std::chrono::steady_clock::now();
  PpoIteration it;
  it.iteration = iteration_++;
  std::vector<Sample> batch;
  for (int e = 0; e < options_.episodes_per_iteration; ++e) {
    std::vector<Sample> ep;
    Result<double> l = env_episode(true, &ep, episodes_++);
    if (!l) return l.status();
    // generalized advantage estimation; the episode ends at the horizon (value 0 after it)
    double adv = 0, next_value = 0, ret = 0;
    for (int t = int(ep.size()) - 1; t >= 0; --t) {
      double r = ep[t].reward * options_.reward_scale;
      double delta = r + options_.gamma * next_value - ep[t].value;
      adv = delta + options_.gamma * options_.lambda * adv;
      ep[t].adv = adv;
      ep[t].ret = adv + ep[t].value;
      next_value = ep[t].value;
      ret += ep[t].reward;
    }
    it.mean_return += ret / options_.episodes_per_iteration;
    batch.insert(batch.end(), std::make_move_iterator(ep.begin()), std::make_move_iterator(ep.end()));
  }
  // normalized advantages
  double m = 0, v = 0;
  for (const Sample& s : batch) m += s.adv;
  m /= double(batch.size());
  for (const Sample& s : batch) v += (s.adv - m) * (s.adv - m);
  double sd = std::sqrt(v / double(batch.size())) + 1e-8;
  for (Sample& s : batch) s.adv = (s.adv - m) / sd;
  update(batch, it);
  it.sim_steps = sim_steps_;
  it.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return it;
}

void PpoTrainer::update(std::vector<Sample>& batch, PpoIteration& it) {
  const int nw = net().weight_count(), na = net().output_size();
  const int n = int(batch.size()), mb = std::min(options_.minibatch, n);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> g_pi, g_v, mean, d_out(na), d_obs;
  for (int epoch = 0; epoch < options_.epochs; ++epoch) {
    // Fisher-Yates with our own draws (std::shuffle's use of the engine is unspecified)
    for (int i = n - 1; i > 0; --i) std::swap(order[i], order[int(rng_() % std::uint64_t(i + 1))]);
    for (int b = 0; b + mb <= n; b += mb) {
      g_pi.assign(pi_.size(), 0.0);
      g_v.assign(v_.size(), 0.0);
      double pl = 0, vl = 0;
      value_.w = v_;
      for (int q = b; q < b + mb; ++q) {
        const Sample& s = batch[order[q]];
        net().forward(pi_.data(), s.obs, mean);
        double logp = 0;
        for (int k = 0; k < na; ++k) {
          double ls = pi_[nw + k], z = (s.action[k] - mean[k]) * std::exp(-ls);
          logp += -0.5 * z * z - ls - k_log_sqrt_2pi;
        }
        double ratio = std::exp(logp - s.logp);
        double clipped = std::clamp(ratio, 1 - options_.clip_ratio, 1 + options_.clip_ratio);
        double surr = std::min(ratio * s.adv, clipped * s.adv);
        pl -= surr / mb;
        // d(-surr)/d logp: the unclipped branch carries the gradient, the clipped one none
        double g = ratio * s.adv <= clipped * s.adv ? -ratio * s.adv / mb : 0.0;
        if (g != 0.0) {
          for (int k = 0; k < na; ++k) {
            double ls = pi_[nw + k], inv_var = std::exp(-2 * ls), d = s.action[k] - mean[k];
            d_out[k] = g * d * inv_var;
            g_pi[nw + k] += g * (d * d * inv_var - 1);
          }
          net().backward(pi_.data(), s.obs, d_out, g_pi.data(), d_obs);
        }
        double val = value_.forward(s.obs);
        vl += 0.5 * (val - s.ret) * (val - s.ret) / mb;
        value_.backward(s.obs, options_.value_coef * (val - s.ret) / mb, g_v.data());
      }
      pi_opt_.step(pi_, g_pi);
      v_opt_.step(v_, g_v);
      it.policy_loss = pl;
      it.value_loss = vl;
    }
  }
  value_.w = v_;
}

}  // namespace adj::optim
