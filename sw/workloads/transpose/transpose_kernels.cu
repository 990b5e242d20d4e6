// Matrix transpose through a 32x32 shared tile (padded to 33 columns to avoid bank conflicts),
// 32x8 threads per CTA, each thread moving four elements; plus the naive version for contrast.

#define TR_TILE 32
#define TR_ROWS 8

extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TR_TILE][TR_TILE + 1];
  int x = blockIdx.x * TR_TILE + threadIdx.x;  // input column
  int y = blockIdx.y * TR_TILE + threadIdx.y;  // input row
  for (int j = 0; j < TR_TILE; j += TR_ROWS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TR_TILE + threadIdx.x;  // output column = input row
  y = blockIdx.x * TR_TILE + threadIdx.y;  // output row = input column
  for (int j = 0; j < TR_TILE; j += TR_ROWS) {
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
