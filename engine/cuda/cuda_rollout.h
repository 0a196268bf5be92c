// a device-resident rollout on the CUDA backend: the model, the initial state, the
// controls and every state of the rollout live on the GPU. Upload once, run T steps and
// the backward pass without any host copy, download on request. The forward pass is
// captured once as one CUDA graph (T steps x substeps) and replayed; the backward pass
// replays a captured one-step adjoint graph T times (each step's input state and control
// are copied device-to-device into the graph's fixed buffers first). The same kernels as
// the CPU solver (engine/solver/kernels.h); per-element slots gathered through CSR
// incidence, no float atomics: run-to-run bit-identical on one GPU. Particles only: a model
// with articulated bodies is refused at upload (CudaSolverT, engine/cuda/cuda.h, steps them).
//
// Built without CUDA (cuda_rollout_stub.cpp) every call returns an error.
#pragma once

#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace adj {

template <class S>
struct CudaRolloutOptions {
  int steps = 1;         // T
  S dt = S(1.0 / 60.0);  // step length [s]
  int substeps = 1;      // solver substeps per step
  bool graphs = true;    // capture and replay CUDA graphs (false: launch kernels one by one)
  bool backward = true;  // keep what the backward pass needs (per-substep forces)
};

template <class S>
class CudaRolloutT {
 public:
  explicit CudaRolloutT(CudaRolloutOptions<S> options);
  ~CudaRolloutT();
  CudaRolloutT(const CudaRolloutT&) = delete;
  CudaRolloutT& operator=(const CudaRolloutT&) = delete;

  // copy the model to the device and allocate T + 1 device states (again after a
  // parameter change: the captured graphs are dropped)
  Status upload(const ModelT<S>& model);
  // the initial state (particle_count of the model) and 0, 1 or T controls
  Status set_initial(const StateT<S>& initial);
  Status set_controls(const std::vector<ControlT<S>>& controls);

  // states 1..T from state 0 (first call captures the graph); asynchronous on stream()
  Status forward();
  // dL/d(state 0), dL/d controls and dL/d model for the seed dL/d(state T); asynchronous
  Status backward(const StateT<S>& adj_final);
  // state T becomes state 0 on the device (a live view: forward() again continues the
  // motion); asynchronous on stream(), no host copy
  Status restart_from_final();
  // wait for the work in flight; the first CUDA error, with what was running
  Status synchronize();

  // downloads (synchronize first); out-of-range t is an error naming t
  Status download_state(int t, StateT<S>& out) const;
  Status download_grad_initial(StateT<S>& out) const;
  Status download_grad_controls(std::vector<ControlT<S>>& out) const;  // one per control given
  Status download_grad_model(ModelGradT<S>& out) const;

  // positions of state t on the device (vec3<S>, particle_count): engine/vis kernels read
  // them on stream() to fill render buffers; null when out of range
  const vec3<S>* device_positions(int t) const;
  void* stream() const;  // cudaStream_t
  int steps() const { return options_.steps; }
  int particle_count() const;
  std::size_t device_bytes() const;  // memory held on the device
  int graph_launches() const;        // graphs launched so far (forward and backward)

 private:
  struct Impl;
  CudaRolloutOptions<S> options_;
  std::unique_ptr<Impl> impl_;
};

using CudaRollout = CudaRolloutT<float>;

}  // namespace adj
