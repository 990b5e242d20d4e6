#include "bit_ops_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("bit_ops", run_bit_ops, {GPUVP_CUDA_KERNEL(bit_ops)});
}
