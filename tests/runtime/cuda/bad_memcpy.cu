// Invalid pointers to cudaMemcpy and cudaMemset: cudaErrorInvalidValue, not a crash, and the
// runtime keeps working.
#include "check.cuh"

int main() {
  int* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, 1024), cudaSuccess);
  int host[512] = {};
  void* unmapped = reinterpret_cast<void*>(0x1234);
  EXPECT_CUDA(cudaMemcpy(unmapped, host, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemcpy(host, unmapped, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemcpy(host, device, 2048, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);  // past the end
  EXPECT_CUDA(cudaMemcpy(device, nullptr, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemcpy(host, host + 16, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);  // host as device
  EXPECT_CUDA(cudaMemset(unmapped, 0, 16), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaFree(unmapped), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
  // Still usable.
  for (int i = 0; i < 256; ++i) host[i] = i;
  EXPECT_CUDA(cudaMemcpy(device, host, 1024, cudaMemcpyHostToDevice), cudaSuccess);
  int back[256] = {};
  EXPECT_CUDA(cudaMemcpy(back, device, 1024, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 256; ++i) {
    if (back[i] != i) {
      std::printf("FAIL: round trip [%d] = %d\n", i, back[i]);
      return 1;
    }
  }
  EXPECT_CUDA(cudaFree(device), cudaSuccess);
  std::printf("PASS bad_memcpy\n");
  return 0;
}
