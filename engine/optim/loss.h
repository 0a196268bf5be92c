// Task losses: a weighted sum of terms that read the states of a rollout. The forward
// Observer records what each term needs (observe), the value is summed after the forward
// pass, and the backward Seed callback adds dLoss/dState at the frames the terms read
// (seed). The effort term reads theta, not states: its gradient goes straight into the
// gradient of the control parameters (add_effort).
//
// centre of mass c(t) = sum_i w_i x_i(t) over the object's particles, w_i = m_i / M
// (pinned particles, mass 0, do not count; an object with no mass uses equal weights).
//   position: |c(step) - target|^2
//   distance: -dot(c(step) - c(0), axis / |axis|)              (distance travelled)
//   shape:    1/n sum_i |x_i(step) - x_i(0) - (target - c(0))|^2  (initial shape moved to the target),
//             or 1/n sum_i |x_i(step) - p_i|^2 when the target lists points p_i (a reference shape)
//   velocity: |sum_i w_i v_i(step)|^2
//   effort:   sum over the control entries of theta^2 (the object's, or all when no object)
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/optim/parameters.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

template <class S>
class LossT {
 public:
  LossT() = default;

  // errors name the task and the term (unknown object or target, step outside the
  // horizon, zero axis, effort without control parameters, target points that do not
  // match the object's particles)
  static Result<LossT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                              const ParametersT<S>& params);

  // forward: clear, then observe every state t = 0..horizon
  void begin();
  void observe(int t, const StateT<S>& state);
  // the loss of the states observed, plus effort(theta); per-term values in term_values()
  S value(const std::vector<S>& theta);
  const std::vector<S>& term_values() const { return term_values_; }

  // backward: add dLoss/d state_t into adj (needs observe() of the same rollout)
  void seed(int t, StateT<S>& adj) const;
  // the same without observe(), for a loss whose terms all read frame t (effort aside): first,
  // the state of frame 0; at, the state of frame t. T: S, or tangent numbers Dual<S, 1>: then
  // the tangent of adj is the loss's second derivative along the states' tangents (the H v
  // products of engine/optim/policy_env.h)
  template <class T>
  void seed(int t, const StateT<T>& first, const StateT<T>& at, StateT<T>& adj) const;
  // add d effort/d theta into grad
  void add_effort(const std::vector<S>& theta, std::vector<S>& grad) const;

  int term_count() const { return int(terms_.size()); }
  std::string term_name(int k) const;  // "position[ball -> goal]"

 private:
  struct Term {
    scene::LossKind kind = scene::LossKind::position;
    S weight = S(1);
    int frame = 0;                 // state index the term reads
    std::vector<int> particles;    // model indices
    std::vector<S> w;              // centre-of-mass weights, (particles)
    vec3<S> target;                // position, shape
    std::vector<vec3<S>> points;   // shape against the target's points, (particles) or empty
    vec3<S> axis;                  // distance (unit)
    std::vector<std::pair<int, int>> blocks;  // effort: [begin, end) entry ranges of theta
    std::string label;
    // recorded in the forward pass
    std::vector<vec3<S>> q0, q, qd;  // positions at frame 0 and at `frame`, velocities at `frame`
  };
  template <class T>
  static vec3<T> com(const Term& term, const std::vector<vec3<T>>& x);
  // adj += d term / d state_t, from the term's particles' positions at frame 0 and at its frame
  // and their velocities at its frame
  template <class T>
  static void seed_term(const Term& term, int t, const std::vector<vec3<T>>& q0, const std::vector<vec3<T>>& q,
                        const std::vector<vec3<T>>& qd, StateT<T>& adj);

  std::vector<Term> terms_;
  std::vector<S> term_values_;
};

using Loss = LossT<float>;

}  // namespace adj::optim
