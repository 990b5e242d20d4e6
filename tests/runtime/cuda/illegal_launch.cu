// An illegal launch configuration is rejected with cudaErrorInvalidConfiguration; the error is
// not sticky and the next legal launch works.
#include "check.cuh"

__global__ void store(int* out) { out[threadIdx.x] = 7; }

int main() {
  int* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, 64 * sizeof(int)), cudaSuccess);
  store<<<1, 2048>>>(device);  // more threads than a block may have
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  store<<<dim3(1, 70000), 1>>>(device);  // grid.y beyond 65535
  EXPECT_CUDA(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidConfiguration);
  store<<<1, 32, size_t{1} << 30>>>(device);  // more dynamic shared memory than a block may have
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidConfiguration);
  store<<<1, 64>>>(device);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  int host[64] = {};
  EXPECT_CUDA(cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int v : host) {
    if (v != 7) {
      std::printf("FAIL: legal launch after illegal ones wrote %d\n", v);
      return 1;
    }
  }
  std::printf("PASS illegal_launch\n");
  return 0;
}
