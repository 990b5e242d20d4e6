// BLAS level 1 in double precision. Element-wise kernels use grid-stride loops; reductions are
// two passes (per-CTA partials, then one CTA) with a fixed shared-memory tree, so the host can
// reproduce the summation order exactly. Products use __dmul_rn/__dadd_rn or fma() explicitly
// so nvcc cannot contract them differently from the CPU reference.

extern "C" __global__ void blas_abs(const double* x, double* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = fabs(x[i]);
}

// y = a*x + y
extern "C" __global__ void blas_axpy(double a, const double* x, double* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = fma(a, x[i], y[i]);
}

// y = a*x + b*y
extern "C" __global__ void blas_axpby(double a, const double* x, double b, double* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = fma(a, x[i], __dmul_rn(b, y[i]));
}

// x = a*x
extern "C" __global__ void blas_scal(double a, double* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = a * x[i];
}

// y = 1/x
extern "C" __global__ void blas_reciprocal(const double* x, double* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = 1.0 / x[i];
}

// y = y + a*x where a is read from device memory (a result of an earlier kernel).
extern "C" __global__ void blas_update(const double* a, const double* x, double* y, int n) {
  const double scale = *a;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = fma(scale, x[i], y[i]);
}

// z = x .* y (element-wise product)
extern "C" __global__ void blas_mult(const double* x, const double* y, double* z, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = __dmul_rn(x[i], y[i]);
}

// Reductions. kind: 0 sum, 1 nrm1 (sum |x|), 2 nrm2 (sqrt(sum x*x)), 3 nrminf (max |x|), 4 dot.
enum ReduceKind { kSum = 0, kNrm1 = 1, kNrm2 = 2, kNrmInf = 3, kDot = 4 };

__device__ double reduce_term(int kind, const double* x, const double* y, int i) {
  switch (kind) {
    case kNrm1:
    case kNrmInf:
      return fabs(x[i]);
    case kNrm2:
      return __dmul_rn(x[i], x[i]);
    case kDot:
      return __dmul_rn(x[i], y[i]);
    default:
      return x[i];
  }
}

__device__ double reduce_combine(int kind, double a, double b) { return kind == kNrmInf ? fmax(a, b) : __dadd_rn(a, b); }

// Block-wide tree over shared memory: stride halves from blockDim.x/2 (blockDim.x a power of 2).
__device__ double block_reduce(int kind, double value, double* scratch) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) scratch[threadIdx.x] = reduce_combine(kind, scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  return scratch[0];
}

extern "C" __global__ void blas_reduce_partial(int kind, const double* x, const double* y, double* partial, int n) {
  extern __shared__ double scratch[];
  double acc = 0.0;  // identity for sums and for max of absolute values
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc = reduce_combine(kind, acc, reduce_term(kind, x, y, i));
  const double total = block_reduce(kind, acc, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// One CTA folds the partials; nrm2 takes the square root at the end.
extern "C" __global__ void blas_reduce_final(int kind, const double* partial, double* result, int count) {
  extern __shared__ double scratch[];
  double acc = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc = reduce_combine(kind, acc, partial[i]);
  const double total = block_reduce(kind, acc, scratch);
  if (threadIdx.x == 0) *result = kind == kNrm2 ? sqrt(total) : total;
}
