// Backward Euler for the particle stages (a Model whose integrator is INTEGRATOR_IMPLICIT, the
// scene's "settings": {"integrator": "implicit"}). Each substep of length h solves for the new
// velocities v+ of the free particles
//   g(v+) = M ((1 + c h) v+ - v - h gravity) - h f(x + h v+, v+) = 0,   x+ = x + h v+
// where f is every force of the explicit step (elements, ground/collider and particle-particle
// contact, the control's external forces), evaluated by the same kernels (engine/solver/kernels.h),
// and c the global damping. Newton's method with a backtracking line search on |g| (it stops at the
// tolerance, or below sqrt(tolerance) where short steps stall at a contact's kink: ImplicitStats); each Newton
// system J d = -g, J = M (1 + c h) - h df/dv - h^2 df/dx, is solved by restarted GMRES, because J
// is not symmetric where damping, friction or aerodynamics act. Its products J d come from one
// evaluation of the force kernels on dual numbers (a Jacobian-vector product): no force is
// written twice. Contact is inside the solve (its penalty force is part of f, at x+). Pinned
// particles (mass 0) keep their velocity and move with it, as in the explicit step.
//
// The adjoint differentiates the converged step implicitly: J^T lambda = dL/dv+ + h dL/dx+ by
// GMRES, its products from the adjoint kernels (vector-Jacobian products), then one more
// vector-Jacobian product seeded with h lambda gives dL/d(positions, velocities, controls, model
// parameters). The forward is recomputed from the step's input (deterministically).
//
// One thread, a fixed order: the same bits at any thread count. CPU only (the CUDA backend
// refuses a model with this integrator).
#pragma once

#include <memory>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace adj {

struct ImplicitOptions {
  int max_newton = 30;  // Newton iterations per substep
  // stop at |g| <= tol * scale, scale = |M (v + h gravity)| + |h f(x + h v, v)| over the free
  // particles (the step's momentum); 0: 1e-5 in float, 1e-12 in double
  double tol = 0;
  int max_krylov = 800;  // GMRES products per linear solve
  int restart = 100;     // GMRES restart length
};

// counts since the solver was made (benchmarks, tests)
struct ImplicitStats {
  long long substeps = 0;
  long long newton = 0;       // Newton iterations
  long long krylov = 0;       // GMRES products (forward and adjoint)
  long long unconverged = 0;  // substeps that stopped above the tolerance (stalled at a contact kink, or max_newton)
  double last_residual = 0;   // |g| / scale of the last substep
  double worst_residual = 0;  // the largest |g| / scale a substep ended with
};

template <class S>
class ImplicitSolverT {
 public:
  ImplicitSolverT();
  ~ImplicitSolverT();
  ImplicitSolverT(ImplicitSolverT&&) noexcept;
  ImplicitSolverT& operator=(ImplicitSolverT&&) noexcept;

  // `substeps` backward Euler substeps of dt / substeps from `in` to `out`; contacts (optional):
  // of the last substep's input
  Status step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
              int substeps, ContactsT<S>* contacts, const ImplicitOptions& options);
  // dL/d in from dL/d out; dL/d control and dL/d model accumulated (sized by the caller)
  Status adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt, int substeps,
                 const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model,
                 const ImplicitOptions& options);

  const ImplicitStats& stats() const;
  std::size_t scratch_bytes() const;

 private:
  struct Work;
  std::unique_ptr<Work> w_;
};

}  // namespace adj
