// LU factorization with partial pivoting of many small matrices (8x8 double, row-major, packed
// one after another). Each matrix is factored in shared memory by 8 threads, one per row; a CTA
// holds several matrices, so the barriers synchronize unrelated matrices too, and threads of a
// trailing, incomplete group still take part in every barrier.

#define LU_SIZE 8

extern "C" __global__ void batched_lu(double* matrices, int* pivots, int batch) {
  extern __shared__ double tiles[];  // (blockDim.x / LU_SIZE) matrices of LU_SIZE*LU_SIZE
  const int group = threadIdx.x / LU_SIZE;
  const int row = threadIdx.x % LU_SIZE;
  const int matrix = blockIdx.x * (blockDim.x / LU_SIZE) + group;
  const bool valid = matrix < batch;
  double* a = tiles + group * LU_SIZE * LU_SIZE;

  if (valid) {
    for (int j = 0; j < LU_SIZE; ++j) a[row * LU_SIZE + j] = matrices[static_cast<long long>(matrix) * LU_SIZE * LU_SIZE + row * LU_SIZE + j];
  }
  __syncthreads();

  for (int k = 0; k < LU_SIZE; ++k) {
    // Every row-thread finds the pivot the same way; the first largest magnitude wins.
    int pivot = k;
    if (valid) {
      for (int i = k + 1; i < LU_SIZE; ++i) {
        if (fabs(a[i * LU_SIZE + k]) > fabs(a[pivot * LU_SIZE + k])) pivot = i;
      }
    }
    __syncthreads();
    if (valid && row == k) {
      pivots[matrix * LU_SIZE + k] = pivot;
      if (pivot != k) {
        for (int j = 0; j < LU_SIZE; ++j) {
          const double t = a[k * LU_SIZE + j];
          a[k * LU_SIZE + j] = a[pivot * LU_SIZE + j];
          a[pivot * LU_SIZE + j] = t;
        }
      }
    }
    __syncthreads();
    if (valid && row > k) {
      const double factor = a[row * LU_SIZE + k] / a[k * LU_SIZE + k];
      a[row * LU_SIZE + k] = factor;
      for (int j = k + 1; j < LU_SIZE; ++j) a[row * LU_SIZE + j] = fma(-factor, a[k * LU_SIZE + j], a[row * LU_SIZE + j]);
    }
    __syncthreads();
  }

  if (valid) {
    for (int j = 0; j < LU_SIZE; ++j) matrices[static_cast<long long>(matrix) * LU_SIZE * LU_SIZE + row * LU_SIZE + j] = a[row * LU_SIZE + j];
  }
}
