#include "common/cuda_device.cuh"
#include "needleman_wunsch_kernels.cu"

int main() {
  using namespace gpuvp::workloads;
  return cuda_workload_main("needleman_wunsch", run_needleman_wunsch, {GPUVP_CUDA_KERNEL(nw_tile_wave)});
}
