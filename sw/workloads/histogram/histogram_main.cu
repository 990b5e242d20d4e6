#include "common/cuda_device.cuh"
#include "histogram_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("histogram", run_histogram,
                            {GPUVP_CUDA_KERNEL(histogram_shared), GPUVP_CUDA_KERNEL(word_statistics)});
}
