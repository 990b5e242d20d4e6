// Speckle-reducing anisotropic diffusion (SRAD) on a float image, three kernels per iteration:
//   srad_statistics:   per-CTA partial sums of J and J*J (grid-stride + shared tree) for q0^2;
//   srad_coefficients: directional derivatives and the diffusion coefficient per pixel;
//   srad_update:       the divergence step.
// All arithmetic is written with __f*_rn intrinsics so nvcc cannot fuse it; division is IEEE
// (div.rn). The CPU reference evaluates the same expressions in the same order.

extern "C" __global__ void srad_statistics(const float* image, int pixels, float* partial_sum, float* partial_square) {
  extern __shared__ float scratch[];  // blockDim.x sums, then blockDim.x squares
  float* sums = scratch;
  float* squares = scratch + blockDim.x;
  float sum = 0.0f;
  float square = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pixels; i += gridDim.x * blockDim.x) {
    sum = __fadd_rn(sum, image[i]);
    square = __fadd_rn(square, __fmul_rn(image[i], image[i]));
  }
  sums[threadIdx.x] = sum;
  squares[threadIdx.x] = square;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) {
      sums[threadIdx.x] = __fadd_rn(sums[threadIdx.x], sums[threadIdx.x + stride]);
      squares[threadIdx.x] = __fadd_rn(squares[threadIdx.x], squares[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial_sum[blockIdx.x] = sums[0];
    partial_square[blockIdx.x] = squares[0];
  }
}

extern "C" __global__ void srad_coefficients(const float* image, int rows, int cols, float q0_squared, float* d_north,
                                             float* d_south, float* d_west, float* d_east, float* coefficient) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= rows || col >= cols) return;
  const int i = row * cols + col;
  const float centre = image[i];
  // Reflecting boundary: the neighbour outside the image is the pixel itself.
  const float dn = __fsub_rn(image[max(row - 1, 0) * cols + col], centre);
  const float ds = __fsub_rn(image[min(row + 1, rows - 1) * cols + col], centre);
  const float dw = __fsub_rn(image[row * cols + max(col - 1, 0)], centre);
  const float de = __fsub_rn(image[row * cols + min(col + 1, cols - 1)], centre);
  const float gradient_sq = __fdiv_rn(
      __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(dn, dn), __fmul_rn(ds, ds)), __fmul_rn(dw, dw)), __fmul_rn(de, de)),
      __fmul_rn(centre, centre));
  const float laplacian = __fdiv_rn(__fadd_rn(__fadd_rn(__fadd_rn(dn, ds), dw), de), centre);
  const float numerator = __fsub_rn(__fmul_rn(0.5f, gradient_sq), __fmul_rn(0.0625f, __fmul_rn(laplacian, laplacian)));
  const float denominator = __fadd_rn(1.0f, __fmul_rn(0.25f, laplacian));
  const float q_squared = __fdiv_rn(numerator, __fmul_rn(denominator, denominator));
  const float relative = __fdiv_rn(__fsub_rn(q_squared, q0_squared), __fmul_rn(q0_squared, __fadd_rn(1.0f, q0_squared)));
  float c = __fdiv_rn(1.0f, __fadd_rn(1.0f, relative));
  c = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
  d_north[i] = dn;
  d_south[i] = ds;
  d_west[i] = dw;
  d_east[i] = de;
  coefficient[i] = c;
}

extern "C" __global__ void srad_update(float* image, int rows, int cols, float lambda, const float* d_north,
                                       const float* d_south, const float* d_west, const float* d_east,
                                       const float* coefficient) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= rows || col >= cols) return;
  const int i = row * cols + col;
  // North and west use this pixel's coefficient, south and east the neighbour's.
  const float cn = coefficient[i];
  const float cs = coefficient[min(row + 1, rows - 1) * cols + col];
  const float cw = coefficient[i];
  const float ce = coefficient[row * cols + min(col + 1, cols - 1)];
  const float divergence = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(cn, d_north[i]), __fmul_rn(cs, d_south[i])),
                                               __fmul_rn(cw, d_west[i])),
                                     __fmul_rn(ce, d_east[i]));
  image[i] = __fadd_rn(image[i], __fmul_rn(__fmul_rn(0.25f, lambda), divergence));
}
