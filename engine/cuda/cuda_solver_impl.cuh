// internal to engine/cuda (nvcc only): CudaSolverT's device state of one world, shared by the
// particle path (cuda_backend.cu), the per-world path of many worlds (cuda_worlds.cu) and the
// coupled path of particles and articulated bodies
// (cuda_coupled.cuh, engine/solver/coupled_kernels.h's functors), which has its own
// translation units (cuda_coupled_float.cu, cuda_coupled_double.cu) so the rigid stages compile
// apart from the particle kernels and in parallel.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/cuda/cuda.h"
#include "engine/cuda/device.cuh"
#include "engine/model/rigid_view.h"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"

namespace adj {

namespace cuda_detail {

// the coupled path's device state (cuda_coupled.cuh): the bodies' model as a view over device
// copies, the articulation arena of every substep (engine/solver/coupled_kernels.h's
// CoupledScratch carves it), the pair slots and the particles' control + pair forces
template <class S>
struct CoupledDevice;
template <class S>
struct CoupledDeviceDelete {
  void operator()(CoupledDevice<S>* p) const;
};

// the coupled step and its adjoint on the device (cuda_coupled.cuh); the particle buffers are
// the solver's (CudaSolverT<S>::Impl)
template <class S, class Impl>
Status coupled_upload(Impl& d, const ModelT<S>& m, int substeps);
template <class S, class Impl>
Status coupled_step(Impl& d, const SolverOptions& o, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control,
                    S dt);
template <class S, class Impl>
Status coupled_step_adjoint(Impl& d, const SolverOptions& o, const StateT<S>& in, const ControlT<S>& control, S dt,
                            const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control,
                            ModelGradT<S>& adj_model);

}  // namespace cuda_detail

using namespace cuda_detail;

template <class S>
struct CudaSolverT<S>::Impl {
  cudaError_t error = cudaSuccess;
  const ModelT<S>* host = nullptr;  // for the grid build and messages
  DeviceModel<S> model;
  // per-call data
  std::vector<DeviceState<S>> sub;
  std::vector<DeviceArray<vec3<S>>> f_total_sub;  // total force of each recomputed substep
  DeviceState<S> adj_a, adj_b, adj_top;
  DeviceArray<vec3<S>> f_slot, f_total, adj_f, adj_q_slot, adj_qd_slot, dummy_q, dummy_qd, control_f, adj_control_f;
  DeviceArray<S> spring_act, tet_act, adj_spring_act, adj_tet_act;
  GradSlots grad_slots;      // the model-gradient slots (engine/solver/grad_slots.h)
  DeviceArray<S> adj_model;  // ... all of them, (grad_slots.size)
  DeviceGrid<S> grid_;       // built on the device each substep when particle contact is on
  cudaStream_t stream = nullptr;
  std::unique_ptr<CoupledDevice<S>, CoupledDeviceDelete<S>> coupled;  // models with bodies (cuda_coupled.cuh)

  template <class T>
  const T* up(DeviceArray<T>& d, const std::vector<T>& a) {
    cudaError_t e = d.upload(a);
    if (e != cudaSuccess && error == cudaSuccess) error = e;
    return a.empty() ? nullptr : d.get();
  }
  void check(cudaError_t e) {
    if (e != cudaSuccess && error == cudaSuccess) error = e;
  }

  GridView grid(const vec3<S>* q_device) {
    if (host->particle_contact) grid_.build(CudaExec{&error, stream}, q_device, host->particle_count());
    return grid_.view();
  }

  void alloc_state(DeviceState<S>& s, int n) { check(s.alloc(n)); }

  // one world's upload, step and step adjoint (cuda_backend.cu): CudaSolverT's upload(), step()
  // and step_adjoint(), and each world's on the per-world path of its worlds (cuda_worlds.cu)
  Status load(const SolverOptions& o, const ModelT<S>& m);
  Status step(const SolverOptions& o, const StateT<S>& in, StateT<S>& out, const ControlT<S>& control, S dt);
  Status step_adjoint(const SolverOptions& o, const StateT<S>& in, const ControlT<S>& control, S dt,
                      const StateT<S>& adj_out, StateT<S>& adj_in, ControlT<S>& adj_control, ModelGradT<S>& adj_model);
};

// the particle substep's arguments: the device model, the control uploaded
template <class S, class Impl>
inline KernelArgs<S> device_args(Impl& d, const ControlT<S>& c, S h) {
  KernelArgs<S> a{};
  a.m = d.model.view;
  a.dt = h;
  a.control_f = c.particle_f.empty() ? nullptr : d.up(d.control_f, c.particle_f);
  a.spring_act = d.up(d.spring_act, c.spring_act);
  a.tet_act = d.up(d.tet_act, c.tet_act);
  a.f_slot = d.f_slot.get();
  a.f_total = d.f_total.get();
  return a;
}

}  // namespace adj
