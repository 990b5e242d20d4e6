// Shared-memory tiled matmul C = A * B of n x n floats (default 256), 16 x 16 tiles; checks a
// sample of entries against the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define TILE 16

__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int base = 0; base < n; base += TILE) {
    as[threadIdx.y][threadIdx.x] = a[row * n + base + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(base + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(as[threadIdx.y][k], bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  c[row * n + col] = acc;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.25f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  float *da, *db, *dc;
  cudaMalloc(&da, n * n * sizeof(float));
  cudaMalloc(&db, n * n * sizeof(float));
  cudaMalloc(&dc, n * n * sizeof(float));
  cudaMemcpy(da, a.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);
  matmul<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(da, db, dc, n);
  cudaMemcpy(c.data(), dc, n * n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int r = 0; r < n; r += 37) {
    for (int col = 0; col < n; col += 41) {
      double want = 0;
      for (int k = 0; k < n; ++k) want += static_cast<double>(a[r * n + k]) * b[k * n + col];
      if (std::fabs(c[r * n + col] - want) > 1e-3 * std::fabs(want) + 1e-3) {
        std::printf("FAIL matmul at %d,%d\n", r, col);
        return 1;
      }
    }
  }
  std::printf("PASS matmul n=%d\n", n);
  return 0;
}
