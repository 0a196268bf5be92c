// a batch of independent environments of one rigid model on the GPU: one CUDA thread per
// environment runs the step (or the step adjoint) of engine/articulation/rigid_batch.h, the same
// ADJ_HD functions that SolverT's articulation stage runs on the host, where the functors equal
// SolverT bit for bit (tests/engine/articulation/batch_test.cpp). on the device the results match
// to float round-off (nvcc contracts a*b+c into FMAs); run to run they are bit-identical (no
// atomics: per-environment parameter gradients are summed on the host in environment order). states
// and controls stay on the host in this API (uploaded and downloaded per call), as CudaSolverT
// does; the model is uploaded once. mesh shapes are CPU-only; body-particle coupling
// (engine/articulation/body_particle.h) steps on the device through CudaSolverT
// (engine/cuda/cuda.h), not through this batch.
//
// built without CUDA (rigid_cuda_stub.cpp) every call returns an error.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/rigid_model.h"

namespace adj {

template <class S>
class RigidBatchCudaT {
 public:
  RigidBatchCudaT();
  ~RigidBatchCudaT();
  RigidBatchCudaT(const RigidBatchCudaT&) = delete;
  RigidBatchCudaT& operator=(const RigidBatchCudaT&) = delete;

  // copies the model to the device and gives each of env_count environments its scratch
  // (`substeps` substeps per step); again after any parameter change
  Status upload(const RigidModelT<S>& model, int env_count, int substeps);
  // packed environment-major (engine/articulation/rigid_batch.h): q (env_count x q_count), qd
  // (env_count x dof_count), act (env_count x actuator_count)
  Status step(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt, std::vector<S>& q_out,
              std::vector<S>& qd_out);
  // adj_act: this step's dL/d act (written); adj_model: dL/d params summed over the
  // environments in environment order (accumulated)
  Status step_adjoint(const std::vector<S>& q, const std::vector<S>& qd, const std::vector<S>& act, S dt,
                      const std::vector<S>& adj_q_out, const std::vector<S>& adj_qd_out, std::vector<S>& adj_q,
                      std::vector<S>& adj_qd, std::vector<S>& adj_act, RigidModelGradT<S>& adj_model);
  std::size_t device_bytes() const;  // memory held on the device

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

using RigidBatchCuda = RigidBatchCudaT<float>;

}  // namespace adj
