// Dense matrix-vector products in double, A row-major m x n.
//   gemv_n: y = alpha*A*x + beta*y, one thread per row (strided, uncoalesced rows).
//   gemv_t: y = alpha*A^T*x + beta*y, one thread per column (coalesced), x staged in shared
//           memory chunk by chunk.
// Sums run in index order with explicit fma so the CPU reference matches bit for bit.

extern "C" __global__ void gemv_n(int m, int n, double alpha, const double* a, const double* x, double beta, double* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m) return;
  double acc = 0.0;
  for (int j = 0; j < n; ++j) acc = fma(a[static_cast<long long>(row) * n + j], x[j], acc);
  y[row] = fma(alpha, acc, __dmul_rn(beta, y[row]));
}

extern "C" __global__ void gemv_t(int m, int n, double alpha, const double* a, const double* x, double beta, double* y) {
  extern __shared__ double x_chunk[];
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  double acc = 0.0;
  for (int base = 0; base < m; base += blockDim.x) {
    // Every thread helps load, even those past the last column, so the barrier is uniform.
    if (base + threadIdx.x < m) x_chunk[threadIdx.x] = x[base + threadIdx.x];
    __syncthreads();
    const int chunk = min(static_cast<int>(blockDim.x), m - base);
    if (col < n) {
      for (int i = 0; i < chunk; ++i) acc = fma(a[static_cast<long long>(base + i) * n + col], x_chunk[i], acc);
    }
    __syncthreads();
  }
  if (col < n) y[col] = fma(alpha, acc, __dmul_rn(beta, y[col]));
}
