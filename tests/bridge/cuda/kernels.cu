// Kernels the bridge tests drive through real commands (compiled to PTX with nvcc at build time).
#include <cstdio>

extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * 2.0f + b[i];
}

__device__ int counter_table[4] = {10, 20, 30, 40};

extern "C" __global__ void add_table(int* out) {
  out[threadIdx.x] = counter_table[threadIdx.x % 4] + threadIdx.x;
}

extern "C" __global__ void say_hello(int tag) {
  printf("hello from block %d thread %d tag %d\n", blockIdx.x, threadIdx.x, tag);
}

extern "C" __global__ void wild_store(int* p, long long offset) {
  p[offset] = 42;  // far outside any mapping
}

extern "C" __global__ void spin(volatile int* p, long long iterations) {
  for (long long i = 0; i < iterations; ++i) p[threadIdx.x] += 1;
}

extern "C" __global__ void uses_shared(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}
