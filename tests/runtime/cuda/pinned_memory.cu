// Pinned host memory: cudaMallocHost larger than the channel's DMA window (pageable then, said
// on stderr), cudaHostAlloc, cudaHostRegister / cudaHostUnregister of a program's own buffer,
// cudaHostGetFlags; copies through each to a kernel and back, checked against the CPU; and the
// errors CUDA gives for bad registrations.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.cuh"

__global__ void twice_plus(const int* in, int* out, int add, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2 * in[i] + add;
}

bool round_trip(int* host_in, int* host_out, size_t n, int add, cudaStream_t stream) {
  int *d_in = nullptr, *d_out = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_in, n * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_out, n * sizeof(int)), cudaSuccess);
  for (size_t i = 0; i < n; ++i) host_in[i] = static_cast<int>(i % 100003);
  EXPECT_CUDA(cudaMemcpyAsync(d_in, host_in, n * sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  twice_plus<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(d_in, d_out, add, n);
  EXPECT_CUDA(cudaMemcpyAsync(host_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_CUDA(cudaFree(d_in), cudaSuccess);
  EXPECT_CUDA(cudaFree(d_out), cudaSuccess);
  for (size_t i = 0; i < n; ++i) {
    if (host_out[i] != 2 * static_cast<int>(i % 100003) + add) {
      std::printf("FAIL element %zu = %d\n", i, host_out[i]);
      return false;
    }
  }
  return true;
}

int main() {
  cudaStream_t stream = nullptr;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  // 2 x 160 MiB: more than one program's share of the DMA window (255.5 MiB of the default region).
  const size_t big = size_t{160} << 20;
  int* in = nullptr;
  int* out = nullptr;
  EXPECT_CUDA(cudaMallocHost(&in, big * sizeof(int) / 4), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&out, big * sizeof(int) / 4), cudaSuccess);
  // The last MiB of each (the pages of the second are beyond the window).
  const size_t tail = (1 << 20) / sizeof(int);
  if (!round_trip(in + big / 4 - tail, out + big / 4 - tail, tail, 1, stream)) return 1;
  cudaPointerAttributes attributes;
  EXPECT_CUDA(cudaPointerGetAttributes(&attributes, out), cudaSuccess);
  if (attributes.type != cudaMemoryTypeHost) {
    std::printf("FAIL cudaMallocHost memory is not host memory to cudaPointerGetAttributes\n");
    return 1;
  }
  EXPECT_CUDA(cudaFreeHost(in), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(out), cudaSuccess);

  // cudaHostAlloc with flags, and cudaHostGetFlags.
  int* small_in = nullptr;
  int* small_out = nullptr;
  EXPECT_CUDA(cudaHostAlloc(&small_in, 1 << 20, cudaHostAllocPortable), cudaSuccess);
  EXPECT_CUDA(cudaHostAlloc(&small_out, 1 << 20, cudaHostAllocDefault), cudaSuccess);
  unsigned flags = 99;
  EXPECT_CUDA(cudaHostGetFlags(&flags, small_in + 10), cudaSuccess);
  if (flags != cudaHostAllocPortable) {
    std::printf("FAIL cudaHostGetFlags = %u\n", flags);
    return 1;
  }
  if (!round_trip(small_in, small_out, (1 << 20) / sizeof(int), 2, stream)) return 1;

  // A program's own buffer, registered.
  std::vector<int> own_in(1 << 18), own_out(1 << 18);
  EXPECT_CUDA(cudaHostRegister(own_in.data(), own_in.size() * sizeof(int), cudaHostRegisterDefault), cudaSuccess);
  EXPECT_CUDA(cudaHostRegister(own_out.data(), own_out.size() * sizeof(int), cudaHostRegisterPortable), cudaSuccess);
  if (!round_trip(own_in.data(), own_out.data(), own_in.size(), 3, stream)) return 1;
  EXPECT_CUDA(cudaHostGetFlags(&flags, own_out.data()), cudaSuccess);
  if (flags != cudaHostRegisterPortable) {
    std::printf("FAIL cudaHostGetFlags of registered memory = %u\n", flags);
    return 1;
  }

  // Bad registrations.
  EXPECT_CUDA(cudaHostRegister(own_in.data() + 16, 64, 0), cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_CUDA(cudaHostRegister(nullptr, 64, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaHostRegister(own_in.data(), 0, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaHostRegister(small_in, 64, 0), cudaErrorHostMemoryAlreadyRegistered);  // pinned already
  EXPECT_CUDA(cudaHostUnregister(own_in.data()), cudaSuccess);
  EXPECT_CUDA(cudaHostUnregister(own_in.data()), cudaErrorHostMemoryNotRegistered);
  EXPECT_CUDA(cudaHostUnregister(own_out.data()), cudaSuccess);
  EXPECT_CUDA(cudaHostGetFlags(&flags, own_out.data()), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaHostAlloc(&small_in, 64, 0x80), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

  EXPECT_CUDA(cudaFreeHost(small_in), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(small_out), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  std::printf("PASS pinned_memory\n");
  return 0;
}
