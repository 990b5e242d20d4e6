#include "common/cuda_device.cuh"
#include "nbody_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("nbody", run_nbody,
                            {GPUVP_CUDA_KERNEL(nbody_accelerations), GPUVP_CUDA_KERNEL(nbody_integrate)});
}
