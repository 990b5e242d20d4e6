#include "common/cuda_device.cuh"
#include "function_pointers_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("function_pointers", run_function_pointers, {GPUVP_CUDA_KERNEL(apply_ops)});
}
