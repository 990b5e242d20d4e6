#include "common/cuda_device.cuh"
#include "device_fault_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("device_fault", run_device_fault, {GPUVP_CUDA_KERNEL(maybe_trap)});
}
