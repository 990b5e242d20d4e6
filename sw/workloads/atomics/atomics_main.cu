#include "atomics_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("atomics", run_atomics, {GPUVP_CUDA_KERNEL(atomics_global), GPUVP_CUDA_KERNEL(atomics_shared)});
}
