#include "common/cuda_device.cuh"
#include "trsv_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("trsv", run_trsv, {GPUVP_CUDA_KERNEL(trsv_diagonal), GPUVP_CUDA_KERNEL(trsv_update)});
}
