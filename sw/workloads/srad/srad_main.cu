#include "common/cuda_device.cuh"
#include "srad_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("srad", run_srad,
                            {GPUVP_CUDA_KERNEL(srad_statistics), GPUVP_CUDA_KERNEL(srad_coefficients),
                             GPUVP_CUDA_KERNEL(srad_update)});
}
