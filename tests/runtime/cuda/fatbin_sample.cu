// A small CUDA program whose embedded fatbin the fatbin parser tests read.
#include <cstdio>

__device__ int table[4];

__global__ void scale(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor + static_cast<float>(table[i % 4]);
}

struct Pair {
  double x;
  char tag;
};

__global__ void mixed(Pair pair, char c, short s, double* out) { out[0] = pair.x + pair.tag + c + s; }

int main() {
  scale<<<1, 1>>>(nullptr, 1.0f, 0);
  mixed<<<1, 1>>>(Pair{1.0, 2}, 3, 4, nullptr);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
