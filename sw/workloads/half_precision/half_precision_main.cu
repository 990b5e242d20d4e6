#include "common/cuda_device.cuh"
#include "half_precision_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("half_precision", run_half_precision, {GPUVP_CUDA_KERNEL(half_ops)});
}
