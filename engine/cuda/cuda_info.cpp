#include "engine/cuda/cuda_info.h"

#if defined(ADJ_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace adj {

CudaInfo cuda_info() {
  CudaInfo info;
#if defined(ADJ_HAS_CUDA)
  info.built = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // without a driver the count is left unwritten: trust only the error code
    info.reason = err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice
                      ? std::string("no NVIDIA GPU or driver here (") + cudaGetErrorName(err) + ")"
                      : std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error
    return info;
  }
  if (count <= 0) {
    info.reason = "no CUDA device";
    return info;
  }
  info.device_count = count;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) info.device_name = prop.name;
  info.available = true;
#else
  info.reason = "built without CUDA (configure with ADJ_CUDA=ON and nvcc installed)";
#endif
  return info;
}

}  // namespace adj
