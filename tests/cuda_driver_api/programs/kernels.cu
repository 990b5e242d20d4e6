// Kernels the driver-API test program loads at run time (as PTX text and as a fatbin).
// extern "C": the program looks them up by their plain names.

__device__ unsigned int launches_seen;  // cuModuleGetGlobal: counts saxpy's launches

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) atomicAdd(&launches_seen, 1u);
}

// Mixed parameter sizes and alignments: the packed-buffer launch (CU_LAUNCH_PARAM_BUFFER_POINTER)
// must place each at the offset the kernel expects.
extern "C" __global__ void affine(char bias_sign, double scale, const int* in, long long* out, short offset, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<long long>(scale * in[i]) + (bias_sign < 0 ? -offset : offset);
}
