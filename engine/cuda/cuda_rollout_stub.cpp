// built without CUDA: the device-resident rollout reports itself unavailable
#include "engine/cuda/cuda_rollout.h"

namespace adj {

namespace {
Status no_cuda() { return Status::error("CUDA rollout: built without CUDA"); }
}  // namespace

template <class S>
struct CudaRolloutT<S>::Impl {};

template <class S>
CudaRolloutT<S>::CudaRolloutT(CudaRolloutOptions<S> options) : options_(options) {}
template <class S>
CudaRolloutT<S>::~CudaRolloutT() = default;
template <class S>
Status CudaRolloutT<S>::upload(const ModelT<S>&) {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::set_initial(const StateT<S>&) {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::set_controls(const std::vector<ControlT<S>>&) {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::forward() {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::backward(const StateT<S>&) {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::restart_from_final() {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::synchronize() {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::download_state(int, StateT<S>&) const {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::download_grad_initial(StateT<S>&) const {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::download_grad_controls(std::vector<ControlT<S>>&) const {
  return no_cuda();
}
template <class S>
Status CudaRolloutT<S>::download_grad_model(ModelGradT<S>&) const {
  return no_cuda();
}
template <class S>
const vec3<S>* CudaRolloutT<S>::device_positions(int) const {
  return nullptr;
}
template <class S>
void* CudaRolloutT<S>::stream() const {
  return nullptr;
}
template <class S>
int CudaRolloutT<S>::particle_count() const {
  return 0;
}
template <class S>
std::size_t CudaRolloutT<S>::device_bytes() const {
  return 0;
}
template <class S>
int CudaRolloutT<S>::graph_launches() const {
  return 0;
}

template class CudaRolloutT<float>;
template class CudaRolloutT<double>;

}  // namespace adj
