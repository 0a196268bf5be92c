// end-to-end gradient check of a task in double: TaskRunner::check_grad on sampled (or
// all) entries, failing with the whole table when the worst relative error is too large
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "engine/grad/fd_check.h"
#include "engine/optim/shac.h"
#include "tests/engine/optim/optim_scenes.h"

namespace adj::optim::test {

inline GradCheckReport check_task_grad(const CompiledSceneT<double>& cs, const Task& task, int samples, double tol,
                                       double eps = 1e-6, std::uint64_t seed = 7) {
  TaskRunnerT<double> runner = must_ok(TaskRunnerT<double>::create(cs, task));
  GradCheckReport rep = must_ok(runner.check_grad(samples, eps, seed));
  INFO(task.name << ":\n" << rep.format());
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s:\n%s", task.name.c_str(), rep.format().c_str());
  REQUIRE(!rep.rows.empty());
  CHECK(rep.max_rel_err < tol);
  return rep;
}

// a SHAC (or AHAC) actor loss J(w) = trainer.actor_loss(w) against central differences on
// `samples` entries of w drawn with `seed`: appends dJ/dw_i to ad and (J(w + eps e_i) -
// J(w - eps e_i)) / 2 eps to fd (the caller may add other parameters' rows beside)
inline void sample_actor_loss_fd(BatchShacTrainerT<double>& trainer, const std::vector<double>& w,
                                 const std::vector<double>& g, int samples, unsigned seed, std::vector<double>& ad,
                                 std::vector<double>& fd, double eps = 1e-6) {
  std::mt19937 rng(seed);
  for (int n = 0; n < samples; ++n) {
    const std::size_t i = rng() % w.size();
    std::vector<double> x = w;
    x[i] = w[i] + eps;
    const double fp = must_ok(trainer.actor_loss(x, nullptr));
    x[i] = w[i] - eps;
    const double fm = must_ok(trainer.actor_loss(x, nullptr));
    ad.push_back(g[i]);
    fd.push_back((fp - fm) / (2 * eps));
  }
}

inline double largest_entry(const std::vector<double>& v) {
  double scale = 0;
  for (double x : v) scale = std::max(scale, std::abs(x));
  return scale;
}

// ad against fd with an absolute tolerance of 1e-7 of `scale` (the gradient's largest entry)
// and a relative one of 1e-4: contact's kinks (the depth-damped law's min(v_n, 0), the friction
// cone) leave central differences a residue of ~1e-8 of the largest entry in the locomotion windows
inline void check_against_largest(const std::vector<double>& ad, const std::vector<double>& fd, double scale) {
  FdReport r = compare_gradients(ad, fd, 1e-7 * scale, 1e-4);
  INFO(r.message << " (largest entry " << scale << ")");
  CHECK(r.ok);
}

// a check_grad report's analytic column against its central differences: |AD - FD| <= atol +
// 1e-4 |FD|, with the largest difference above `floor` (the check compares gradients, not noise)
inline void check_report_rows(const GradCheckReport& rep, double atol, double floor) {
  INFO(rep.format());
  REQUIRE(!rep.rows.empty());
  std::vector<double> ad, fd;
  for (const GradCheckRow& r : rep.rows) {
    ad.push_back(r.analytic);
    fd.push_back(r.fd);
  }
  CHECK(largest_entry(fd) > floor);
  FdReport c = compare_gradients(ad, fd, atol, 1e-4);
  INFO(c.message);
  CHECK(c.ok);
}

// the actor loss's gradient at w on `samples` sampled entries (the trainer's noise must be
// off or its draws fixed: actor_loss a function of w alone)
inline void check_actor_loss_grad(BatchShacTrainerT<double>& trainer, const std::vector<double>& w, int samples,
                                  unsigned seed) {
  std::vector<double> g, ad, fd;
  must_ok(trainer.actor_loss(w, &g));
  sample_actor_loss_fd(trainer, w, g, samples, seed, ad, fd);
  check_against_largest(ad, fd, largest_entry(g));
}

}  // namespace adj::optim::test
