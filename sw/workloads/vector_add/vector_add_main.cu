#include "common/cuda_device.cuh"
#include "vector_add_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("vector_add", run_vector_add, {GPUVP_CUDA_KERNEL(vector_add)});
}
