// cudaMallocManaged: one pointer used by host and kernels, values visible after synchronization;
// prefetch and advice accepted.
#include "check.cuh"

__global__ void increment(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

int main() {
  const int n = 5000;
  int* data = nullptr;
  EXPECT_CUDA(cudaMallocManaged(&data, n * sizeof(int)), cudaSuccess);
  for (int i = 0; i < n; ++i) data[i] = 1;
  cudaMemLocation device{};
  device.type = cudaMemLocationTypeDevice;
  device.id = 0;
  EXPECT_CUDA(cudaMemAdvise(data, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device), cudaSuccess);
  EXPECT_CUDA(cudaMemPrefetchAsync(data, n * sizeof(int), device, 0, 0), cudaSuccess);
  increment<<<(n + 255) / 256, 256>>>(data, n);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    if (data[i] != 1 + i) {
      std::printf("FAIL: data[%d] = %d after the first kernel\n", i, data[i]);
      return 1;
    }
    data[i] *= 2;  // host writes between kernels
  }
  increment<<<(n + 255) / 256, 256>>>(data, n);
  int copied[4] = {};
  EXPECT_CUDA(cudaMemcpy(copied, data, sizeof copied, cudaMemcpyDefault), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    if (data[i] != 2 * (1 + i) + i) {
      std::printf("FAIL: data[%d] = %d after the second kernel\n", i, data[i]);
      return 1;
    }
  }
  if (copied[3] != 2 * 4 + 3) {
    std::printf("FAIL: cudaMemcpy from managed memory read %d\n", copied[3]);
    return 1;
  }
  EXPECT_CUDA(cudaFree(data), cudaSuccess);
  std::printf("PASS managed\n");
  return 0;
}
