// Blocked LU decomposition without pivoting (Doolittle, in place, float, n a multiple of 16),
// one step per 16-wide block column:
//   lud_diagonal:  factor the diagonal block in shared memory (one CTA);
//   lud_perimeter: the U blocks to its right and the L blocks below it (one CTA per pair);
//   lud_internal:  the trailing submatrix, a[i][j] -= L[i][k] * U[k][j] over the block's k.
// Every element sees fmaf(-l_ik, u_kj, a_ij) for k ascending, then (below the diagonal) one
// division by u_jj: exactly the order of the unblocked algorithm the CPU reference runs.

#define LUD_BLOCK 16

extern "C" __global__ void lud_diagonal(float* a, int n, int offset) {
  __shared__ float tile[LUD_BLOCK][LUD_BLOCK];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  tile[ty][tx] = a[(offset + ty) * n + offset + tx];
  __syncthreads();
  for (int k = 0; k < LUD_BLOCK; ++k) {
    if (ty > k && tx == k) tile[ty][k] = tile[ty][k] / tile[k][k];
    __syncthreads();
    if (ty > k && tx > k) tile[ty][tx] = fmaf(-tile[ty][k], tile[k][tx], tile[ty][tx]);
    __syncthreads();
  }
  a[(offset + ty) * n + offset + tx] = tile[ty][tx];
}

extern "C" __global__ void lud_perimeter(float* a, int n, int offset) {
  __shared__ float diagonal[LUD_BLOCK][LUD_BLOCK];
  __shared__ float row_block[LUD_BLOCK][LUD_BLOCK];  // right of the diagonal: becomes U
  __shared__ float col_block[LUD_BLOCK][LUD_BLOCK];  // below the diagonal: becomes L
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int other = offset + (blockIdx.x + 1) * LUD_BLOCK;
  diagonal[ty][tx] = a[(offset + ty) * n + offset + tx];
  row_block[ty][tx] = a[(offset + ty) * n + other + tx];
  col_block[ty][tx] = a[(other + ty) * n + offset + tx];
  __syncthreads();
  for (int k = 0; k < LUD_BLOCK; ++k) {
    // U: row ty subtracts L[ty][k] * U[k][tx] once row k is final.
    if (ty > k) row_block[ty][tx] = fmaf(-diagonal[ty][k], row_block[k][tx], row_block[ty][tx]);
    // L: column k is final after its division by U[k][k].
    if (tx == k) col_block[ty][k] = col_block[ty][k] / diagonal[k][k];
    __syncthreads();
    if (tx > k) col_block[ty][tx] = fmaf(-col_block[ty][k], diagonal[k][tx], col_block[ty][tx]);
    __syncthreads();
  }
  a[(offset + ty) * n + other + tx] = row_block[ty][tx];
  a[(other + ty) * n + offset + tx] = col_block[ty][tx];
}

extern "C" __global__ void lud_internal(float* a, int n, int offset) {
  __shared__ float l_block[LUD_BLOCK][LUD_BLOCK];
  __shared__ float u_block[LUD_BLOCK][LUD_BLOCK];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = offset + (blockIdx.y + 1) * LUD_BLOCK + ty;
  const int col = offset + (blockIdx.x + 1) * LUD_BLOCK + tx;
  l_block[ty][tx] = a[row * n + offset + tx];
  u_block[ty][tx] = a[(offset + ty) * n + col];
  __syncthreads();
  float value = a[row * n + col];
  for (int k = 0; k < LUD_BLOCK; ++k) value = fmaf(-l_block[ty][k], u_block[k][tx], value);
  a[row * n + col] = value;
}
