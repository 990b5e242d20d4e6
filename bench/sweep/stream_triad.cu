// STREAM triad, a[i] = b[i] + s * c[i] over n floats, repeated `passes` times over the same
// arrays: memory-bound by construction (12 bytes moved per 2 flops). With 3 x 4 x n bytes
// beyond the L2 every pass streams from DRAM; with them inside it, passes after the first hit
// in L2. Usage: stream_triad [n = 2^20] [passes = 1]. Checks the result.
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void triad(float* a, const float* b, const float* c, float s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : (1 << 20);
  const int passes = argc > 2 ? std::atoi(argv[2]) : 1;
  if (n <= 0 || passes <= 0) {
    std::fprintf(stderr, "usage: stream_triad [n > 0] [passes > 0]\n");
    return 2;
  }
  std::vector<float> b(n), c(n), a(n);
  for (int i = 0; i < n; ++i) {
    b[i] = static_cast<float>(i % 1000);
    c[i] = static_cast<float>(i % 7);
  }
  float *da, *db, *dc;
  cudaMalloc(&da, n * sizeof(float));
  cudaMalloc(&db, n * sizeof(float));
  cudaMalloc(&dc, n * sizeof(float));
  cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  for (int p = 0; p < passes; ++p) triad<<<(n + 255) / 256, 256>>>(da, db, dc, 3.0f, n);
  cudaMemcpy(a.data(), da, n * sizeof(float), cudaMemcpyDeviceToHost);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    std::printf("FAIL stream_triad: %s\n", cudaGetErrorString(error));
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    if (a[i] != b[i] + 3.0f * c[i]) {
      std::printf("FAIL stream_triad at %d: %g\n", i, a[i]);
      return 1;
    }
  }
  std::printf("PASS stream_triad n=%d passes=%d\n", n, passes);
  return 0;
}
