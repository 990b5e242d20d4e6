// y = A*x for a CSR matrix in float.
//   spmv_csr_scalar: one thread per row (row lengths vary, so warps diverge).
//   spmv_csr_vector: one warp per row, lanes stride over the row, then a __shfl_down_sync tree.

extern "C" __global__ void spmv_csr_scalar(int rows, const int* row_start, const int* columns, const float* values,
                                           const float* x, float* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int e = row_start[row]; e < row_start[row + 1]; ++e) acc = fmaf(values[e], x[columns[e]], acc);
  y[row] = acc;
}

extern "C" __global__ void spmv_csr_vector(int rows, const int* row_start, const int* columns, const float* values,
                                           const float* x, float* y) {
  const int lane = threadIdx.x & 31;
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (row >= rows) return;  // whole warps leave together: rows are per warp
  float acc = 0.0f;
  for (int e = row_start[row] + lane; e < row_start[row + 1]; e += 32) acc = fmaf(values[e], x[columns[e]], acc);
  for (int offset = 16; offset > 0; offset >>= 1) acc = __fadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, offset));
  if (lane == 0) y[row] = acc;
}
