#include "bfs_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("bfs", run_bfs, {GPUVP_CUDA_KERNEL(bfs_expand)});
}
