// Tensor cores and asynchronous copies through the runtime on the timing model: a wmma f16 GEMM
// (f32 accumulate, 128 x 128 x 128, A row-major, B column-major) and, where the program was
// built for sm_80 PTX, a double-buffered matrix multiply whose tiles arrive through cp.async
// (<cuda_pipeline.h>). Both checked against a CPU GEMM.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

#include <cstdio>
#include <vector>

using namespace nvcuda;

constexpr int kN = 128;

__global__ void wmma_gemm(const half* a, const half* b, float* c) {
  // One warp per 16 x 16 tile of C; 4 warps per block along the columns.
  const int warp = threadIdx.x / 32;
  const int tile_row = blockIdx.y * 16, tile_col = (blockIdx.x * 4 + warp) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < kN; k += 16) {
    wmma::load_matrix_sync(fa, a + tile_row * kN + k, kN);
    wmma::load_matrix_sync(fb, b + tile_col * kN + k, kN);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tile_row * kN + tile_col, acc, kN, wmma::mem_row_major);
}

__global__ void async_matmul(const float* a, const float* b, float* c) {
  constexpr int kTile = 16;
  __shared__ __align__(16) float as[2][kTile][kTile];
  __shared__ __align__(16) float bs[2][kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  auto load = [&](int stage, int tile) {
    __pipeline_memcpy_async(&as[stage][ty][tx], &a[row * kN + tile * kTile + tx], sizeof(float));
    __pipeline_memcpy_async(&bs[stage][ty][tx], &b[(tile * kTile + ty) * kN + col], sizeof(float));
    __pipeline_commit();
  };
  load(0, 0);
  float sum = 0.0f;
  for (int t = 0; t < kN / kTile; ++t) {
    if (t + 1 < kN / kTile) {
      load((t + 1) & 1, t + 1);
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[t & 1][ty][k] * bs[t & 1][k][tx];
    __syncthreads();
  }
  c[row * kN + col] = sum;
}

int main() {
  // Small integers: every product and sum is exact in f16 inputs and f32 sums.
  std::vector<float> a(kN * kN), b(kN * kN), expected(kN * kN);
  for (int i = 0; i < kN * kN; ++i) {
    a[i] = static_cast<float>((i * 7 + 3) % 9 - 4);
    b[i] = static_cast<float>((i * 5 + 1) % 7 - 3);
  }
  for (int r = 0; r < kN; ++r)
    for (int col = 0; col < kN; ++col) {
      float s = 0;
      for (int k = 0; k < kN; ++k) s += a[r * kN + k] * b[k * kN + col];
      expected[r * kN + col] = s;
    }
  std::vector<half> ah(kN * kN), bh(kN * kN);  // B column-major for the wmma kernel
  for (int r = 0; r < kN; ++r)
    for (int col = 0; col < kN; ++col) {
      ah[r * kN + col] = __float2half(a[r * kN + col]);
      bh[col * kN + r] = __float2half(b[r * kN + col]);
    }
  half *da, *db;
  float *dc, *fa, *fb;
  cudaMalloc(&da, kN * kN * sizeof(half));
  cudaMalloc(&db, kN * kN * sizeof(half));
  cudaMalloc(&dc, kN * kN * sizeof(float));
  cudaMalloc(&fa, kN * kN * sizeof(float));
  cudaMalloc(&fb, kN * kN * sizeof(float));
  cudaMemcpy(da, ah.data(), kN * kN * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(db, bh.data(), kN * kN * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(fa, a.data(), kN * kN * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(fb, b.data(), kN * kN * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<float> got(kN * kN);
  wmma_gemm<<<dim3(kN / 64, kN / 16), 128>>>(da, db, dc);
  cudaError_t e = cudaMemcpy(got.data(), dc, kN * kN * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess || got != expected) {
    std::printf("FAIL tensor_and_async: wmma GEMM (%s)\n", cudaGetErrorString(e));
    return 1;
  }
  cudaMemset(dc, 0, kN * kN * sizeof(float));
  async_matmul<<<dim3(kN / 16, kN / 16), dim3(16, 16)>>>(fa, fb, dc);
  e = cudaMemcpy(got.data(), dc, kN * kN * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess || got != expected) {
    std::printf("FAIL tensor_and_async: cp.async matmul (%s)\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("PASS tensor_and_async: wmma GEMM and cp.async matmul %dx%d\n", kN, kN);
  return 0;
}
