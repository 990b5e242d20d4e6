#include "batched_lu_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("batched_lu", run_batched_lu, {GPUVP_CUDA_KERNEL(batched_lu)});
}
