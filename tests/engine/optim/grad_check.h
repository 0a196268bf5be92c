// end-to-end gradient check of a task in double: TaskRunner::check_grad on sampled (or
// all) entries, failing with the whole table when the worst relative error is too large
#pragma once

#include <cstdio>
#include <cstdlib>

#include "tests/engine/optim/optim_scenes.h"

namespace adj::optim::test {

inline GradCheckReport check_task_grad(const CompiledSceneT<double>& cs, const Task& task, int samples,
                                       double tol, double eps = 1e-6, std::uint64_t seed = 7) {
  TaskRunnerT<double> runner = must_ok(TaskRunnerT<double>::create(cs, task));
  GradCheckReport rep = must_ok(runner.check_grad(samples, eps, seed));
  INFO(task.name << ":\n" << rep.format());
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s:\n%s", task.name.c_str(), rep.format().c_str());
  REQUIRE(!rep.rows.empty());
  CHECK(rep.max_rel_err < tol);
  return rep;
}

}  // namespace adj::optim::test
