#include "common/cuda_device.cuh"
#include "float_rounding_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("float_rounding", run_float_rounding, {GPUVP_CUDA_KERNEL(float_rounding)});
}
