#include "backprop_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("backprop", run_backprop,
                            {GPUVP_CUDA_KERNEL(bp_layer_partial), GPUVP_CUDA_KERNEL(bp_activate),
                             GPUVP_CUDA_KERNEL(bp_adjust_weights)});
}
