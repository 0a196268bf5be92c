// Backward Euler for the particle stages (a Model whose integrator is INTEGRATOR_IMPLICIT, the
// scene's "settings": {"integrator": "implicit"}). Each substep of length h solves for the new
// velocities v+ of the free particles
//   g(v+) = M ((1 + c h) v+ - v - h gravity) - h f(x + h v+, v+) = 0,   x+ = x + h v+
// where f is every force of the explicit step (elements, ground/collider and particle-particle
// contact, the control's external forces), evaluated by the same kernels (engine/solver/kernels.h),
// and c the global damping. Newton's method with a backtracking line search on the step's incremental
// potential (g is its gradient; its change along the search direction by Simpson's rule on g, see
// Work::solve), stopping at |g| <= tol * the step's momentum scale, or below sqrt(tol) after 4
// iterations without a 10% gain (a float solve at a contact's kink; ImplicitStats counts those), or
// at |g|'s rounding floor (within 4x of its estimate from J's blocks and the scalar's rounding of
// x+ and the momenta, after 2 iterations that did not halve |g|: a stretched cloth in float,
// ImplicitStats::at_floor); each Newton
// system J d = -g, J = M (1 + c h) - h df/dv - h^2 df/dx, is solved by restarted GMRES, because J
// is not symmetric where damping, friction or aerodynamics act. J is assembled at each Newton
// iterate in 3x3 blocks d f_i / d u_j along (x + h u, v + u), a block row per particle: each
// element's V x V blocks from one eval of the very function the forward runs on 3V tangents (a
// triangle's membrane, a bending edge and a tet in closed form), the colliders', particle pairs'
// and body pairs' on 3 tangents with one particle's inputs seeded (engine/solver/kernels.h's
// jacobian_blocks), and GMRES's products are block-sparse products. J's block pattern is kept
// from step to step while the model's elements stay the same.
// GMRES is right-preconditioned by block ILU(0) of J's blocks (or block Jacobi, J's 3x3 diagonal
// blocks: ImplicitOptions::preconditioner), so the stiffness-to-mass ratio h^2 k / m that
// conditions J is divided out, along the elements' coupling; on the right, GMRES's residual and
// its stopping test stay the true |J d + g|. Contact is inside the
// solve (its penalty force is part of f, at x+). Pinned particles (mass 0) keep their velocity and
// move with it, as in the explicit step.
//
// The adjoint differentiates the converged step implicitly: J^T lambda = dL/dv+ + h dL/dx+ by
// GMRES (preconditioned by the transposed preconditioner), its products with J assembled at the converged
// step, then one vector-Jacobian product of the adjoint kernels seeded with h lambda gives
// dL/d(positions, velocities, controls, model parameters). The forward is recomputed from the
// step's input (deterministically).
//
// Beside articulated bodies (SolverT's coupled substep, engine/solver/coupled.cpp) the bodies step
// explicitly and the particles by this solve: the body-particle contact forces
// (engine/articulation/body_particle.h) at the iterate are part of f, with the bodies' poses and
// velocities of the substep's input held fixed; the converged pairs are what the bodies feel (the
// equal and opposite forces), so momentum passes both ways. Its adjoint takes dL/d those reaction
// forces from the articulation's adjoint, adds their dependence on x+ and v+ to the right-hand
// side, solves the same transposed system, and leaves each touching pair's body pose, velocity
// and contact-parameter adjoints in its slot for the kinematics adjoint.
//
// One thread, a fixed order: the same bits at any thread count. CPU only (the CUDA backend
// refuses a model with this integrator).
#pragma once

#include <memory>

#include "engine/core/spatial.h"
#include "engine/core/status.h"
#include "engine/model/model.h"

namespace adj {

template <class S>
struct ModelGradView;  // engine/solver/kernels.h
template <class S>
struct StepRecordT;  // engine/solver/solver.h

namespace rigid {
template <class T>
struct RigidViewT;  // engine/model/rigid_view.h
template <class S>
struct CouplingPair;  // engine/articulation/body_particle.h
template <class S>
struct CouplingPairGrad;
}  // namespace rigid

// the bodies beside the particles in a coupled substep: their shapes at the substep input's poses
// and velocities (held fixed in the solve), and the pair slots (shape_count x particle_count)
template <class S>
struct ImplicitBodies {
  const rigid::RigidViewT<S>* m = nullptr;
  const mat33<S>* R = nullptr;                  // body axes, (body_count)
  const vec3<S>* p = nullptr;                   // body origins, (body_count)
  const rigid::svec<S>* v = nullptr;            // body spatial velocities, (body_count)
  rigid::CouplingPair<S>* pairs = nullptr;      // written: the pairs of the converged state
  rigid::CouplingPairGrad<S>* grads = nullptr;  // adjoint: each touching pair's adjoints, written
  const rigid::svec<S>* adj_fext = nullptr;     // adjoint: dL/d the pair forces on each body, (body_count)
};

// the preconditioner of GMRES on the assembled Newton matrix J: none (plain GMRES), block Jacobi
// (J's 3x3 diagonal blocks), block ILU(0) (J's blocks factored L U within J's own block pattern:
// it sees the coupling along the elements, where block Jacobi sees each particle alone)
enum class ImplicitPreconditioner { none, block_jacobi, block_ilu };

struct ImplicitOptions {
  // Newton iterations per substep: most substeps take 2-20; a pinch's friction (stick/slip
  // within a few um/s) takes up to about 50 short steps
  int max_newton = 100;
  // stop at |g| <= tol * scale, scale = |M (v + h gravity)| + |h f(x + h v, v)| over the free
  // particles (the step's momentum); 0: 1e-5 in float, 1e-11 in double (above the rounding floor
  // of a pinched block, whose contact and elastic forces cancel: about 2e-12)
  double tol = 0;
  int max_krylov = 800;  // GMRES products per linear solve
  int restart = 100;     // GMRES restart length
  // GMRES's right preconditioner (the adjoint's J^T by its transpose)
  ImplicitPreconditioner preconditioner = ImplicitPreconditioner::block_ilu;
};

// counts since the solver was made (benchmarks, tests)
struct ImplicitStats {
  long long substeps = 0;
  long long newton = 0;  // Newton iterations
  long long krylov = 0;  // GMRES products (forward and adjoint)
  // substeps that stopped above the tolerance (stalled, at the floor, or max_newton exhausted)
  long long unconverged = 0;
  long long at_floor = 0;  // of those, the ones stopped at the rounding floor (Work::solve: no gain near it)
  long long stalled = 0;   // of those, the ones whose line search found no decrease of the potential
  long long steepest = 0;  // iterations whose Newton direction did not descend (steepest descent taken)
  // solves whose block ILU(0) broke down (its factors grew past 1 / epsilon of J's blocks, as on an
  // indefinite J) and ran under block Jacobi instead
  long long ilu_fallbacks = 0;
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
  // of the last substep's input; record (optional): each substep's input after the first and
  // converged velocity, for adjoint
  Status step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
              int substeps, ContactsT<S>* contacts, const ImplicitOptions& options, StepRecordT<S>* record = nullptr);
  // dL/d in from dL/d out; dL/d control and dL/d model accumulated (sized by the caller). With the
  // step's record (step's, of the same input) its substeps are not solved again
  Status adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt, int substeps,
                 const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model,
                 const ImplicitOptions& options, const StepRecordT<S>* record = nullptr);

  // one substep of length h beside bodies (the coupled substep): (x, v) -> (x_out, v_out), the
  // converged pairs into bodies.pairs; k names the substep in messages
  Status coupled_substep(const ModelT<S>& model, const vec3<S>* x, const vec3<S>* v, vec3<S>* x_out, vec3<S>* v_out,
                         const ControlT<S>& control, S h, const ImplicitBodies<S>& bodies,
                         const ImplicitOptions& options, int k);
  // its adjoint, given the substep's input (x, v) and converged velocity v_out (the forward's):
  // dL/d (x, v) into adj_x, adj_v from dL/d (x_out, v_out) in adj_x_out, adj_v_out and dL/d the
  // bodies' pair forces (bodies.adj_fext); dL/d control, the activations and the model
  // accumulated (grads: the particle-side gradient slots, engine/solver/grad_slots.h); the pairs'
  // body and parameter adjoints into bodies.grads
  Status coupled_substep_adjoint(const ModelT<S>& model, const vec3<S>* x, const vec3<S>* v, const vec3<S>* v_out,
                                 const ControlT<S>& control, S h, const ImplicitBodies<S>& bodies,
                                 const vec3<S>* adj_x_out, const vec3<S>* adj_v_out, vec3<S>* adj_x, vec3<S>* adj_v,
                                 ControlT<S>& adj_control, ModelGradT<S>& adj_model, const ModelGradView<S>& grads,
                                 const ImplicitOptions& options, int k);

  const ImplicitStats& stats() const;
  std::size_t scratch_bytes() const;

  // for tests: the Newton matrix J at the last substep's iterate (of the last step, coupled_substep
  // or adjoint; its model and control still alive): J u and J^T l from its assembled blocks (what
  // GMRES multiplies) into ju, jtl, and J^T l from the forces' adjoint kernels (vector-Jacobian
  // products: the definition the assembly is held against) into jtl_kernels; on the free
  // particles (l's pinned entries read as zero), each (particle_count)
  void newton_products(const vec3<S>* u, const vec3<S>* l, vec3<S>* ju, vec3<S>* jtl, vec3<S>* jtl_kernels);

 private:
  struct Work;
  std::unique_ptr<Work> w_;
};

}  // namespace adj
