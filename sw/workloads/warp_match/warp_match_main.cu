#include "common/cuda_device.cuh"
#include "warp_match_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("warp_match", run_warp_match, {GPUVP_CUDA_KERNEL(warp_match)});
}
