#include "common/cuda_device.cuh"
#include "gemv_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("gemv", run_gemv, {GPUVP_CUDA_KERNEL(gemv_n), GPUVP_CUDA_KERNEL(gemv_t)});
}
