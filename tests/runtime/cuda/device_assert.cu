// A kernel whose threads past the end fail a device-side assert(): the synchronization after it
// answers cudaErrorAssert, as on hardware (programs test for that value), also when the source
// path before "Assertion" is longer than the completion record's message (the #line below).
#include <cassert>

#include "check.cuh"

#line 1 "/a/source/folder/path/long/enough/that/the/words/after/it/do/not/fit/in/one/completion/record/of/the/device/device_assert.cu"
__global__ void scale_checked(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
  out[i] = 3 * in[i];
}

int main() {
  constexpr int kN = 60;  // 2 CTAs of 32 threads: the last 4 threads assert
  int* in = nullptr;
  int* out = nullptr;
  EXPECT_CUDA(cudaMalloc(&in, 64 * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&out, 64 * sizeof(int)), cudaSuccess);
  scale_checked<<<2, 32>>>(in, out, kN);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaErrorAssert);
  // The error is sticky: the context is unusable afterwards, as on hardware.
  EXPECT_CUDA(cudaMemset(out, 0, sizeof(int)), cudaErrorAssert);
  std::printf("PASS device_assert\n");
  return 0;
}
