// Texture and surface kernels for tests/ptx/texture_test.cpp (compiled to PTX only).
#include <cuda_runtime.h>

extern "C" __global__ void sample_2d(cudaTextureObject_t t, const float2* coords, float* out) {
  const int i = threadIdx.x;
  out[i] = tex2D<float>(t, coords[i].x, coords[i].y);
}

extern "C" __global__ void fetch_int(cudaTextureObject_t t, int* out) { out[threadIdx.x] = tex1Dfetch<int>(t, threadIdx.x - 2); }

extern "C" __global__ void query(cudaTextureObject_t t, int* out) {
  int w, h;
  asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
  out[0] = w;
  out[1] = h;
}

extern "C" __global__ void surface_rw(cudaSurfaceObject_t s, int* out) {
  const int x = threadIdx.x;
  surf2Dwrite(x * 10, s, x * 4, 1, cudaBoundaryModeZero);  // lanes past the width are dropped
  int v = -1;
  surf2Dread(&v, s, x * 4, 1, cudaBoundaryModeClamp);
  out[x] = v;
}
