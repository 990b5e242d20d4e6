// Forward substitution L*x = b (L lower triangular, n x n, row-major, double), blocked by 32:
//   trsv_diagonal: one warp solves a 32x32 diagonal block; lane j divides, the solved value is
//                  broadcast with __shfl_sync and the lanes below subtract it.
//   trsv_update:   every row below the block subtracts the block's contribution, one thread per row.
// For each row i the operations are b_i = fma(-L[i][j], x_j, b_i) for j ascending, then
// x_i = b_i / L[i][i]: the order of plain forward substitution, which the CPU reference uses.

#define TRSV_BLOCK 32

extern "C" __global__ void trsv_diagonal(int n, const double* l, double* b, int block_start) {
  const int lane = threadIdx.x;
  const int row = block_start + lane;
  const bool active = row < n;
  double value = active ? b[row] : 0.0;
  const int size = min(TRSV_BLOCK, n - block_start);
  for (int j = 0; j < size; ++j) {
    if (lane == j) value = value / l[static_cast<long long>(row) * n + row];
    const double solved = __shfl_sync(0xffffffffu, value, j);
    if (active && lane > j) value = fma(-l[static_cast<long long>(row) * n + block_start + j], solved, value);
  }
  if (active) b[row] = value;  // b now holds x for this block
}

extern "C" __global__ void trsv_update(int n, const double* l, double* b, int block_start) {
  __shared__ double solved[TRSV_BLOCK];
  const int size = min(TRSV_BLOCK, n - block_start);
  if (threadIdx.x < size) solved[threadIdx.x] = b[block_start + threadIdx.x];
  __syncthreads();
  const int row = block_start + size + blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  double value = b[row];
  for (int j = 0; j < size; ++j) value = fma(-l[static_cast<long long>(row) * n + block_start + j], solved[j], value);
  b[row] = value;
}
