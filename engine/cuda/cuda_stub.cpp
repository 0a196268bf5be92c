// built without CUDA: the backend reports itself unavailable and every call is an error
#include "engine/cuda/cuda.h"

namespace adj {

bool cuda_available(std::string* reason) {
  if (reason) *reason = "built without CUDA";
  return false;
}

namespace {
Status no_cuda() { return Status::error("CUDA backend: built without CUDA"); }
}  // namespace

template <class S>
struct CudaSolverT<S>::Impl {};
template <class S>
struct CudaSolverT<S>::Batch {};
template <class S>
void CudaSolverT<S>::BatchDelete::operator()(Batch* p) const {
  delete p;
}

template <class S>
CudaSolverT<S>::CudaSolverT(SolverOptions options) : options_(options) {}
template <class S>
CudaSolverT<S>::~CudaSolverT() = default;
template <class S>
Status CudaSolverT<S>::upload(const ModelT<S>&) {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::step(const StateT<S>&, StateT<S>&, const ControlT<S>&, S) {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::step_adjoint(const StateT<S>&, const ControlT<S>&, S, const StateT<S>&, StateT<S>&, ControlT<S>&,
                                    ModelGradT<S>&) {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::upload_worlds(const ModelT<S>&, int) {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::upload_worlds(const std::vector<const ModelT<S>*>&) {
  return no_cuda();
}
template <class S>
int CudaSolverT<S>::world_count() const {
  return 0;
}
template <class S>
bool CudaSolverT<S>::worlds_batched() const {
  return false;
}
template <class S>
Status CudaSolverT<S>::check_worlds(std::size_t, std::size_t) const {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::step_worlds(const std::vector<StateT<S>>&, std::vector<StateT<S>>&,
                                   const std::vector<ControlT<S>>&, S) {
  return no_cuda();
}
template <class S>
Status CudaSolverT<S>::step_adjoint_worlds(const std::vector<StateT<S>>&, const std::vector<ControlT<S>>&, S,
                                           const std::vector<StateT<S>>&, std::vector<StateT<S>>&,
                                           std::vector<ControlT<S>>&, std::vector<ModelGradT<S>>&) {
  return no_cuda();
}
template <class S>
std::size_t CudaSolverT<S>::device_bytes() const {
  return 0;
}

template class CudaSolverT<float>;
template class CudaSolverT<double>;

}  // namespace adj
