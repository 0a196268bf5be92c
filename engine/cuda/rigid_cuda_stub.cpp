// built without CUDA: every call of the rigid batch is an error
#include "engine/cuda/rigid_cuda.h"

namespace adj {

template <class S>
struct RigidBatchCudaT<S>::Impl {};

template <class S>
RigidBatchCudaT<S>::RigidBatchCudaT() = default;
template <class S>
RigidBatchCudaT<S>::~RigidBatchCudaT() = default;
template <class S>
Status RigidBatchCudaT<S>::upload(const RigidModelT<S>&, int, int) {
  return Status::error("rigid CUDA batch: built without CUDA");
}
template <class S>
Status RigidBatchCudaT<S>::step(const std::vector<S>&, const std::vector<S>&, const std::vector<S>&, S, std::vector<S>&,
                                std::vector<S>&) {
  return Status::error("rigid CUDA batch: built without CUDA");
}
template <class S>
Status RigidBatchCudaT<S>::step_adjoint(const std::vector<S>&, const std::vector<S>&, const std::vector<S>&, S,
                                        const std::vector<S>&, const std::vector<S>&, std::vector<S>&, std::vector<S>&,
                                        std::vector<S>&, RigidModelGradT<S>&) {
  return Status::error("rigid CUDA batch: built without CUDA");
}
template <class S>
std::size_t RigidBatchCudaT<S>::device_bytes() const {
  return 0;
}

template class RigidBatchCudaT<float>;
template class RigidBatchCudaT<double>;

}  // namespace adj
