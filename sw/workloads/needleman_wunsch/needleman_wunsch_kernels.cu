// Needleman-Wunsch global alignment scores. The (n+1)x(n+1) score matrix is cut into 32x32
// tiles processed in anti-diagonal waves: one launch per wave of tiles, one CTA (one warp) per
// tile, and inside a tile the threads (one per tile row) sweep the 63 inner anti-diagonals with
// a barrier between them.

#define NW_TILE 32

extern "C" __global__ void nw_tile_wave(int* score, const int* similarity, int n, int penalty, int wave, int first_tile_row) {
  __shared__ int s[NW_TILE + 1][NW_TILE + 1];
  __shared__ int sim[NW_TILE][NW_TILE];
  const int t = threadIdx.x;
  const int tile_row = first_tile_row + blockIdx.x;
  const int tile_col = wave - tile_row;
  const int stride = n + 1;
  const int top = tile_row * NW_TILE;   // score row of the tile's top border
  const int left = tile_col * NW_TILE;  // score column of the tile's left border

  if (t == 0) s[0][0] = score[top * stride + left];
  s[0][t + 1] = score[top * stride + left + t + 1];
  s[t + 1][0] = score[(top + t + 1) * stride + left];
  for (int j = 0; j < NW_TILE; ++j) sim[t][j] = similarity[(top + t) * n + left + j];
  __syncthreads();

  for (int diagonal = 0; diagonal < 2 * NW_TILE - 1; ++diagonal) {
    const int j = diagonal - t;
    if (j >= 0 && j < NW_TILE) {
      const int match = s[t][j] + sim[t][j];
      const int gap = max(s[t][j + 1], s[t + 1][j]) - penalty;
      s[t + 1][j + 1] = max(match, gap);
    }
    __syncthreads();
  }

  for (int j = 0; j < NW_TILE; ++j) score[(top + t + 1) * stride + left + j + 1] = s[t + 1][j + 1];
}
