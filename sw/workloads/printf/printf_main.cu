#include "common/cuda_device.cuh"
#include "printf_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("printf", run_printf, {GPUVP_CUDA_KERNEL(printf_formats), GPUVP_CUDA_KERNEL(printf_threads)});
}
