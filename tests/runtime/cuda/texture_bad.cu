// Bad input to textures and surfaces. Without an argument: the API errors (invalid channel
// descriptors, filter settings, destroyed objects, surfaces over arrays without the
// load/store flag). With an argument, a kernel uses a bad handle and the fault is
// cudaErrorIllegalAddress at the next synchronization:
//   destroyed  a texture object destroyed before the launch
//   wild       a handle that names nothing
//   trap       a surface write outside the surface with cudaBoundaryModeTrap
#include <cstring>

#include "check.cuh"

__global__ void fetch(cudaTextureObject_t t, float* out) { out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
// The same as fetch; a kernel of its own so that its fault is reported on its own (the first
// fault per kernel name is printed whole).
__global__ void fetch_wild(cudaTextureObject_t t, float* out) { out[threadIdx.x] = tex2D<float>(t, threadIdx.x, 0.5f); }
__global__ void store(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, 4 * (threadIdx.x + 30), 0); }

int main(int argc, char** argv) {
  float* data = nullptr;
  EXPECT_CUDA(cudaMalloc(&data, 64 * sizeof(float)), cudaSuccess);
  cudaResourceDesc r;
  std::memset(&r, 0, sizeof r);
  r.resType = cudaResourceTypeLinear;
  r.res.linear.devPtr = data;
  r.res.linear.desc = cudaCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = 64 * sizeof(float);
  cudaTextureDesc t;
  std::memset(&t, 0, sizeof t);
  t.readMode = cudaReadModeElementType;
  if (argc > 1) {
    const char* mode = argv[1];
    cudaTextureObject_t handle = 0;
    if (std::strcmp(mode, "destroyed") == 0) {
      EXPECT_CUDA(cudaCreateTextureObject(&handle, &r, &t, nullptr), cudaSuccess);
      EXPECT_CUDA(cudaDestroyTextureObject(handle), cudaSuccess);
      fetch<<<1, 32>>>(handle, data);
    } else if (std::strcmp(mode, "wild") == 0) {
      fetch_wild<<<1, 32>>>(0x123456789ull, data);
    } else {
      cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
      cudaArray_t array;
      EXPECT_CUDA(cudaMallocArray(&array, &desc, 40, 2, cudaArraySurfaceLoadStore), cudaSuccess);
      cudaResourceDesc ra;
      std::memset(&ra, 0, sizeof ra);
      ra.resType = cudaResourceTypeArray;
      ra.res.array.array = array;
      cudaSurfaceObject_t s = 0;
      EXPECT_CUDA(cudaCreateSurfaceObject(&s, &ra), cudaSuccess);
      store<<<1, 32>>>(s);
    }
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);  // the launch itself is legal
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    std::printf("PASS texture_bad %s\n", mode);
    return 0;
  }
  // Channel descriptors: 3 channels, mixed widths, a gap, 8-bit float, no format.
  cudaArray_t array = nullptr;
  const cudaChannelFormatDesc bad[] = {
      cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindUnsigned),
      cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindUnsigned),
      cudaCreateChannelDesc(32, 0, 32, 0, cudaChannelFormatKindFloat),
      cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindFloat),
      cudaCreateChannelDesc(12, 0, 0, 0, cudaChannelFormatKindSigned),
      cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindNone),
  };
  for (const cudaChannelFormatDesc& d : bad) {
    EXPECT_CUDA(cudaMallocArray(&array, &d, 16, 16), cudaErrorInvalidChannelDescriptor);
  }
  cudaResourceDesc rb = r;
  rb.res.linear.desc = bad[0];
  cudaTextureObject_t tex = 0;
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &rb, &t, nullptr), cudaErrorInvalidChannelDescriptor);
  // Linear filtering of integers read as integers.
  cudaResourceDesc ri = r;
  ri.res.linear.desc = cudaCreateChannelDesc<int>();
  cudaTextureDesc linear = t;
  linear.filterMode = cudaFilterModeLinear;
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &ri, &linear, nullptr), cudaErrorInvalidFilterSetting);
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaCreateTextureObject(nullptr, &r, &t, nullptr), cudaErrorInvalidValue);
  // A destroyed object is unknown to every call.
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
  EXPECT_CUDA(cudaDestroyTextureObject(tex), cudaSuccess);
  cudaResourceDesc back;
  EXPECT_CUDA(cudaGetTextureObjectResourceDesc(&back, tex), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDestroyTextureObject(tex), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDestroyTextureObject(0), cudaSuccess);
  // Surfaces need an array made with cudaArraySurfaceLoadStore; linear memory is no surface.
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  EXPECT_CUDA(cudaMallocArray(&array, &desc, 16, 16), cudaSuccess);
  cudaResourceDesc ra;
  std::memset(&ra, 0, sizeof ra);
  ra.resType = cudaResourceTypeArray;
  ra.res.array.array = array;
  cudaSurfaceObject_t surface = 0;
  EXPECT_CUDA(cudaCreateSurfaceObject(&surface, &ra), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaCreateSurfaceObject(&surface, &r), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaFreeArray(array), cudaSuccess);
  EXPECT_CUDA(cudaFreeArray(array), cudaErrorInvalidValue);
  ra.res.array.array = array;  // freed
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &ra, &t, nullptr), cudaErrorInvalidResourceHandle);
  cudaExtent extent;
  EXPECT_CUDA(cudaArrayGetInfo(nullptr, &extent, nullptr, array), cudaErrorInvalidResourceHandle);
  // Everything still works afterwards.
  EXPECT_CUDA(cudaMemset(data, 0, 64 * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
  fetch<<<1, 32>>>(tex, data + 32);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_CUDA(cudaDestroyTextureObject(tex), cudaSuccess);
  std::printf("PASS texture_bad\n");
  return 0;
}
