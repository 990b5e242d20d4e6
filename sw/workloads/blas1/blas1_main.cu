#include "blas1_kernels.cu"
#include "common/cuda_device.cuh"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("blas1", run_blas1,
                            {GPUVP_CUDA_KERNEL(blas_abs), GPUVP_CUDA_KERNEL(blas_axpy), GPUVP_CUDA_KERNEL(blas_axpby),
                             GPUVP_CUDA_KERNEL(blas_scal), GPUVP_CUDA_KERNEL(blas_reciprocal),
                             GPUVP_CUDA_KERNEL(blas_update), GPUVP_CUDA_KERNEL(blas_mult),
                             GPUVP_CUDA_KERNEL(blas_reduce_partial), GPUVP_CUDA_KERNEL(blas_reduce_final)});
}
