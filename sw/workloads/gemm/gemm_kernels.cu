// C = alpha*A*B + beta*C in float, A m x k, B k x n, row-major, with 16x16 shared-memory tiles.
// Tiles past the matrix edge are zero-filled; each thread accumulates its dot product in k order
// with fmaf, which the CPU reference repeats (zero padding adds fmaf(0,0,acc) = acc).

#define GEMM_TILE 16

extern "C" __global__ void gemm_tiled(int m, int n, int k, float alpha, const float* a, const float* b, float beta, float* c) {
  __shared__ float a_tile[GEMM_TILE][GEMM_TILE];
  __shared__ float b_tile[GEMM_TILE][GEMM_TILE + 1];  // +1: no bank conflicts on the column read
  const int row = blockIdx.y * GEMM_TILE + threadIdx.y;
  const int col = blockIdx.x * GEMM_TILE + threadIdx.x;
  float acc = 0.0f;
  for (int base = 0; base < k; base += GEMM_TILE) {
    const int a_col = base + threadIdx.x;
    const int b_row = base + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < GEMM_TILE; ++i) acc = fmaf(a_tile[threadIdx.y][i], b_tile[i][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = fmaf(alpha, acc, __fmul_rn(beta, c[row * n + col]));
}
