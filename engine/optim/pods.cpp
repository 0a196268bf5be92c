#include "engine/optim/pods.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <omp.h>

namespace adj::optim {

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

template <class S>
std::vector<double> to_double(const std::vector<S>& x) {
  return std::vector<double>(x.begin(), x.end());
}

template <class S>
std::vector<S> from_double(const std::vector<double>& x) {
  return std::vector<S>(x.begin(), x.end());
}

// a + s x, in the scalar of a
template <class S>
std::vector<S> plus(const std::vector<S>& a, double s, const std::vector<double>& x) {
  std::vector<S> out(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) out[k] = S(double(a[k]) + s * x[k]);
  return out;
}

// tau >= 0 with |p + tau d| = radius
double to_boundary(const std::vector<double>& p, const std::vector<double>& d, double radius) {
  const double dd = dot(d, d), pd = dot(p, d), pp = dot(p, p);
  if (dd <= 0) return 0;
  return (-pd + std::sqrt(std::max(0.0, pd * pd + dd * (radius * radius - pp)))) / dd;
}

}  // namespace

template <class S>
Result<S> ActionSequenceT<S>::cost(const std::vector<S>& a, std::vector<S>* grad, std::vector<std::vector<S>>* obs,
                                   std::vector<StateT<S>>* states) {
  PolicyEnvT<S>& env = *env_;
  const int i = copy_, na = env.action_size();
  if (int(a.size()) != size())
    return Status::error("action sequence: " + std::to_string(a.size()) + " entries, expected " +
                         std::to_string(size()));
  env.clear_tape(i);
  if (obs) obs->assign(std::size_t(frames_), {});
  if (states) states->assign(1, env.state(i));
  std::vector<S> action(static_cast<std::size_t>(na)), d_action;
  double sum = 0;
  Status st;
  for (int t = 0; t < frames_ && st; ++t) {
    if (obs) env.observe(i, (*obs)[std::size_t(t)]);
    std::copy(a.begin() + std::ptrdiff_t(t) * na, a.begin() + std::ptrdiff_t(t + 1) * na, action.begin());
    Result<S> c = env.step(i, action);
    if (!c) {
      st = c.status();
      break;
    }
    sum += double(c.value());
    if (states) states->push_back(env.state(i));
  }
  sim_steps_ += (long long)env.tape_size(i) * env.substeps();
  const S value = S(sum / double(frames_));
  if (st && !is_finite(value)) st = Status::error("action sequence: the cost is not finite");
  if (st && grad) {
    grad->assign(a.size(), S(0));
    env.begin_backward(i);
    const S share = S(1.0 / double(frames_));
    for (int t = frames_ - 1; t >= 0 && st; --t) {
      st = env.backward_step(i, share, d_action);
      for (int k = 0; k < na && st; ++k) (*grad)[std::size_t(t * na + k)] = d_action[std::size_t(k)];
    }
    sim_steps_ += (long long)frames_ * env.substeps();
  }
  env.rewind(i);
  if (!st) return st;
  return value;
}

template <class S>
Status ActionSequenceT<S>::hvp(const std::vector<S>& a, const std::vector<S>& v, std::vector<S>& out) {
  if (int(a.size()) != size() || int(v.size()) != size())
    return Status::error("action sequence: H v of " + std::to_string(a.size()) + " actions along " +
                         std::to_string(v.size()) + " entries, expected " + std::to_string(size()));
  Status st = env_->action_hvp(copy_, a, v, S(1.0 / double(frames_)), out);
  sim_steps_ += 2LL * frames_ * env_->substeps();
  return st;
}

template <class S>
Result<PodsTrainerT<S>> PodsTrainerT<S>::create(const TaskT<S>& task, PodsOptions o, PolicyEnvOptions env_options) {
  const std::string where = "task '" + task.task().name + "' (PODS)";
  if ((o.order != 1 && o.order != 2) || o.batch < 1 || o.line_search < 0 || !(o.step > 0) || !(o.radius > 0) ||
      !(o.radius_min > 0) || !(o.radius_max >= o.radius_min) || !(o.damping >= 0) || o.cg_iterations < 1 ||
      o.epochs < 1 || o.minibatch < 1 || !(o.lr > 0))
    return Status::error(where +
                         ": options out of range (order 1 or 2; batch, cg_iterations, epochs, minibatch >= 1; "
                         "line_search, damping >= 0; step, radius, lr > 0; radius_min <= radius_max)");
  const int ranks = o.comm ? o.comm->size() : 1;
  if (o.batch < ranks)
    return Status::error(where + ": " + std::to_string(o.batch) + " episodes cannot be shared by " +
                         std::to_string(ranks) + " ranks (each needs one at least)");
  const dist::Block mine = dist::block(o.batch, o.comm ? o.comm->rank() : 0, ranks);
  env_options.env_count = mine.count();  // with ranks, this rank's block of the episodes
  env_options.world_begin = mine.begin;
  auto envs = make_policy_envs(task, env_options, where);
  if (!envs) return envs.status();
  if (o.order == 2 && !envs->train->has_action_hvp())
    return Status::error(where +
                         ": PODS-2 needs H v products through the step's tangent (forward-mode) form, and the "
                         "coupled step of robots and particles has none; train this task by PODS-1 (order 1, "
                         "gradients only), SHAC, AHAC or PPO");
  PodsTrainerT r;
  r.options_ = o;
  r.mine_ = mine;
  r.env_ = std::move(envs->train);
  r.eval_ = std::move(envs->eval);
  const std::uint64_t seed = task.task().seed;
  r.w_.assign(std::size_t(r.env_->mlp().weight_count()), S(0));
  r.env_->mlp().init_weights(r.w_.data(), seed);
  r.adam_ = OptimizerT<S>({scene::OptimizerKind::adam, o.lr, 0, 0}, r.env_->mlp().weight_count());
  r.rng_.seed(seed ^ 0x5851f42d4c957f2dull);
  for (int i = 0; i < o.batch; ++i) r.rngs_.emplace_back(seed * 1000003ull + std::uint64_t(i));
  r.radius_ = o.order == 1 ? o.step : o.radius;
  return r;
}

template <class S>
Status PodsTrainerT<S>::newton_step(ActionSequenceT<S>& seq, Episode& e, const std::vector<S>& g,
                                    std::vector<S>& p_out) {
  // Steihaug-Toint: CG on (H + lambda I) p = -g, stopped at the trust region's boundary
  const std::vector<double> gd = to_double(g);
  const double radius = radius_ * std::sqrt(double(g.size()));
  const double lambda = options_.damping;
  std::vector<double> p(g.size(), 0.0), r = gd, d(g.size()), hd;
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = -r[k];
  double rr = dot(r, r);
  const double tol = 1e-6 * std::sqrt(rr);
  std::vector<S> hv;
  for (int it = 0; it < options_.cg_iterations; ++it) {
    Status st = seq.hvp(e.a0, from_double<S>(d), hv);
    ++e.hvps;
    if (!st) return st;
    hd = to_double(hv);
    for (std::size_t k = 0; k < hd.size(); ++k) hd[k] += lambda * d[k];
    const double dhd = dot(d, hd);
    if (dhd <= 0) {  // negative curvature: along d to the boundary
      const double tau = to_boundary(p, d, radius);
      for (std::size_t k = 0; k < p.size(); ++k) p[k] += tau * d[k];
      break;
    }
    const double alpha = rr / dhd;
    std::vector<double> next = p;
    for (std::size_t k = 0; k < p.size(); ++k) next[k] += alpha * d[k];
    if (std::sqrt(dot(next, next)) >= radius) {  // outside: stop on the boundary
      const double tau = to_boundary(p, d, radius);
      for (std::size_t k = 0; k < p.size(); ++k) p[k] += tau * d[k];
      break;
    }
    p = std::move(next);
    for (std::size_t k = 0; k < r.size(); ++k) r[k] += alpha * hd[k];
    const double rr_next = dot(r, r);
    if (std::sqrt(rr_next) <= tol) break;
    const double beta = rr_next / rr;
    for (std::size_t k = 0; k < d.size(); ++k) d[k] = -r[k] + beta * d[k];
    rr = rr_next;
  }
  p_out = from_double<S>(p);
  return Status::ok();
}

template <class S>
Status PodsTrainerT<S>::improve(ActionSequenceT<S>& seq, Episode& e, const std::vector<S>& g) {
  const std::vector<double> gd = to_double(g);
  const double gnorm = std::sqrt(dot(gd, gd));
  e.a = e.a0;
  e.cost = e.cost0;
  if (!(gnorm > 0)) return Status::ok();
  std::vector<double> step(g.size());
  if (options_.order == 1) {  // normalized gradient, RMS `radius_` per entry
    const double alpha = radius_ * std::sqrt(double(g.size()));
    for (std::size_t k = 0; k < step.size(); ++k) step[k] = -alpha * gd[k] / gnorm;
  } else {
    std::vector<S> p;
    if (Status st = newton_step(seq, e, g, p); !st) return st;
    step = to_double(p);
  }
  // backtracking: the first trial that lowers J is kept
  double s = 1;
  for (int k = 0; k <= options_.line_search; ++k, s *= 0.5) {
    std::vector<S> a = plus(e.a0, s, step);
    std::vector<std::vector<S>> obs;
    Result<S> c = seq.cost(a, nullptr, &obs);
    if (!c) return c.status();
    if (c.value() < e.cost0) {
      e.a = std::move(a);
      e.cost = c.value();
      e.obs = std::move(obs);
      e.full_step = k == 0;
      return Status::ok();
    }
  }
  return Status::ok();  // no trial lowered J: the episode keeps the policy's actions
}

template <class S>
Status PodsTrainerT<S>::run_episode(int copy, Episode& e) {
  PolicyEnvT<S>& env = *env_;
  const int T = env.horizon(), na = env.action_size();
  const int i = copy - mine_.begin;  // the copy in this rank's env
  env.reset(i, &rngs_[std::size_t(copy)]);
  // the policy's own rollout gives the actions to improve
  e.a0.assign(std::size_t(T) * na, S(0));
  e.obs.assign(std::size_t(T), {});
  std::vector<S> out;
  for (int t = 0; t < T; ++t) {
    env.observe(i, e.obs[std::size_t(t)]);
    env.mlp().forward(w_.data(), e.obs[std::size_t(t)], out);
    std::copy(out.begin(), out.end(), e.a0.begin() + std::ptrdiff_t(t) * na);
    Result<S> c = env.step(i, out);
    if (!c) return c.status();
  }
  e.steps = (long long)T * env.substeps();
  env.rewind(i);
  ActionSequenceT<S> seq(env, i, T);
  std::vector<S> g;
  Result<S> c0 = seq.cost(e.a0, &g, nullptr, copy == 0 ? &e.states0 : nullptr);
  if (!c0) return c0.status();
  e.cost0 = c0.value();
  if (Status st = improve(seq, e, g); !st) return st;
  e.steps += seq.sim_steps();
  if (copy == 0) {  // the ghost: the improved trajectory (not counted)
    Result<S> c = seq.cost(e.a, nullptr, nullptr, &e.states);
    if (!c) return c.status();
  }
  return Status::ok();
}

template <class S>
double PodsTrainerT<S>::regress(const std::vector<Episode>& episodes) {
  const MlpT<S>& net = env_->mlp();
  const int na = net.output_size();
  const S bound = net.linear_output() ? S(1e30) : S(0.97) * net.output_scale();  // reachable targets
  std::vector<const std::vector<S>*> obs;
  std::vector<std::vector<S>> target;
  for (const Episode& e : episodes)
    for (std::size_t t = 0; t < e.obs.size(); ++t) {
      obs.push_back(&e.obs[t]);
      std::vector<S> a(e.a.begin() + std::ptrdiff_t(t) * na, e.a.begin() + std::ptrdiff_t(t + 1) * na);
      for (S& x : a) x = std::clamp(x, -bound, bound);
      target.push_back(std::move(a));
    }
  const int n = int(obs.size()), mb = std::min(options_.minibatch, n);
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<S> g, out, d_out(static_cast<std::size_t>(na)), d_obs;
  double last = 0;
  for (int epoch = 0; epoch < options_.epochs; ++epoch) {
    // Fisher-Yates with our own draws (std::shuffle's use of the engine is unspecified)
    for (int i = n - 1; i > 0; --i) std::swap(order[std::size_t(i)], order[std::size_t(rng_() % std::uint64_t(i + 1))]);
    double sum = 0;
    for (int b = 0; b + mb <= n; b += mb) {
      g.assign(w_.size(), S(0));
      for (int q = b; q < b + mb; ++q) {
        const int j = order[std::size_t(q)];
        net.forward(w_.data(), *obs[std::size_t(j)], out);
        for (int k = 0; k < na; ++k) {
          const S d = out[std::size_t(k)] - target[std::size_t(j)][std::size_t(k)];
          sum += 0.5 * double(d) * double(d);
          d_out[std::size_t(k)] = d / S(mb);
        }
        net.backward(w_.data(), *obs[std::size_t(j)], d_out, g.data(), d_obs);
      }
      adam_.step(w_, g);
    }
    last = sum / double(n - n % mb);
  }
  return last;
}

template <class S>
Status PodsTrainerT<S>::gather_episodes(std::vector<Episode>& episodes) {
  if (!options_.comm || options_.comm->size() == 1) return Status::ok();
  dist::Bytes mine;
  dist::ByteWriter out(mine);
  for (int i = mine_.begin; i < mine_.end; ++i) {
    const Episode& e = episodes[std::size_t(i)];
    out.put_string(e.status ? std::string() : e.status.message());
    out.put_vector(e.a0), out.put_vector(e.a);
    out.put(std::uint64_t(e.obs.size()));
    for (const std::vector<S>& o : e.obs) out.put_vector(o);
    out.put(e.cost0), out.put(e.cost), out.put(e.steps), out.put(e.hvps), out.put(e.full_step);
  }
  std::vector<dist::Bytes> parts;
  if (Status st = options_.comm->allgather(mine, parts); !st) return st;
  for (int r = 0; r < int(parts.size()); ++r) {
    if (r == options_.comm->rank()) continue;
    const dist::Block b = dist::block(options_.batch, r, int(parts.size()));
    dist::ByteReader in(parts[std::size_t(r)]);
    bool ok = true;
    for (int i = b.begin; i < b.end && ok; ++i) {
      Episode& e = episodes[std::size_t(i)];
      std::string failed;
      std::uint64_t frames = 0;
      ok = in.get_string(failed) && in.get_vector(e.a0) && in.get_vector(e.a) && in.get(frames) &&
           frames <= std::uint64_t(env_->horizon());
      e.obs.resize(std::size_t(ok ? frames : 0));
      for (std::vector<S>& o : e.obs) ok = ok && in.get_vector(o);
      ok = ok && in.get(e.cost0) && in.get(e.cost) && in.get(e.steps) && in.get(e.hvps) && in.get(e.full_step);
      e.status = failed.empty() ? Status::ok() : Status::error(failed + " (rank " + std::to_string(r) + ")");
    }
    if (!ok || !in.done()) return Status::error("PODS: rank " + std::to_string(r) + "'s episodes arrived malformed");
  }
  return Status::ok();
}

template <class S>
void PodsTrainerT<S>::update(std::vector<Episode>& episodes, PodsStats& s) {
  const int n = options_.batch;
  double sq = 0;
  long long entries = 0;
  int full = 0;
  for (int i = 0; i < n; ++i) {
    const Episode& e = episodes[std::size_t(i)];
    s.policy_cost += double(e.cost0) / n;
    s.improved_cost += double(e.cost) / n;
    for (std::size_t k = 0; k < e.a.size(); ++k) sq += double(e.a[k] - e.a0[k]) * double(e.a[k] - e.a0[k]);
    entries += (long long)e.a.size();
    full += e.full_step;
  }
  s.step_rms = std::sqrt(sq / double(std::max(1LL, entries)));
  // the step (order 1) or trust region (order 2) follows how often the full step was taken
  radius_ = std::clamp(2 * full >= n ? radius_ * 1.5 : radius_ * 0.5, options_.radius_min, options_.radius_max);
  s.regression_loss = regress(episodes);
  policy_states_ = std::move(episodes[0].states0);
  improved_states_ = std::move(episodes[0].states);
}

template <class S>
Result<PodsStats> PodsTrainerT<S>::step() {
  const int n = options_.batch;
  std::vector<Episode> episodes(static_cast<std::size_t>(n));
  const int threads = options_.thread_count;
  const int begin = mine_.begin, end = mine_.end;
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : omp_get_max_threads()) if (threads != 1)
  for (int i = begin; i < end; ++i) episodes[std::size_t(i)].status = run_episode(i, episodes[std::size_t(i)]);
  if (Status st = gather_episodes(episodes); !st) return st;
  PodsStats s;
  s.iteration = iteration_;
  for (const Episode& e : episodes) sim_steps_ += e.steps, hvps_ += e.hvps;
  for (int i = 0; i < n && !s.skipped; ++i)
    if (const Status& st = episodes[std::size_t(i)].status; !st) {
      s.skipped = true;
      s.skip_reason = "PODS iteration " + std::to_string(iteration_) + " skipped: episode " + std::to_string(i) + ": " +
                      st.message();
      ++skipped_;
    }
  if (!s.skipped) update(episodes, s);
  s.skipped_iterations = skipped_;
  s.sim_steps = sim_steps_;
  s.hvps = hvps_;
  ++iteration_;
  if (options_.comm && options_.comm->size() > 1 && options_.fingerprint_every > 0 &&
      iteration_ % options_.fingerprint_every == 0) {
    if (Status st = dist::compare_fingerprints(*options_.comm, fingerprint(),
                                               "PODS, after " + std::to_string(iteration_) + " iterations");
        !st)
      return st;
  }
  return s;
}

template <class S>
Result<S> PodsTrainerT<S>::evaluate(const std::function<void(int t, const PolicyEnvT<S>& env)>& observe) {
  PolicyEnvT<S>& env = *eval_;
  env.reset(0, nullptr);
  std::vector<S> obs, out;
  double sum = 0;
  for (int t = 0; t < env.horizon(); ++t) {
    env.observe(0, obs);
    env.mlp().forward(w_.data(), obs, out);
    Result<S> c = env.step(0, out);
    if (!c) return Status::error("PODS evaluation: " + c.status().message());
    env.clear_tape(0);
    sum += double(c.value());
    if (observe) observe(t, env);
  }
  return S(sum / double(env.horizon()));
}

template class ActionSequenceT<float>;
template class ActionSequenceT<double>;
template class PodsTrainerT<float>;
template class PodsTrainerT<double>;

}  // namespace adj::optim
