#include "common/cuda_device.cuh"
#include "transpose_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("transpose", run_transpose,
                            {GPUVP_CUDA_KERNEL(transpose_tiled), GPUVP_CUDA_KERNEL(transpose_naive)});
}
