// built without CUDA: the backend reports itself unavailable and every call is an error
#include "engine/cuda/cuda.h"

namespace adj {

bool cuda_available(std::string* reason) {
  if (reason) *reason = "built without CUDA";
  return false;
}

template <class S>
struct CudaSolverT<S>::Impl {};

template <class S>
CudaSolverT<S>::CudaSolverT(SolverOptions options) : options_(options) {}
template <class S>
CudaSolverT<S>::~CudaSolverT() = default;
template <class S>
Status CudaSolverT<S>::upload(const ModelT<S>&) {
  return Status::error("CUDA backend: built without CUDA");
}
template <class S>
Status CudaSolverT<S>::step(const StateT<S>&, StateT<S>&, const ControlT<S>&, S) {
  return Status::error("CUDA backend: built without CUDA");
}
template <class S>
Status CudaSolverT<S>::step_adjoint(const StateT<S>&, const ControlT<S>&, S, const StateT<S>&, StateT<S>&,
                                    ControlT<S>&, ModelGradT<S>&) {
  return Status::error("CUDA backend: built without CUDA");
}

template class CudaSolverT<float>;
template class CudaSolverT<double>;

}  // namespace adj
