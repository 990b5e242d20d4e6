#include "common/cuda_device.cuh"
#include "dynamic_parallelism_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("dynamic_parallelism", run_dynamic_parallelism,
                            {GPUVP_CUDA_KERNEL(dp_tree_sum), GPUVP_CUDA_KERNEL(dp_quicksort),
                             GPUVP_CUDA_KERNEL(dp_count_marks), GPUVP_CUDA_KERNEL(dp_mark_then_tail)});
}
