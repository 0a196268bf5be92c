#include "engine/optim/worlds_task.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/randomize.h"
#include "engine/optim/check_grad.h"
#include "engine/optim/optimizer.h"

namespace adj::optim {

namespace {

// the worlds' task: the first world this rank holds answers everything but the loss, its
// gradient and the steps (frames, blocks, names, policy copies: the same task, world by world)
template <class S>
class WorldsTaskT final : public TaskT<S> {
 public:
  WorldsTaskT(std::vector<std::unique_ptr<TaskT<S>>> tasks, const WorldsTaskOptions& o, dist::Block mine)
      : tasks_(std::move(tasks)),
        options_(o),
        mine_(mine),
        optimizer_(first().task().optimizer, int(first().theta().size())),
        theta_(first().theta()) {}

  const char* kind() const override { return first().kind(); }

  // the mean over the worlds, each world's loss and gradient added in world order
  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad) override {
    const std::size_t n = theta.size();
    std::vector<double> mine;  // per world of this rank: loss, then its gradient (when asked)
    std::vector<S> g;
    // a world whose rollout fails sends a NaN loss through the gather, so that every rank
    // returns the same error (and optimizer.backtrack makes the same choice on every rank)
    Status failed;
    for (auto& t : tasks_) {
      Result<S> l = t->evaluate(theta, grad ? &g : nullptr);
      if (!l && failed.is_ok()) failed = l.status();
      mine.push_back(l ? double(l.value()) : std::numeric_limits<double>::quiet_NaN());
      if (grad) {
        if (!l) g.assign(n, S(0));
        mine.insert(mine.end(), g.begin(), g.end());
      }
    }
    const std::size_t width = 1 + (grad ? n : 0);
    if (options_.comm)
      if (Status st = dist::allgather_blocks(*options_.comm, mine, options_.worlds, int(width), "worlds' losses"); !st)
        return st;
    double loss = 0;
    std::vector<double> sum(grad ? n : 0, 0.0);
    for (int w = 0; w < options_.worlds; ++w) {
      const double* at = mine.data() + std::size_t(w) * width;
      if (std::isnan(at[0]))  // the first world that failed: this rank's own message, or where it failed
        return w >= mine_.begin && w < mine_.end
                   ? failed
                   : Status::error("world " + std::to_string(w) + ": its rollout failed (on another rank)");
      loss += at[0];
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += at[1 + i];
    }
    if (grad) {
      grad->resize(n);
      for (std::size_t i = 0; i < n; ++i) (*grad)[i] = S(sum[i] / options_.worlds);
    }
    return S(loss / options_.worlds);
  }

  Result<IterationStats> iterate() override {
    auto it = iterate_step(
        theta_, grad_, optimizer_, history_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
        [&](std::vector<S>& x) { clamp(x); });
    if (it)
      for (auto& t : tasks_) t->set_theta(theta_);  // frames and final state at the new step
    return it;
  }
  Result<S> finish() override {
    auto loss =
        finish_step(theta_, optimizer_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); });
    for (auto& t : tasks_) t->set_theta(theta_);
    return loss;
  }
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed) override {
    return check_grad_at(
        theta_, grad_, first().blocks(), samples, eps, seed,
        [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
        [&](int i) { return entry_name(i); });
  }
  std::string entry_name(int i) const override { return first().entry_name(i); }
  int iterations_left() const override {
    return std::max(0, first().task().optimizer.iterations - int(history_.size()));
  }
  const std::vector<S>& theta() const override { return theta_; }
  void set_theta(std::vector<S> theta) override {
    clamp(theta);
    theta_ = std::move(theta);
    optimizer_.backtrack() = {};  // a point from outside: nothing to go back to
    for (auto& t : tasks_) t->set_theta(theta_);
  }
  const std::vector<S>& grad() const override { return grad_; }
  const std::vector<IterationStats>& history() const override { return history_; }
  const std::vector<ParamBlock>& blocks() const override { return first().blocks(); }
  const scene::Task& task() const override { return first().task(); }
  const std::vector<StateT<S>>& frames() const override { return first().frames(); }
  const StateT<S>& final_state() const override { return first().final_state(); }
  const std::vector<S>& step_grad_norms() const override { return first().step_grad_norms(); }
  const StateT<S>& start() const override { return first().start(); }
  Result<std::unique_ptr<PolicyEnvT<S>>> policy_env(const PolicyEnvOptions& o) const override {
    return first().policy_env(o);
  }
  Result<std::unique_ptr<TaskT<S>>> restart(const StateT<S>& start, const scene::Task& spec) const override {
    return first().restart(start, spec);
  }
  Result<S> trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const override {
    return first().trajectory_loss(frames, theta);
  }

 private:
  const TaskT<S>& first() const { return *tasks_.front(); }
  // the task's bounds, as its own set_theta applies them
  void clamp(std::vector<S>& x) {
    tasks_.front()->set_theta(x);
    x = tasks_.front()->theta();
  }

  std::vector<std::unique_ptr<TaskT<S>>> tasks_;  // this rank's worlds, in order
  WorldsTaskOptions options_;
  dist::Block mine_;
  OptimizerT<S> optimizer_;
  std::vector<S> theta_, grad_;
  std::vector<IterationStats> history_;
};

}  // namespace

template <class S>
Result<std::unique_ptr<TaskT<S>>> make_worlds_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                   const WorldsTaskOptions& options) {
  const int ranks = options.comm ? options.comm->size() : 1;
  if (options.worlds < ranks)
    return Status::error("task '" + task.name + "': " + std::to_string(options.worlds) +
                         " worlds cannot be shared by " + std::to_string(ranks) + " ranks (each needs one at least)");
  if (options.worlds == 1 && ranks == 1) return make_task(cs, task, options.task);  // the task itself
  const dist::Block mine = dist::block(options.worlds, options.comm ? options.comm->rank() : 0, ranks);
  std::vector<std::unique_ptr<TaskT<S>>> tasks;
  for (int w = mine.begin; w < mine.end; ++w) {
    scene::CompiledSceneT<S> world = cs;
    randomize_world(cs.randomize, options.seed, w, world.model);
    auto made = make_task(world, task, options.task);
    if (!made) return made.status();
    tasks.push_back(std::move(*made));
  }
  return std::unique_ptr<TaskT<S>>(new WorldsTaskT<S>(std::move(tasks), options, mine));
}

template Result<std::unique_ptr<TaskT<float>>> make_worlds_task(const scene::CompiledSceneT<float>&, const scene::Task&,
                                                                const WorldsTaskOptions&);
template Result<std::unique_ptr<TaskT<double>>> make_worlds_task(const scene::CompiledSceneT<double>&,
                                                                 const scene::Task&, const WorldsTaskOptions&);

}  // namespace adj::optim
