// the CUDA backend: the same substep kernels (engine/solver/kernels.h) launched on the GPU.
// Available when built with nvcc (ADJ_HAS_CUDA) and a device is present at run time.
// A model with articulated bodies steps particles and bodies together, as SolverT does: the
// coupled substep's functors of engine/solver/coupled_kernels.h (engine/cuda/cuda_coupled.cuh),
// through the substep loops SolverT runs on the host. Mesh body shapes are refused at upload
// (their contact compiles for the device but has not been checked on one).
#pragma once

#include <memory>
#include <string>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/solver/solver.h"

namespace adj {

// whether a CUDA device can be used now; otherwise `reason` says why
bool cuda_available(std::string* reason = nullptr);

// a GPU solver with the CPU solver's interface: states and controls stay on the host in
// this API (uploaded/downloaded per call), the model is uploaded once. Results match the
// CPU solver to rounding (same kernels, same gather order; float summation may differ).
template <class S>
class CudaSolverT {
 public:
  explicit CudaSolverT(SolverOptions options = {});
  ~CudaSolverT();
  CudaSolverT(const CudaSolverT&) = delete;
  CudaSolverT& operator=(const CudaSolverT&) = delete;

  // copy the model to the device (again after any parameter change); the model must outlive
  // the solver's use of it
  Status upload(const ModelT<S>& model);
  Status step(const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt);
  Status step_adjoint(const StateT<S>& in, const ControlT<S>& control, S dt, const StateT<S>& adj_out,
                      StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model);

 private:
  struct Impl;
  SolverOptions options_;
  std::unique_ptr<Impl> impl_;
};

using CudaSolver = CudaSolverT<float>;

}  // namespace adj
