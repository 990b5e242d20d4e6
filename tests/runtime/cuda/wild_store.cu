// A kernel storing to an address nothing maps: cudaErrorIllegalAddress at the next
// synchronization, and sticky afterwards, as CUDA has it.
#include "check.cuh"

__global__ void wild(int* p) { p[threadIdx.x * 1024] = 1; }

int main() {
  int* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, 256), cudaSuccess);
  wild<<<1, 32>>>(reinterpret_cast<int*>(0x7f0000001000ull));
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);  // the launch itself is legal
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_CUDA(cudaMemset(device, 0, 256), cudaErrorIllegalAddress);  // sticky
  EXPECT_CUDA(cudaGetLastError(), cudaErrorIllegalAddress);
  std::printf("PASS wild_store\n");
  return 0;
}
