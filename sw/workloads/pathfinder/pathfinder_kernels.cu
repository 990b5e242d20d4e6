// Minimum-cost path down a grid (pathfinder-style dynamic programming):
//   cost[r][c] = wall[r][c] + min(cost[r-1][c-1], cost[r-1][c], cost[r-1][c+1]).
// One launch advances `steps` rows in shared memory. The region a CTA can compute shrinks by one
// column on each side per row (a pyramid), so neighbouring CTAs overlap by 2*steps columns and
// each CTA writes only its centre. Integer arithmetic: results are exact.

#define PATH_BLOCK 256

extern "C" __global__ void pathfinder_rows(const int* wall, const int* previous, int* result, int cols, int first_row,
                                           int steps) {
  __shared__ int before[PATH_BLOCK];
  __shared__ int after[PATH_BLOCK];
  const int tx = threadIdx.x;
  const int owned = PATH_BLOCK - 2 * steps;  // columns this CTA produces
  const int col = owned * blockIdx.x - steps + tx;
  const bool in_grid = col >= 0 && col < cols;
  if (in_grid) before[tx] = previous[col];
  __syncthreads();

  bool computed = false;
  for (int i = 0; i < steps; ++i) {
    computed = false;
    // Valid after step i only where all inputs were valid after step i-1.
    if (tx >= i + 1 && tx <= PATH_BLOCK - 2 - i && in_grid) {
      const int up = before[tx];
      const int left = col > 0 ? before[tx - 1] : up;
      const int right = col < cols - 1 ? before[tx + 1] : up;
      after[tx] = min(min(left, up), right) + wall[(first_row + i) * cols + col];
      computed = true;
    }
    __syncthreads();
    if (i == steps - 1) break;
    if (computed) before[tx] = after[tx];
    __syncthreads();
  }
  if (computed && tx >= steps && tx < PATH_BLOCK - steps) result[col] = after[tx];
}
