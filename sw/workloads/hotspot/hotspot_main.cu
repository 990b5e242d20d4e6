#include "common/cuda_device.cuh"
#include "hotspot_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("hotspot", run_hotspot, {GPUVP_CUDA_KERNEL(hotspot_step)});
}
