#include "common/cuda_device.cuh"
#include "device_heap_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("device_heap", run_device_heap,
                            {GPUVP_CUDA_KERNEL(heap_build_lists), GPUVP_CUDA_KERNEL(heap_sum_lists),
                             GPUVP_CUDA_KERNEL(heap_grab), GPUVP_CUDA_KERNEL(heap_release)});
}
