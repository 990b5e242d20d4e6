#include "common/cuda_device.cuh"
#include "gemm_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("gemm", run_gemm, {GPUVP_CUDA_KERNEL(gemm_tiled)});
}
