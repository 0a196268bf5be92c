// semi-implicit Euler with substeps on the CPU (OpenMP). States are never updated in place:
// step() reads `in` and writes `out`; step_adjoint() recomputes the substeps from `in`
// (the same contacts, deterministically) and runs them backwards.
#pragma once

#include <memory>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace adj {

struct SolverOptions {
  int substeps = 1;          // substeps per step (contacts found in each)
  int thread_count = 0;      // OpenMP threads, 0 = default
  bool check_finite = true;  // report the first non-finite state/adjoint with its element
};

template <class S>
class SolverT {
 public:
  explicit SolverT(SolverOptions options = {});
  ~SolverT();
  SolverT(SolverT&&) noexcept;
  SolverT& operator=(SolverT&&) noexcept;

  // advance by dt (split into options.substeps); contacts (optional) of the last substep
  Status step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
              ContactsT<S>* contacts = nullptr);

  // given adj_out = dL/d out, write adj_in = dL/d in and accumulate dL/d control and
  // dL/d model parameters into adj_control and adj_model (sized by make_control/make_grad)
  Status step_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                      const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                      ModelGradT<S>& adj_model);

  const SolverOptions& options() const { return options_; }
  // bytes of scratch memory held
  std::size_t scratch_bytes() const;

 private:
  struct Scratch;
  SolverOptions options_;
  std::unique_ptr<Scratch> scratch_;
};

using Solver = SolverT<float>;

// contacts of a state (colliders and particle pairs), for drawing
template <class S>
void compute_contacts(const ModelT<S>& model, const StateT<S>& state, ContactsT<S>& contacts);

// check a state for the first non-finite value; message names particle and quantity
template <class S>
Status check_state_finite(const StateT<S>& s, const char* what);

}  // namespace adj
