// The one solver of the world: semi-implicit Euler with substeps on the CPU (OpenMP).
// step() reads `in` and writes `out` (states are never updated in place) and runs the stages
// that the Model holds, in one fixed order per substep:
//   body kinematics -> body-particle contact forces -> particle forces and integration (with
//   particle-shape and particle-particle contact) -> articulation dynamics (contact, joints,
//   actuators, the equal and opposite body-particle forces) and integration
// The particle stages integrate by semi-implicit Euler, or by backward Euler where the model's
// integrator says so (engine/solver/implicit.h: particle_step and particle_adjoint dispatch to it).
// A model without bodies runs the particle stages only (engine/solver/semi_implicit.cpp); one
// without particles the articulation stage only (engine/solver/articulation_stage.h, internal:
// callers step bodies through SolverT); one with both the coupled substep's functors
// (engine/solver/coupled_kernels.h, launched by engine/solver/coupled.cpp as the CUDA backend
// launches them): particles and bodies read the same input state (explicit coupling), so the
// pair forces cancel exactly.
// step_adjoint() runs the substeps backwards: from a StepRecord that step() filled, or after
// recomputing them from `in` (the same contacts, deterministically: the same numbers either way).
// tangent_step() and tangent_step_adjoint() run the particle stages and their reverse on tangent
// numbers over the same plain model, for second derivatives by forward over reverse
// (engine/solver/particle_tangent.cpp; a model of bodies only: the articulation stage's).
#pragma once

#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/solver/implicit.h"

namespace adj {

struct SolverOptions {
  int substeps = 1;              // substeps per step (contacts found in each)
  int thread_count = 0;          // OpenMP threads of the particle stages, 0 = default
  bool check_finite = true;      // report the first non-finite state/adjoint with its element
  bool body_param_grads = true;  // step_adjoint: also dL/d body parameters
  // cloth kernels' SIMD pack bytes: 0 = the widest the CPU has (64: AVX-512, 16 floats; 32: AVX2, 8),
  // else at most this many (16: SSE2's 4 floats; below 16: no packs); same numbers at every width
  int max_lane_bytes = 0;
  ImplicitOptions implicit;  // the implicit integrator's tolerances (a model's integrator: engine/solver/implicit.h)
};

namespace rigid {
template <class T>
struct StepTape;  // engine/articulation/rigid_adjoint.h
template <class T>
struct RigidViewT;  // engine/model/rigid_view.h
}  // namespace rigid
template <class T>
struct CoupledArgs;  // engine/solver/coupled_kernels.h
template <class T>
struct CoupledBuffers;

// the substeps of one step as step() ran them, the only forward results the adjoint reads. A
// Rollout that keeps every state keeps one per step, so the backward pass does not recompute
// the substeps. Particles only: the input state of each substep after the first (the first's
// is the step's input) and each substep's total force (the implicit integrator: its converged
// velocity instead, v_plus). Bodies only: the articulation's substeps
// (their inputs and scratch: a few KiB a substep). Particles with bodies record nothing.
template <class S>
struct StepRecordT {
  int substeps = 0;                        // particles: 0 = nothing recorded
  std::vector<StateT<S>> sub;              // inputs of substeps 1..substeps-1, (substeps - 1)
  std::vector<Array<vec3<S>>> f_total;     // total force on each particle [N], (substeps) x (particle_count)
  std::vector<Array<vec3<S>>> v_plus;      // implicit particles: each substep's converged velocity, (substeps)
  std::vector<rigid::StepTape<S>> bodies;  // bodies only: the articulation's record (1), else empty
  StepRecordT();
  ~StepRecordT();
  StepRecordT(const StepRecordT&);
  StepRecordT(StepRecordT&&) noexcept;
  StepRecordT& operator=(const StepRecordT&);
  StepRecordT& operator=(StepRecordT&&) noexcept;
  void resize(int particle_count, int substeps);
  bool matches(int particle_count) const;  // sized for this many particles
  std::size_t bytes() const;
};

template <class S>
class SolverT {
 public:
  explicit SolverT(SolverOptions options = {});
  ~SolverT();
  SolverT(SolverT&&) noexcept;
  SolverT& operator=(SolverT&&) noexcept;

  // advance by dt (split into options.substeps); contacts (optional), for drawing: of the last
  // substep's input (particles, bodies and body-particle pairs; a model of bodies only: the
  // bodies' of the step's input)
  // record (optional): the substeps, for step_adjoint
  Status step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
              ContactsT<S>* contacts = nullptr, StepRecordT<S>* record = nullptr);

  // given adj_out = dL/d out, write adj_in = dL/d in and accumulate dL/d control and
  // dL/d model parameters into adj_control and adj_model (sized by make_control/make_grad);
  // record (optional): what step() recorded from this `in`, read instead of a recompute
  Status step_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                      const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model,
                      const StepRecordT<S>* record = nullptr);

  // step() and step_adjoint() on tangent numbers (forward over reverse; the model's parameters
  // are constants): the adjoint's tangent is the directional derivative of dL/d in and
  // dL/d control along the inputs' tangents (and the upstream adjoint's). The same kernels on
  // one thread, the substeps recomputed from `in`; adj_control is accumulated (sized like
  // make_control's); no model gradient. Worlds with bodies (coupled) are refused: their
  // coupling stage has no tangent form. defined in particle_tangent.cpp
  using Tangent = Dual<S, 1>;
  Status tangent_step(const ModelT<S>& model, const StateT<Tangent>& in, StateT<Tangent>& out,
                      const ControlT<Tangent>& control, S dt);
  Status tangent_step_adjoint(const ModelT<S>& model, const StateT<Tangent>& in, const ControlT<Tangent>& control, S dt,
                              const StateT<Tangent>& adj_out, StateT<Tangent>& adj_in, ControlT<Tangent>& adj_control);

  const SolverOptions& options() const { return options_; }
  // bytes of scratch memory held
  std::size_t scratch_bytes() const;
  // the implicit integrator's iteration counts (zero while no implicit model was stepped)
  const ImplicitStats& implicit_stats() const;
  // the implicit integrator itself (tests: its Newton matrix at the last substep,
  // ImplicitSolverT::newton_products)
  ImplicitSolverT<S>& implicit_solver();

 private:
  struct Scratch;   // particle stages (semi_implicit.cpp)
  struct Bodies;    // articulation and coupling (coupled.cpp)
  struct Tangents;  // tangent_step's (particle_tangent.cpp)
  struct ScratchDelete {
    void operator()(Scratch* p) const;
  };
  struct TangentsDelete {
    void operator()(Tangents* p) const;
  };
  struct BodiesDelete {
    void operator()(Bodies* p) const;
  };
  // the particle stages alone, `substeps` substeps of dt / substeps
  Status particle_step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
                       int substeps, ContactsT<S>* contacts, StepRecordT<S>* record = nullptr);
  Status particle_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt, int substeps,
                          const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                          ModelGradT<S>& adj_model, const StepRecordT<S>* record = nullptr);
  // particles and bodies together, options.substeps coupled substeps (coupled.cpp): the step,
  // its substeps keeping their states and scratch (the last state into out, when given), the
  // functors' shared arguments and the substeps' buffers
  Status coupled_step(const ModelT<S>& model, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt,
                      ContactsT<S>* contacts);
  Status coupled_forward(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt, StateT<S>* out);
  CoupledArgs<S> coupled_args(const ModelT<S>& model, const rigid::RigidViewT<S>& view, const ControlT<S>& control,
                              S h);
  CoupledBuffers<S> coupled_buffers(const StateT<S>& in, StateT<S>* out);
  Status coupled_adjoint(const ModelT<S>& model, const StateT<S>& in, const ControlT<S>& control, S dt,
                         const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                         ModelGradT<S>& adj_model);
  Bodies& bodies();

  SolverOptions options_;
  std::unique_ptr<Scratch, ScratchDelete> scratch_;
  std::unique_ptr<Bodies, BodiesDelete> bodies_;
  std::unique_ptr<Tangents, TangentsDelete> tangents_;  // made by the first tangent call
};

using Solver = SolverT<float>;

// contacts of a state (colliders and particle pairs), for drawing
template <class S>
void compute_contacts(const ModelT<S>& model, const StateT<S>& state, ContactsT<S>& contacts);

// the first non-finite value of a state: particle position/velocity (by index), joint
// coordinate (by joint and body, when the model is given)
template <class S>
Status check_state_finite(const StateT<S>& s, const char* what);
template <class S>
Status check_state_finite(const ModelT<S>& model, const StateT<S>& s, const char* what);

}  // namespace adj
