// rigid bodies and particles stepped together, with two-way contact (engine/rigid/coupling.h).
//
// CoupledSolverT: one step of dt = `substeps` substeps of h. each substep reads one coupled
// state (particles x, v; robots q, qd) and writes the next:
//   body poses and velocities (rigid kinematics) -> body-particle contact forces ->
//   particles: one semi-implicit substep (SolverT) with the contact forces added to the
//   control's external forces -> bodies: one rigid substep with the equal and opposite forces
//   added to their external forces (rigid::Work::fext_extra)
// both sides read the same input state (explicit coupling), so the pair forces cancel exactly.
// step_adjoint() records the substeps and runs them backwards: the particle substep adjoint
// (SolverT::step_adjoint), the rigid substep adjoint (rigid::substep_adjoint, which leaves
// dL/d fext), the coupling forces' adjoint (dual numbers per touching pair) and the
// kinematics' vector-Jacobian product for the body poses the forces read. exact and
// deterministic, tested against central differences in tests/engine/rigid/coupling_test.cpp.
//
// CoupledRolloutT: T steps with checkpoints every K (as RolloutT / RigidRolloutT), gradients
// with respect to the initial coupled state, every step's controls (particle forces, spring
// and tet activations, actuator inputs) and the model parameters of both sides.
#pragma once

#include <functional>
#include <vector>

#include "engine/core/status.h"
#include "engine/rigid/coupling.h"
#include "engine/rigid/rigid_solver.h"
#include "engine/solver/solver.h"

namespace adj {

template <class S>
struct CoupledStateT {
  StateT<S> particles;
  RigidStateT<S> rigid;
};

template <class S>
struct CoupledControlT {
  ControlT<S> particles;  // particle_f may be empty (no external forces)
  RigidControlT<S> rigid;
};

template <class S>
struct CoupledModelGradT {
  ModelGradT<S> particles;  // contact_ke/kd/mu include the body-particle contact
  RigidModelGradT<S> rigid;
};

struct CoupledSolverOptions {
  int substeps = 1;          // substeps per step (contact forces found in each)
  int thread_count = 0;      // OpenMP threads of the particle solver, 0 = default
  bool check_finite = true;  // report the first non-finite value with its particle or joint
};

template <class S>
class CoupledSolverT {
 public:
  explicit CoupledSolverT(CoupledSolverOptions options = {});

  // advance by dt; optionally the body-particle contacts of the last substep's input
  Status step(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledStateT<S>& in, CoupledStateT<S>& out,
              const CoupledControlT<S>& control, S dt, rigid::CouplingContactsT<S>* contacts = nullptr);

  // given adj_out = dL/d out, write adj_in = dL/d in and accumulate dL/d control and dL/d
  // params into adj_control and adj_model (sized by the models' make_control / make_grad)
  Status step_adjoint(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledStateT<S>& in,
                      const CoupledControlT<S>& control, S dt, const CoupledStateT<S>& adj_out,
                      CoupledStateT<S>& adj_in, CoupledControlT<S>& adj_control, CoupledModelGradT<S>& adj_model);

  const CoupledSolverOptions& options() const { return options_; }

 private:
  // one substep from sub_[k] into sub_[k + 1]; keeps the rigid scratch in tape_[k]
  Status substep(const ModelT<S>& pm, const RigidModelT<S>& rm, const CoupledControlT<S>& control, S h, int k,
                 rigid::CouplingContactsT<S>* contacts);

  CoupledSolverOptions options_;
  SolverT<S> particle_solver_;
  std::vector<CoupledStateT<S>> sub_;  // substep states, (substeps + 1)
  std::vector<rigid::Work<S>> tape_;   // rigid scratch of each substep (poses, fext, Cholesky)
  std::vector<ControlT<S>> pcontrol_;  // particle control of each substep (with the contact forces)
  std::vector<vec3<S>> f_particle_;
  std::vector<rigid::svec<S>> fext_body_;
  rigid::AdjWork<S> adj_work_;
};

template <class S>
struct CoupledRolloutOptions {
  int steps = 1;             // T
  S dt = S(1.0 / 60.0);      // step length [s]
  int substeps = 1;          // substeps per step
  int checkpoint_every = 0;  // K; 0 = ceil(sqrt(T)), 1 = keep every state
  int thread_count = 0;      // particle solver threads, 0 = default
};

template <class S>
class CoupledRolloutT {
 public:
  using Observer = std::function<void(int t, const CoupledStateT<S>& state)>;
  // called with t = T..0 in the backward pass: add dLoss/d state_t into adj
  using Seed = std::function<void(int t, const CoupledStateT<S>& state, CoupledStateT<S>& adj)>;

  // the models must outlive the rollout
  CoupledRolloutT(const ModelT<S>& pm, const RigidModelT<S>& rm, CoupledRolloutOptions<S> options);

  // controls: one per step, one for all steps, or none (zero inputs)
  Status forward(const CoupledStateT<S>& initial, const std::vector<CoupledControlT<S>>& controls = {},
                 const Observer& observe = {});
  Status backward(const Seed& seed);

  const CoupledStateT<S>& final_state() const { return final_; }
  const CoupledStateT<S>& grad_initial() const { return grad_initial_; }
  const std::vector<CoupledControlT<S>>& grad_controls() const { return grad_controls_; }  // (T)
  const CoupledModelGradT<S>& grad_model() const { return grad_model_; }
  int checkpoint_every() const { return k_; }

 private:
  const CoupledControlT<S>& control(int t) const;

  const ModelT<S>* pm_;
  const RigidModelT<S>* rm_;
  CoupledRolloutOptions<S> options_;
  int k_ = 1;
  CoupledSolverT<S> solver_;
  std::vector<CoupledStateT<S>> checkpoints_;
  std::vector<CoupledControlT<S>> controls_;
  CoupledControlT<S> zero_control_;
  CoupledStateT<S> final_, grad_initial_;
  std::vector<CoupledControlT<S>> grad_controls_;
  CoupledModelGradT<S> grad_model_;
  bool forward_done_ = false;
};

// a coupled state of zeros shaped like `like`
template <class S>
CoupledStateT<S> coupled_zero_like(const CoupledStateT<S>& like);

using CoupledSolver = CoupledSolverT<float>;
using CoupledRollout = CoupledRolloutT<float>;

}  // namespace adj
