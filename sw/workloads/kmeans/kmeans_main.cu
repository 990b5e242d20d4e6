#include "common/cuda_device.cuh"
#include "kmeans_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("kmeans", run_kmeans, {GPUVP_CUDA_KERNEL(kmeans_assign)});
}
