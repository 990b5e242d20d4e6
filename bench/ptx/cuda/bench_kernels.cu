// Kernels for the functional-throughput benchmark: memory-bound, compute-bound, divergent,
// and barrier/shared-memory heavy.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void fma_chain(float* out, int iterations) {
  float a = threadIdx.x * 0.001f, b = 1.0001f, c = 0.5f;
  for (int k = 0; k < iterations; ++k) {
    a = fmaf(a, b, c);
    c = fmaf(c, 0.999f, a * 1e-3f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + c;
}

extern "C" __global__ void collatz(const unsigned* start, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = start[i], s = 0;
  while (x > 1) {
    x = (x & 1) ? 3 * x + 1 : x >> 1;
    ++s;
  }
  steps[i] = s;
}

extern "C" __global__ void shared_reduce(const float* in, float* out) {
  __shared__ float partial[256];
  int t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
