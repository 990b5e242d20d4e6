// Kernels of `gpuvp validate`'s application table: whole programs whose kernel cycles on a real
// V100 are published (seed 000 Table 3), written here from the algorithms, in the launch shapes
// of the measured programs.
//
// vectorAdd (the CUDA SDK sample): c[i] = a[i] + b[i], 256-thread CTAs.
//
// lud (Rodinia's LU decomposition, 16x16 blocks, no pivoting, in place, float): per step k of
// the blocked factorisation (offset = 16 k)
//   lud_diagonal   <<<1, 16>>>        one thread per row of the diagonal block: the 16x16 block is
//                                     factored in shared memory, column by column (the serial,
//                                     divergent kernel that dominates the measured time);
//                                     as in the measured program, every update is read-modify-
//                                     write of the shared element, not a register accumulation;
//   lud_perimeter  <<<r, 32>>>        r = blocks right of (and below) the diagonal; threads 0-15
//                                     finish one U block (one column each), threads 16-31 one L
//                                     block (one row each);
//   lud_internal   <<<(r, r), 16x16>>> the trailing matrix: a -= L * U over the step's 16 columns;
// and a last lud_diagonal for the final block: 3 * 15 + 1 = 46 launches for a 256x256 matrix.
#include <cstdint>

#define LUD_BS 16

extern "C" __global__ void corr_vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void corr_lud_diagonal(float* m, int dim, int offset) {
  __shared__ float block[LUD_BS][LUD_BS];
  const int t = threadIdx.x;
  float* origin = m + offset * dim + offset;
  for (int r = 0; r < LUD_BS; ++r) block[r][t] = origin[r * dim + t];
  __syncthreads();
  for (int k = 0; k < LUD_BS - 1; ++k) {
    // Column k of L: thread t owns row t below the diagonal.
    if (t > k) {
      for (int j = 0; j < k; ++j) block[t][k] -= block[t][j] * block[j][k];
      block[t][k] /= block[k][k];
    }
    __syncthreads();
    // Row k+1 of U: thread t owns column t right of the diagonal.
    if (t > k) {
      for (int j = 0; j <= k; ++j) block[k + 1][t] -= block[k + 1][j] * block[j][t];
    }
    __syncthreads();
  }
  // Row 0 is unchanged by the factorisation.
  for (int r = 1; r < LUD_BS; ++r) origin[r * dim + t] = block[r][t];
}

extern "C" __global__ void corr_lud_perimeter(float* m, int dim, int offset) {
  __shared__ float diagonal[LUD_BS][LUD_BS];
  __shared__ float upper[LUD_BS][LUD_BS];  // the block right of the diagonal: becomes U
  __shared__ float lower[LUD_BS][LUD_BS];  // the block below the diagonal: becomes L
  const int t = threadIdx.x;
  const int other = offset + (blockIdx.x + 1) * LUD_BS;
  // Threads 0-15 load the diagonal's upper half and the U block; 16-31 the lower half and L.
  if (t < LUD_BS) {
    for (int r = 0; r < LUD_BS / 2; ++r) diagonal[r][t] = m[(offset + r) * dim + offset + t];
    for (int r = 0; r < LUD_BS; ++r) upper[r][t] = m[(offset + r) * dim + other + t];
  } else {
    const int c = t - LUD_BS;
    for (int r = LUD_BS / 2; r < LUD_BS; ++r) diagonal[r][c] = m[(offset + r) * dim + offset + c];
    for (int r = 0; r < LUD_BS; ++r) lower[r][c] = m[(other + r) * dim + offset + c];
  }
  __syncthreads();
  if (t < LUD_BS) {
    // U column t: forward substitution with the unit lower triangle of the diagonal block.
    for (int r = 1; r < LUD_BS; ++r) {
      for (int j = 0; j < r; ++j) upper[r][t] -= diagonal[r][j] * upper[j][t];
    }
  } else {
    // L row (t - 16): solve against the upper triangle of the diagonal block.
    const int row = t - LUD_BS;
    for (int c = 0; c < LUD_BS; ++c) {
      for (int j = 0; j < c; ++j) lower[row][c] -= lower[row][j] * diagonal[j][c];
      lower[row][c] /= diagonal[c][c];
    }
  }
  __syncthreads();
  if (t < LUD_BS) {
    for (int r = 1; r < LUD_BS; ++r) m[(offset + r) * dim + other + t] = upper[r][t];
  } else {
    const int c = t - LUD_BS;
    for (int r = 0; r < LUD_BS; ++r) m[(other + r) * dim + offset + c] = lower[r][c];
  }
}

extern "C" __global__ void corr_lud_internal(float* m, int dim, int offset) {
  __shared__ float upper[LUD_BS][LUD_BS];
  __shared__ float lower[LUD_BS][LUD_BS];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = offset + (blockIdx.y + 1) * LUD_BS + ty;
  const int col = offset + (blockIdx.x + 1) * LUD_BS + tx;
  upper[ty][tx] = m[(offset + ty) * dim + col];
  lower[ty][tx] = m[row * dim + offset + tx];
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < LUD_BS; ++k) sum += lower[ty][k] * upper[k][tx];
  m[row * dim + col] -= sum;
}
