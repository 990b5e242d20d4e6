// A kernel whose call tree recurses, built with -rdc=true: nvlink gives it no static stack bound
// (EIATTR_MAX_STACK_SIZE 0xffffffff) and the launch must still be accepted (it was refused as
// "4294967295 bytes of local memory per thread"). Results against a CPU reference.
#include "check.cuh"

// Two calls per level: the compiler cannot turn the recursion into a loop.
__device__ __noinline__ int calls(int n) {
  if (n < 2) return 1;
  return 1 + calls(n - 1) + calls(n - 2);
}

__global__ void sums(int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = calls(i % 13) + i;
}

int main() {
  constexpr int kThreads = 128;
  int* out = nullptr;
  EXPECT_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, 4096), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&out, kThreads * sizeof(int)), cudaSuccess);
  sums<<<2, kThreads / 2>>>(out);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  int host[kThreads];
  EXPECT_CUDA(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost), cudaSuccess);
  int reference[13] = {1, 1};
  for (int n = 2; n < 13; ++n) reference[n] = 1 + reference[n - 1] + reference[n - 2];
  for (int i = 0; i < kThreads; ++i) CHECK(host[i] == reference[i % 13] + i);
  std::printf("PASS recursive_kernel\n");
  return 0;
}
