#include "engine/optim/landscape.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <thread>

#include "engine/optim/task.h"
#include "engine/scene/compile.h"

namespace adj::optim {

const char* to_string(ContactKnob k) {
  switch (k) {
    case ContactKnob::ke:
      return "ke";
    case ContactKnob::kd:
      return "kd";
    case ContactKnob::kf:
      return "kf";
    case ContactKnob::mu:
      return "mu";
    case ContactKnob::eps:
      return "eps";
  }
  return "?";
}

bool parse_contact_knob(const std::string& name, ContactKnob& out) {
  for (ContactKnob k : {ContactKnob::ke, ContactKnob::kd, ContactKnob::kf, ContactKnob::mu, ContactKnob::eps})
    if (name == to_string(k)) {
      out = k;
      return true;
    }
  return false;
}

namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

scene::Scene with_contact_setting(scene::Scene doc, const SweepSetting& s) {
  scene::ContactSettings& c = doc.settings.contact;
  scene::RobotContactSettings& r = doc.settings.robot_contact;
  switch (s.knob) {
    case ContactKnob::ke:
      c.ke = r.ke = s.value;
      break;
    case ContactKnob::kd:
      c.kd = r.kd = s.value;
      break;
    case ContactKnob::kf:
      c.kf = r.kf = s.value;
      break;
    case ContactKnob::mu:
      c.mu = r.mu = s.value;
      break;
    case ContactKnob::eps:
      c.eps = r.eps = s.value;
      break;
  }
  return doc;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// seeded standard normals, the same on every platform (Box-Muller over mt19937_64)
class Normal {
 public:
  explicit Normal(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = (double(rng_() >> 11) + 1.0) * 0x1.0p-53, u2 = double(rng_() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// one point's result
struct Point {
  double loss = k_nan;
  std::vector<double> grad;  // when asked for
  std::string error;
};

// the task of one compiled scene on `threads` copies: each point is evaluated by one copy
template <class S>
class Evaluator {
 public:
  static Result<Evaluator> create(const scene::Scene& doc, const std::string& base_dir, const std::string& name,
                                  int threads) {
    Evaluator e;
    auto cs = scene::compile<S>(doc, base_dir);
    if (!cs) return cs.status();
    e.cs_ = std::make_unique<scene::CompiledSceneT<S>>(std::move(*cs));
    const scene::Task* t = doc.find_task(name);
    if (!t) return Status::error("scene \"" + doc.name + "\" has no task \"" + name + "\"");
    e.task_ = *t;
    for (int i = 0; i < std::max(1, threads); ++i) {
      auto made = make_task(*e.cs_, e.task_, {.thread_count = 1});
      if (!made) return made.status();
      e.copies_.push_back(std::move(*made));
    }
    return e;
  }

  TaskT<S>& first() { return *copies_.front(); }

  // the points in parallel; progress(done) on the calling thread; false when cancelled
  bool run(const std::vector<std::vector<double>>& thetas, bool grads, std::vector<Point>& out,
           const std::function<void(int)>& progress, const std::atomic<bool>* cancel) {
    out.assign(thetas.size(), Point{});
    std::atomic<int> next{0}, done{0};
    auto work = [&](TaskT<S>& task) {
      std::vector<S> th, g;
      for (int k; (k = next++) < int(thetas.size());) {
        if (cancel && cancel->load()) break;
        th.assign(thetas[size_t(k)].begin(), thetas[size_t(k)].end());
        Result<S> l = task.evaluate(th, grads ? &g : nullptr);
        Point& p = out[size_t(k)];
        if (l) {
          p.loss = double(*l);
          if (grads) p.grad.assign(g.begin(), g.end());
        } else {
          p.error = l.status().message();
        }
        ++done;
      }
    };
    std::vector<std::thread> pool;
    const int n = std::min<int>(int(copies_.size()), std::max<int>(1, int(thetas.size())));
    for (int i = 0; i < n; ++i) pool.emplace_back(work, std::ref(*copies_[size_t(i)]));
    int shown = -1;
    while (done.load() < int(thetas.size()) && !(cancel && cancel->load())) {
      if (progress && done.load() != shown) progress(shown = done.load());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (std::thread& t : pool) t.join();
    if (progress) progress(done.load());
    return !(cancel && cancel->load());
  }

  // theta clamped to its blocks' bounds (the landscape the optimizer sees)
  void clamp(std::vector<double>& theta) const {
    for (const ParamBlock& b : copies_.front()->blocks())
      for (int i = b.offset; i < b.offset + b.count; ++i)
        theta[size_t(i)] = std::clamp(theta[size_t(i)], entry_lower(b, i - b.offset), entry_upper(b, i - b.offset));
  }

  // one rollout at the centre: its gradient and the end of its rollout (positions and joint
  // coordinates, flattened), in one evaluate
  Status centre(const std::vector<double>& theta, std::vector<double>& grad, std::vector<double>& final) {
    std::vector<S> th(theta.begin(), theta.end()), g;
    Result<S> r = first().evaluate(th, &g);
    if (!r) return r.status();
    grad.assign(g.begin(), g.end());
    final.clear();
    const StateT<S>& s = first().final_state();
    for (const auto& x : s.particle_q)
      for (int k = 0; k < 3; ++k) final.push_back(double(x[k]));
    for (S q : s.joint_q) final.push_back(double(q));
    return Status::ok();
  }

 private:
  std::unique_ptr<scene::CompiledSceneT<S>> cs_;
  scene::Task task_;
  std::vector<std::unique_ptr<TaskT<S>>> copies_;
};

void summarize(LandscapeCurve& c, const std::vector<double>& s) {
  const int n = int(s.size()), mid = n / 2;
  const double h = n > 1 ? s[1] - s[0] : 1.0;
  c.centre_loss = c.loss[size_t(mid)];
  if (n >= 3) c.fd_slope = (c.loss[size_t(mid + 1)] - c.loss[size_t(mid - 1)]) / (2 * h);
  for (int k = 1; k + 1 < n; ++k) {
    const double d2 = std::abs(c.loss[size_t(k + 1)] - 2 * c.loss[size_t(k)] + c.loss[size_t(k - 1)]) / (h * h);
    if (std::isfinite(d2) && d2 > c.max_second_diff) {
      c.max_second_diff = d2;
      c.roughest = k;
    }
  }
}

std::vector<double> linspace(double span, int n) {
  std::vector<double> s(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) s[size_t(k)] = n > 1 ? -span + 2 * span * k / (n - 1) : 0.0;
  return s;
}

}  // namespace

template <class S>
Result<Landscape> compute_landscape(const scene::Scene& doc, const std::string& base_dir, const std::string& name,
                                    const LandscapeOptions& o, const std::function<void(int, int)>& progress,
                                    const std::atomic<bool>* cancel) {
  const std::string who = "landscape of task '" + name + "': ";
  if (o.points < 3 || o.points % 2 == 0) return Status::error(who + "points must be odd and >= 3");
  if (o.grid != 0 && (o.grid < 3 || o.grid % 2 == 0)) return Status::error(who + "grid must be odd and >= 3");
  if (o.stats_samples < 0) return Status::error(who + "statistics samples must be >= 0");
  const int threads = o.threads > 0 ? o.threads : std::max(1, int(std::thread::hardware_concurrency()));
  auto base = Evaluator<S>::create(doc, base_dir, name, threads);
  if (!base) return base.status();
  Evaluator<S>& ev = *base;
  Landscape l;
  l.task = name;
  const std::vector<S>& start = ev.first().theta();
  l.theta = o.theta.empty() ? std::vector<double>(start.begin(), start.end()) : o.theta;
  const int n = int(l.theta.size());
  if (n == 0) return Status::error(who + "the task has no parameters");
  if (int(start.size()) != n)
    return Status::error(who + "the centre has " + std::to_string(n) + " entries, the task " +
                         std::to_string(start.size()));
  for (int p : {o.parameter, o.parameter2})
    if (p >= n)
      return Status::error(who + "parameter " + std::to_string(p) + " is past the task's " + std::to_string(n));

  // the centre's gradient, and where its rollout ends (the task's own contact)
  const int curves = 1 + int(o.sweep.size());
  std::vector<std::vector<double>> finals(static_cast<size_t>(curves));
  if (Status st = ev.centre(l.theta, l.grad, finals[0]); !st)
    return Status::error(who + "at the centre: " + st.message());
  ++l.evaluations;
  Normal normal(o.seed);
  auto random_unit = [&](const std::vector<double>* orthogonal_to) {
    std::vector<double> d(static_cast<size_t>(n));
    for (double& x : d) x = normal();
    if (orthogonal_to) {
      const double a = dot(d, *orthogonal_to);
      for (int i = 0; i < n; ++i) d[size_t(i)] -= a * (*orthogonal_to)[size_t(i)];
    }
    const double len = norm(d);
    for (double& x : d) x /= len > 0 ? len : 1.0;
    return d;
  };
  auto unit = [&](int i) {
    std::vector<double> d(size_t(n), 0.0);
    d[size_t(i)] = 1.0;
    return d;
  };
  switch (o.direction) {
    case SliceDirection::gradient: {
      const double g = norm(l.grad);
      if (!(g > 0))
        return Status::error(who + "the gradient is zero at the centre: slice along a random direction or a parameter");
      l.d = l.grad;
      for (double& x : l.d) x /= g;
      l.direction = "gradient";
      break;
    }
    case SliceDirection::random:
      l.d = random_unit(nullptr);
      l.direction = "random (seed " + std::to_string(o.seed) + ")";
      break;
    case SliceDirection::parameter:
      if (o.parameter < 0) return Status::error(who + "slice along a parameter needs its entry");
      l.d = unit(o.parameter);
      l.direction = ev.first().entry_name(o.parameter);
      break;
  }
  const double span = o.span > 0 ? o.span : 0.1 * std::max(1.0, norm(l.theta));
  l.s = linspace(span, o.points);
  auto along = [&](double a, const std::vector<double>& da, double b, const std::vector<double>* db) {
    std::vector<double> th = l.theta;
    for (int i = 0; i < n; ++i) th[size_t(i)] += a * da[size_t(i)] + (db ? b * (*db)[size_t(i)] : 0.0);
    ev.clamp(th);
    return th;
  };
  std::vector<std::vector<double>> line;
  for (double s : l.s) line.push_back(along(s, l.d, 0, nullptr));

  // every curve's settings: the task's own contact, then the sweep
  const int grid_points = o.grid > 1 ? o.grid * o.grid : 0;
  const int total = curves * (o.points + 1) + grid_points + 2 * o.stats_samples;
  int done_before = 0;
  auto step_progress = [&](int done) {
    if (progress) progress(done_before + done, total);
  };
  for (int c = 0; c < curves; ++c) {
    LandscapeCurve curve;
    Result<Evaluator<S>> other = Status::ok();
    Evaluator<S>* e = &ev;
    if (c == 0) {
      curve.label = "task contact";
    } else {
      const SweepSetting& st = o.sweep[size_t(c - 1)];
      curve.label = std::string(to_string(st.knob)) + " = " + number(st.value);
      curve.swept = true;
      curve.setting = st;
      other = Evaluator<S>::create(with_contact_setting(doc, st), base_dir, name, threads);
      if (!other) return Status::error(who + curve.label + ": " + other.status().message());
      e = &*other;
    }
    std::vector<Point> pts;
    if (!e->run(line, false, pts, step_progress, cancel)) return Status::error(who + "cancelled");
    for (size_t k = 0; k < pts.size(); ++k) {
      curve.loss.push_back(pts[k].loss);
      if (!pts[k].error.empty()) curve.failures.push_back("s = " + number(l.s[k]) + ": " + pts[k].error);
    }
    summarize(curve, l.s);
    // the analytic slope at the centre under this setting (the task's own: measured above)
    std::vector<double> g = l.grad;
    if (c > 0) {
      if (Status st = e->centre(l.theta, g, finals[size_t(c)]); !st) g.clear();
      ++l.evaluations;
    }
    curve.slope = g.empty() ? k_nan : dot(g, l.d);
    l.evaluations += o.points;
    done_before += o.points + 1;
    l.curves.push_back(std::move(curve));
  }
  // the physics each setting gives, against the stiffest contact swept (else the task's own)
  int ref = 0;
  for (int c = 1; c < curves; ++c) {
    const SweepSetting& st = o.sweep[size_t(c - 1)];
    if (st.knob == ContactKnob::ke && (ref == 0 || st.value > o.sweep[size_t(ref - 1)].value)) ref = c;
  }
  for (int c = 0; c < curves; ++c) {
    const std::vector<double>&a = finals[size_t(c)], &b = finals[size_t(ref)];
    double sum = 0;
    if (a.size() != b.size() || a.empty()) {
      l.curves[size_t(c)].final_state_rms = k_nan;
      continue;
    }
    for (size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
    l.curves[size_t(c)].final_state_rms = std::sqrt(sum / double(a.size()));
  }

  // 2D slice on the task's own contact
  if (o.grid > 1) {
    l.grid = o.grid;
    if (o.parameter2 >= 0) {
      l.d2 = unit(o.parameter2);
      const double a = dot(l.d2, l.d);
      for (int i = 0; i < n; ++i) l.d2[size_t(i)] -= a * l.d[size_t(i)];
      const double len = norm(l.d2);
      if (!(len > 1e-12)) return Status::error(who + "the second direction is the first");
      for (double& x : l.d2) x /= len;
      l.direction2 = ev.first().entry_name(o.parameter2);
    } else {
      l.d2 = random_unit(&l.d);
      l.direction2 = "random (seed " + std::to_string(o.seed) + "), orthogonal";
    }
    l.s2 = linspace(span, o.grid);
    const std::vector<double> si = linspace(span, o.grid);
    std::vector<std::vector<double>> pts;
    for (int j = 0; j < o.grid; ++j)
      for (int i = 0; i < o.grid; ++i) pts.push_back(along(si[size_t(i)], l.d, l.s2[size_t(j)], &l.d2));
    std::vector<Point> res;
    if (!ev.run(pts, false, res, step_progress, cancel)) return Status::error(who + "cancelled");
    for (const Point& p : res) l.loss2d.push_back(p.loss);
    l.grad_d = dot(l.grad, l.d);
    l.grad_d2 = dot(l.grad, l.d2);
    l.evaluations += grid_points;
    done_before += grid_points;
  }

  // gradient statistics: first-order (analytic) against zeroth-order (randomized smoothing)
  if (o.stats_samples > 0) {
    GradientStats& st = l.stats;
    st.samples = o.stats_samples;
    st.sigma = o.stats_sigma > 0 ? o.stats_sigma : span / 4;
    Normal noise(o.seed + 0x9e3779b97f4a7c15ull);
    // antithetic pairs theta +- w: the zeroth-order estimate (L(+w) - L(-w)) w / (2 sigma^2)
    // has far less variance than the one-sided one; the analytic mean is over both points
    std::vector<std::vector<double>> w(static_cast<size_t>(st.samples), std::vector<double>(static_cast<size_t>(n))),
        pts;
    for (auto& wi : w) {
      for (double& x : wi) x = st.sigma * noise();
      for (double sign : {1.0, -1.0}) {
        std::vector<double> th = l.theta;
        for (int i = 0; i < n; ++i) th[size_t(i)] += sign * wi[size_t(i)];
        pts.push_back(std::move(th));
      }
    }
    std::vector<Point> res;
    if (!ev.run(pts, true, res, step_progress, cancel)) return Status::error(who + "cancelled");
    l.evaluations += 2 * st.samples;
    std::vector<std::vector<double>> first, zeroth;
    for (size_t k = 0; k < w.size(); ++k) {
      const Point &a = res[2 * k], &b = res[2 * k + 1];
      if (!a.error.empty() || !b.error.empty() || a.grad.size() != size_t(n) || b.grad.size() != size_t(n)) continue;
      std::vector<double> f(static_cast<size_t>(n)), z(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        f[size_t(i)] = 0.5 * (a.grad[size_t(i)] + b.grad[size_t(i)]);
        z[size_t(i)] = (a.loss - b.loss) * w[k][size_t(i)] / (2 * st.sigma * st.sigma);
      }
      first.push_back(std::move(f));
      zeroth.push_back(std::move(z));
    }
    if (first.empty()) return Status::error(who + "every perturbed rollout failed: " + res[0].error);
    st.samples = int(first.size());
    auto mean_spread = [&](const std::vector<std::vector<double>>& g, std::vector<double>& mean, double& spread) {
      mean.assign(size_t(n), 0.0);
      for (const auto& x : g)
        for (int i = 0; i < n; ++i) mean[size_t(i)] += x[size_t(i)] / double(g.size());
      double sum = 0;
      for (const auto& x : g)
        for (int i = 0; i < n; ++i) sum += (x[size_t(i)] - mean[size_t(i)]) * (x[size_t(i)] - mean[size_t(i)]);
      spread = std::sqrt(sum / double(g.size()));
    };
    mean_spread(first, st.first_mean, st.first_spread);
    mean_spread(zeroth, st.zeroth_mean, st.zeroth_spread);
    st.first_norm = norm(st.first_mean);
    st.zeroth_norm = norm(st.zeroth_mean);
    const double c = dot(st.first_mean, st.zeroth_mean) / std::max(st.first_norm * st.zeroth_norm, 1e-300);
    st.angle_deg = std::acos(std::clamp(c, -1.0, 1.0)) * 180.0 / 3.141592653589793;
    const double stderr_zeroth = st.zeroth_spread / std::sqrt(double(st.samples));
    st.noise_angle_deg = std::atan2(stderr_zeroth, st.first_norm) * 180.0 / 3.141592653589793;
    std::vector<double> diff(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) diff[size_t(i)] = st.first_mean[size_t(i)] - st.zeroth_mean[size_t(i)];
    st.difference = norm(diff);
    st.difference_stderr =
        std::sqrt((st.first_spread * st.first_spread + st.zeroth_spread * st.zeroth_spread) / double(st.samples));
  }
  return l;
}

std::string format_landscape(const Landscape& l) {
  std::string out;
  char buf[640];
  std::snprintf(buf, sizeof buf, "loss along %s, |d| = 1, %zu points over [%g, %g]\n", l.direction.c_str(), l.s.size(),
                l.s.front(), l.s.back());
  out += buf;
  out += "        s";
  for (const LandscapeCurve& c : l.curves) {
    std::snprintf(buf, sizeof buf, " %16s", c.label.c_str());
    out += buf;
  }
  out += "\n";
  for (size_t k = 0; k < l.s.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%9.4g", l.s[k]);
    out += buf;
    for (const LandscapeCurve& c : l.curves) {
      std::snprintf(buf, sizeof buf, " %16.9g", c.loss[k]);
      out += buf;
    }
    out += "\n";
  }
  for (const LandscapeCurve& c : l.curves) {
    std::snprintf(buf, sizeof buf,
                  "%s: loss %.6g, slope g.d %.6g (central difference %.6g), roughness max|d2L/ds2| %.4g at s = %g",
                  c.label.c_str(), c.centre_loss, c.slope, c.fd_slope, c.max_second_diff,
                  c.roughest >= 0 ? l.s[size_t(c.roughest)] : 0.0);
    out += buf;
    if (l.curves.size() > 1) {
      std::snprintf(buf, sizeof buf, ", final state RMS vs the stiffest %.4g m", c.final_state_rms);
      out += buf;
    }
    out += "\n";
    for (const std::string& f : c.failures) out += "  failed at " + f + "\n";
  }
  if (l.grid > 1) {
    std::snprintf(buf, sizeof buf, "2D slice: %d x %d over %s and %s; gradient there (%.6g, %.6g)\n", l.grid, l.grid,
                  l.direction.c_str(), l.direction2.c_str(), l.grad_d, l.grad_d2);
    out += buf;
  }
  if (l.stats.samples > 0) {
    const GradientStats& s = l.stats;
    std::snprintf(buf, sizeof buf,
                  "gradient statistics over %d perturbations (sigma %g): analytic |mean| %.6g spread %.6g; "
                  "zeroth-order |mean| %.6g spread %.6g; angle between the means %.2f deg (its sampling noise "
                  "explains about %.2f deg); |difference| %.6g = %.1f standard errors\n",
                  s.samples, s.sigma, s.first_norm, s.first_spread, s.zeroth_norm, s.zeroth_spread, s.angle_deg,
                  s.noise_angle_deg, s.difference, s.difference / std::max(s.difference_stderr, 1e-300));
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "%d rollouts\n", l.evaluations);
  out += buf;
  return out;
}

template Result<Landscape> compute_landscape<float>(const scene::Scene&, const std::string&, const std::string&,
                                                    const LandscapeOptions&, const std::function<void(int, int)>&,
                                                    const std::atomic<bool>*);
template Result<Landscape> compute_landscape<double>(const scene::Scene&, const std::string&, const std::string&,
                                                     const LandscapeOptions&, const std::function<void(int, int)>&,
                                                     const std::atomic<bool>*);

}  // namespace adj::optim
