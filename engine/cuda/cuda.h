// the CUDA backend: the same substep kernels (engine/solver/kernels.h) launched on the GPU.
// Available when built with nvcc (ADJ_HAS_CUDA) and a device is present at run time.
// A model with articulated bodies steps particles and bodies together, as SolverT does: the
// coupled substep's functors of engine/solver/coupled_kernels.h (engine/cuda/cuda_coupled.cuh),
// through the substep loops SolverT runs on the host. Mesh body shapes are refused at upload
// (their contact compiles for the device but has not been checked on one).
//
// Many worlds (engine/solver/worlds.h's: one state, control and model per world) step through
// the same class (upload_worlds, step_worlds, step_adjoint_worlds; engine/cuda/cuda_worlds.cu):
// - a model of bodies only, the same for every world: all worlds in ONE launch per step of the
//   rigid batch kernel, one CUDA thread per world (engine/articulation/rigid_batch.h's functors:
//   the functions SolverT's articulation stage runs, on the model's view and an arena slice per
//   world; per-world parameter gradients in their own rows, no atomics: deterministic);
// - any other worlds (particles, particles and bodies, or each world its own randomized model):
//   each world through the one-world launcher of step() below, one world after another: ONE
//   LAUNCH SEQUENCE PER WORLD, not one over all worlds (each world holds its own device model
//   and buffers).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/solver/solver.h"

namespace adj {

// whether a CUDA device can be used now; otherwise `reason` says why
bool cuda_available(std::string* reason = nullptr);

// a GPU solver with the CPU solver's interface: states and controls stay on the host in
// this API (uploaded/downloaded per call), the model is uploaded once. Results match the
// CPU solver to rounding (same kernels, same gather order; float summation may differ; nvcc
// contracts a*b+c into FMAs).
template <class S>
class CudaSolverT {
 public:
  explicit CudaSolverT(SolverOptions options = {});
  ~CudaSolverT();
  CudaSolverT(const CudaSolverT&) = delete;
  CudaSolverT& operator=(const CudaSolverT&) = delete;

  // one world: copy the model to the device (again after any parameter change); the model must
  // outlive the solver's use of it
  Status upload(const ModelT<S>& model);
  Status step(const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt);
  Status step_adjoint(const StateT<S>& in, const ControlT<S>& control, S dt, const StateT<S>& adj_out,
                      StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model);

  // many worlds (the top comment says which launch runs them): world_count copies of one model,
  // or world w under models[w] (WorldsT::model(w): a randomized world's own copy). Again after
  // any parameter change; the models must outlive the solver's use of them. Errors: no worlds,
  // no device, an implicit or mesh-shaped model (as upload()).
  Status upload_worlds(const ModelT<S>& model, int world_count);
  Status upload_worlds(const std::vector<const ModelT<S>*>& models);
  int world_count() const;
  bool worlds_batched() const;  // the worlds run as one launch of the rigid batch kernel
  // every world's step: in, out and control hold one entry per world (out is resized)
  Status step_worlds(const std::vector<StateT<S>>& in, std::vector<StateT<S>>& out,
                     const std::vector<ControlT<S>>& control, S dt);
  // every world's step adjoint, per world as SolverT::step_adjoint over WorldsT gives it: adj_in[w]
  // written, dL/d control and dL/d model parameters accumulated into adj_control[w] and
  // adj_model[w] (each world's own, from its model's make_control/make_grad; not summed over the
  // worlds). An error names the first failing world.
  Status step_adjoint_worlds(const std::vector<StateT<S>>& in, const std::vector<ControlT<S>>& control, S dt,
                             const std::vector<StateT<S>>& adj_out, std::vector<StateT<S>>& adj_in,
                             std::vector<ControlT<S>>& adj_control, std::vector<ModelGradT<S>>& adj_model);
  // device memory the rigid batch holds (0 on the per-world path: its arrays are not counted)
  std::size_t device_bytes() const;

 private:
  struct Impl;   // one world's device model and buffers (cuda_solver_impl.cuh)
  struct Batch;  // bodies-only worlds as one launch (cuda_worlds.cu)
  struct BatchDelete {
    void operator()(Batch* p) const;
  };
  Status check_worlds(std::size_t in, std::size_t control) const;
  SolverOptions options_;
  std::unique_ptr<Impl> impl_;                 // upload()'s world
  std::vector<std::unique_ptr<Impl>> worlds_;  // upload_worlds' per-world path, one each
  std::unique_ptr<Batch, BatchDelete> batch_;  // upload_worlds' batch path
};

using CudaSolver = CudaSolverT<float>;

}  // namespace adj
