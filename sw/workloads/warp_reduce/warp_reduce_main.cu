#include "common/cuda_device.cuh"
#include "warp_reduce_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("warp_reduce", run_warp_reduce,
                            {GPUVP_CUDA_KERNEL(warp_block_sum), GPUVP_CUDA_KERNEL(warp_all_max),
                             GPUVP_CUDA_KERNEL(warp_inclusive_scan), GPUVP_CUDA_KERNEL(warp_segment_rotate),
                             GPUVP_CUDA_KERNEL(warp_votes)});
}
