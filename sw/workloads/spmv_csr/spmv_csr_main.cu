#include "common/cuda_device.cuh"
#include "spmv_csr_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("spmv_csr", run_spmv_csr,
                            {GPUVP_CUDA_KERNEL(spmv_csr_scalar), GPUVP_CUDA_KERNEL(spmv_csr_vector)});
}
