#pragma once
// Whether the CUDA backend can run here: built with it, a driver, and a device.
#include <string>

namespace adj {

struct CudaInfo {
  bool built = false;       // compiled with the CUDA backend (ADJ_HAS_CUDA)
  bool available = false;   // a CUDA device can be used now
  int device_count = 0;
  std::string device_name;  // first device, when available
  std::string reason;       // why not available ("built without CUDA", "no driver: ...")
};

// queries the CUDA runtime (cheap after the first call is not guaranteed: call once)
CudaInfo cuda_info();

}  // namespace adj
