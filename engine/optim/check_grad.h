// What the task runners share (TaskRunnerT, WorldsTaskT in worlds_task.h): one
// optimizer iteration (iterate_step) and the gradient check, central differences on chosen
// entries of theta against the analytic gradient. Entries: all when
// samples <= 0 or >= size; else one per block (when samples allow), then uniformly at random
// with the seed. The step scales with the entry (contact_ke ~ 1e4 next to velocities ~ 1).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/parameters.h"
#include "engine/optim/trainer.h"

namespace adj::optim {

// one iteration: the loss and gradient at theta, an optimizer step, the bounds; grad keeps
// the gradient, history the iteration's numbers. With spec.backtrack a point that raised the
// loss above the last accepted point's (or whose rollout failed) is rejected: no step, theta
// becomes the step from that point at half the length (OptimizerSpec::backtrack); below
// min_scale of the step the iteration says `stalled` and theta is the accepted point again.
template <class S, class Evaluate, class Clamp>
Result<IterationStats> iterate_step(std::vector<S>& theta, std::vector<S>& grad, OptimizerT<S>& optimizer,
                                    std::vector<IterationStats>& history, const Evaluate& evaluate,
                                    const Clamp& clamp) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<S> g;
  IterationStats it;
  it.iteration = int(history.size());
  Result<S> loss = evaluate(theta, &g);
  BacktrackT<S>& b = optimizer.backtrack();
  const bool backtrack = optimizer.spec().backtrack;
  if (backtrack && b.pending && (!loss || !(double(loss.value()) <= b.from_loss))) {
    it.rejected = true;
    it.loss = loss ? double(loss.value()) : std::numeric_limits<double>::infinity();
    if (!loss) it.failure = loss.status().message();
    b.scale *= 0.5;
    if (b.scale < BacktrackT<S>::min_scale) {  // no step lowers the loss: back to the accepted point
      it.stalled = true;
      theta = b.from;
      b.scale = 1, b.pending = false;
    } else {
      b.place(theta);
      clamp(theta);
    }
    it.step_scale = b.scale;
    it.ms = elapsed();
    history.push_back(it);
    return it;
  }
  if (!loss) return Status::error(loss.status().message() + " (iteration " + std::to_string(it.iteration) + ")");
  grad = g;
  it.loss = double(loss.value());
  if (backtrack) {  // accepted; reached without a retreat (the last iteration not rejected), the length doubles
    if (b.pending && !history.back().rejected) b.scale = std::min(1.0, 2 * b.scale);
    b.from = theta, b.from_loss = it.loss;
  }
  it.grad_norm = optimizer.step(theta, g);
  if (backtrack) {
    b.delta.resize(theta.size());
    for (std::size_t i = 0; i < theta.size(); ++i) b.delta[i] = theta[i] - b.from[i];
    b.place(theta);
    b.pending = true;
    it.step_scale = b.scale;
  }
  clamp(theta);
  it.ms = elapsed();
  history.push_back(it);
  return it;
}

// the loss at the final theta (evaluate forward only); with spec.backtrack a last step that
// raised the loss or failed is undone: theta goes back to the last accepted point
template <class S, class Evaluate>
Result<S> finish_step(std::vector<S>& theta, OptimizerT<S>& optimizer, const Evaluate& evaluate) {
  Result<S> loss = evaluate(theta, nullptr);
  BacktrackT<S>& b = optimizer.backtrack();
  if (!optimizer.spec().backtrack || !b.pending || (loss && double(loss.value()) <= b.from_loss)) return loss;
  theta = b.from;
  b.pending = false;
  return evaluate(theta, nullptr);
}

// evaluate(x, grad or null) -> Result<S>; entry_name(i) -> std::string
template <class S, class Evaluate, class EntryName>
Result<GradCheckReport> check_grad_entries(const std::vector<S>& theta, const std::vector<ParamBlock>& blocks,
                                           int samples, double eps, std::uint64_t seed, Evaluate&& evaluate,
                                           EntryName&& entry_name) {
  GradCheckReport rep;
  rep.eps = eps;
  if (!(eps > 0)) return Status::error("check_grad: eps must be > 0");
  std::vector<S> g;
  Result<S> l0 = evaluate(theta, &g);
  if (!l0) return l0.status();
  rep.loss = double(l0.value());

  // which entries
  const int n = int(theta.size());
  std::set<int> chosen;
  if (samples <= 0 || samples >= n) {
    for (int i = 0; i < n; ++i) chosen.insert(i);
  } else {
    std::mt19937_64 rng(seed);
    if (samples >= int(blocks.size()))
      for (const ParamBlock& b : blocks)
        if (b.count > 0) chosen.insert(b.offset + std::uniform_int_distribution<int>(0, b.count - 1)(rng));
    std::uniform_int_distribution<int> any(0, n - 1);
    while (int(chosen.size()) < samples) chosen.insert(any(rng));
  }

  // central differences, divided by the step actually taken (in S), not by 2 eps
  std::vector<S> x = theta;
  double max_fd = 0;
  for (int i : chosen) {
    double h = eps * std::max(1.0, std::fabs(double(theta[i])));
    S xp = S(double(theta[i]) + h), xm = S(double(theta[i]) - h);
    x[i] = xp;
    Result<S> fp = evaluate(x, nullptr);
    x[i] = xm;
    Result<S> fm = evaluate(x, nullptr);
    x[i] = theta[i];
    if (!fp) return Status::error("check_grad, " + entry_name(i) + " + eps: " + fp.status().message());
    if (!fm) return Status::error("check_grad, " + entry_name(i) + " - eps: " + fm.status().message());
    GradCheckRow row;
    row.entry = i;
    row.name = entry_name(i);
    row.analytic = double(g[i]);
    row.fd = (double(fp.value()) - double(fm.value())) / (double(xp) - double(xm));
    row.abs_err = std::fabs(row.analytic - row.fd);
    max_fd = std::max(max_fd, std::fabs(row.fd));
    rep.rows.push_back(row);
  }

  // relative errors against a floor, so entries that are essentially zero do not fail
  rep.floor = 1e-4 * max_fd + 1e-300;
  for (std::size_t k = 0; k < rep.rows.size(); ++k) {
    GradCheckRow& row = rep.rows[k];
    row.rel_err = row.abs_err / std::max({std::fabs(row.analytic), std::fabs(row.fd), rep.floor});
    if (rep.worst < 0 || row.rel_err > rep.max_rel_err) {
      rep.max_rel_err = row.rel_err;
      rep.worst = int(k);
    }
  }
  return rep;
}

// a runner's check_grad: the entries checked, then the runner's gradient left at theta
// (the check evaluates elsewhere)
template <class S, class Evaluate, class Name>
Result<GradCheckReport> check_grad_at(const std::vector<S>& theta, std::vector<S>& grad,
                                      const std::vector<ParamBlock>& blocks, int samples, double eps,
                                      std::uint64_t seed, const Evaluate& evaluate, const Name& name) {
  auto rep = check_grad_entries<S>(theta, blocks, samples, eps, seed, evaluate, name);
  if (!rep) return rep;
  std::vector<S> g;
  Result<S> again = evaluate(theta, &g);
  if (!again) return again.status();
  grad = std::move(g);
  return rep;
}

}  // namespace adj::optim
