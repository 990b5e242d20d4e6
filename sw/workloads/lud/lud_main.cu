#include "common/cuda_device.cuh"
#include "lud_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("lud", run_lud,
                            {GPUVP_CUDA_KERNEL(lud_diagonal), GPUVP_CUDA_KERNEL(lud_perimeter),
                             GPUVP_CUDA_KERNEL(lud_internal)});
}
