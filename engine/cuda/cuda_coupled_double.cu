// CudaSolverT<double>'s coupled path of particles and articulated bodies (cuda_coupled.cuh)
#include "engine/cuda/cuda_coupled.cuh"

namespace adj::cuda_detail {

ADJ_CUDA_COUPLED(double)

}  // namespace adj::cuda_detail
