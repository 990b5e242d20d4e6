// Kernels with known SASS resources for the cubin reader's tests (built with nvcc -cubin
// -arch=sm_75; ptxas -v's figures for each are in the build's resources.ptxas.txt).
extern "C" __global__ void __launch_bounds__(128, 4) bounded(float* x) { x[threadIdx.x] *= 2.0f; }

extern "C" __global__ void static_shared(float* x) {
  __shared__ float tile[16][17];
  extern __shared__ float dynamic[];
  tile[threadIdx.x % 16][threadIdx.x % 17] = x[threadIdx.x];
  dynamic[threadIdx.x] = x[threadIdx.x + 1];
  __syncthreads();
  x[threadIdx.x] = tile[(threadIdx.x + 1) % 16][threadIdx.x % 17] + dynamic[threadIdx.x ^ 1];
}

// A local array indexed at run time lives in local memory: a stack frame.
extern "C" __global__ void local_frame(int* x, int n) {
  int a[64];
  for (int i = 0; i < 64; ++i) a[i] = x[i * n];
  a[x[1] & 63] += 7;
  x[threadIdx.x] = a[x[2] & 63];
}

__device__ __noinline__ float helper(const float* p, int n) { return p[n] * 3.0f + p[n + 1]; }
extern "C" __global__ void calls_helper(float* x, int n) { x[threadIdx.x] = helper(x, n + threadIdx.x); }
