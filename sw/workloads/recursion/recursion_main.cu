#include "common/cuda_device.cuh"
#include "recursion_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("recursion", run_recursion, {GPUVP_CUDA_KERNEL(recursion_kernel)});
}
