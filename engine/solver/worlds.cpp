#include "engine/solver/worlds.h"

namespace adj {

template <class S>
Result<WorldsT<S>> WorldsT<S>::create(const ModelT<S>& model, WorldsOptions options) {
  if (options.world_count < 1)
    return Status::error("worlds: world count " + std::to_string(options.world_count) + " (at least 1)");
  if (options.thread_count < 1)
    return Status::error("worlds: thread count " + std::to_string(options.thread_count) + " (at least 1)");
  WorldsT w(model);
  if (options.thread_count > 1) options.solver.thread_count = 1;  // the team is over the worlds
  w.options_ = options;
  if (options.randomize.active()) {
    w.models_.reserve(std::size_t(options.world_count));
    for (int i = 0; i < options.world_count; ++i) {
      w.models_.push_back(model);
      randomize_world(options.randomize, options.seed, i, w.models_.back());
    }
  }
  w.states_.resize(std::size_t(options.world_count));
  w.reset();
  for (int t = 0; t < options.thread_count; ++t) w.solvers_.emplace_back(options.solver);
  return w;
}

template <class S>
void WorldsT<S>::reset() {
  for (int i = 0; i < world_count(); ++i) states_[std::size_t(i)] = model(i).make_state();
}

template class WorldsT<float>;
template class WorldsT<double>;

}  // namespace adj
