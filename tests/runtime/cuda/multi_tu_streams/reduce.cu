#include "kernels.h"

__device__ float offset;

__global__ void block_sums(const float* in, float* sums, int n) {
  extern __shared__ float partial[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0] + offset;
}

void launch_block_sums(const float* in, float* sums, int n, cudaStream_t stream) {
  const int threads = 128;
  block_sums<<<(n + threads - 1) / threads, threads, threads * sizeof(float), stream>>>(in, sums, n);
}

void set_offset(float value) { cudaMemcpyToSymbol(offset, &value, sizeof value); }
