#include "common/cuda_device.cuh"
#include "pathfinder_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("pathfinder", run_pathfinder, {GPUVP_CUDA_KERNEL(pathfinder_rows)});
}
