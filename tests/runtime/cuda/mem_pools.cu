// Stream-ordered allocation: cudaMallocAsync / cudaFreeAsync on the device's default pool and on
// a created pool, block reuse in stream order, pool attributes, trimming, and bad input. Kernel
// results through pool memory are checked against the CPU.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.cuh"

__global__ void iota(int* p, int base, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i;
}

__global__ void scale(const int* in, int* out, int factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

int failures = 0;
#define EXPECT_TRUE(cond)                                          \
  do {                                                             \
    if (!(cond)) {                                                 \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                  \
    }                                                              \
  } while (0)

uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  EXPECT_CUDA(cudaMemPoolGetAttribute(pool, attr, &value), cudaSuccess);
  return value;
}

bool check(const int* device, int n, int base, int factor) {
  std::vector<int> host(n);
  EXPECT_CUDA(cudaMemcpy(host.data(), device, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    if (host[i] != (base + i) * factor) {
      std::printf("FAIL element %d = %d, expected %d\n", i, host[i], (base + i) * factor);
      return false;
    }
  }
  return true;
}

int main() {
  constexpr int n = 1 << 14;
  constexpr size_t bytes = n * sizeof(int);
  const int blocks = n / 256;
  int supported = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0), cudaSuccess);
  EXPECT_TRUE(supported == 1);
  cudaMemPool_t pool = nullptr;
  cudaMemPool_t current = nullptr;
  EXPECT_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  EXPECT_CUDA(cudaDeviceGetMemPool(&current, 0), cudaSuccess);
  EXPECT_TRUE(pool == current);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrReleaseThreshold) == 0);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  EXPECT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);

  // Allocate, use and free in stream order; the same stream reuses the block at once.
  int* a = nullptr;
  int* b = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&a, bytes, s1), cudaSuccess);
  EXPECT_CUDA(cudaMallocAsync(&b, bytes, s1), cudaSuccess);
  EXPECT_TRUE(a != nullptr && b != nullptr && a != b);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemCurrent) == 2 * bytes);
  iota<<<blocks, 256, 0, s1>>>(a, 3, n);
  scale<<<blocks, 256, 0, s1>>>(a, b, 2, n);
  EXPECT_CUDA(cudaFreeAsync(a, s1), cudaSuccess);
  int* c = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&c, bytes, s1), cudaSuccess);
  EXPECT_TRUE(c == a);  // freed earlier on this stream: reusable in stream order
  iota<<<blocks, 256, 0, s1>>>(c, 10, n);
  // Another stream may not take a block whose free has not completed.
  EXPECT_CUDA(cudaFreeAsync(c, s1), cudaSuccess);
  int* d = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&d, bytes, s2), cudaSuccess);
  EXPECT_TRUE(d != c && d != b);
  iota<<<blocks, 256, 0, s2>>>(d, 20, n);
  EXPECT_CUDA(cudaStreamSynchronize(s1), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(s2), cudaSuccess);
  EXPECT_TRUE(check(b, n, 3, 2));
  EXPECT_TRUE(check(d, n, 20, 1));
  // Release threshold 0: the synchronize gave the freed block back.
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemCurrent) == 2 * bytes);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrReservedMemCurrent) == 2 * bytes);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemHigh) == 2 * bytes);  // never more than two live at once
  EXPECT_CUDA(cudaFreeAsync(b, s1), cudaSuccess);
  EXPECT_CUDA(cudaFreeAsync(d, s2), cudaSuccess);

  // A high threshold keeps freed memory in the pool across synchronization; TrimTo gives it back.
  uint64_t threshold = UINT64_MAX;
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrReservedMemCurrent) == 2 * bytes);
  int* e = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&e, bytes, s2), cudaSuccess);  // a completed free: any stream may reuse it
  EXPECT_TRUE(e == b || e == d);
  iota<<<blocks, 256, 0, s2>>>(e, 7, n);
  EXPECT_CUDA(cudaFreeAsync(e, s2), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(s2), cudaSuccess);
  EXPECT_CUDA(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
  uint64_t zero = 0;
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemHigh) == 0);

  // A pool of one's own.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t own = nullptr;
  EXPECT_CUDA(cudaMemPoolCreate(&own, &props), cudaSuccess);
  EXPECT_TRUE(own != pool);
  int* f = nullptr;
  EXPECT_CUDA(cudaMallocFromPoolAsync(&f, bytes, own, s1), cudaSuccess);
  iota<<<blocks, 256, 0, s1>>>(f, 100, n);
  EXPECT_CUDA(cudaStreamSynchronize(s1), cudaSuccess);
  EXPECT_TRUE(check(f, n, 100, 1));
  EXPECT_TRUE(attribute(own, cudaMemPoolAttrUsedMemCurrent) == bytes);
  EXPECT_TRUE(attribute(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
  int flag = -1;
  EXPECT_CUDA(cudaMemPoolGetAttribute(own, cudaMemPoolReuseAllowOpportunistic, &flag), cudaSuccess);
  EXPECT_TRUE(flag == 1);
  EXPECT_CUDA(cudaDeviceSetMemPool(0, own), cudaSuccess);
  int* g = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&g, 256, s1), cudaSuccess);  // now from `own`
  EXPECT_TRUE(attribute(own, cudaMemPoolAttrUsedMemCurrent) == bytes + 256);
  EXPECT_CUDA(cudaFreeAsync(g, s1), cudaSuccess);
  EXPECT_CUDA(cudaFreeAsync(f, s1), cudaSuccess);
  EXPECT_CUDA(cudaMemPoolDestroy(own), cudaSuccess);
  EXPECT_CUDA(cudaDeviceGetMemPool(&current, 0), cudaSuccess);
  EXPECT_TRUE(current == pool);  // destroying the current pool makes the default current again

  // The pools of a memory location (CUDA 13's form of the same queries).
  cudaMemLocation location = {};
  location.type = cudaMemLocationTypeDevice;
  location.id = 0;
  cudaMemPool_t by_location = nullptr;
  EXPECT_CUDA(cudaMemGetDefaultMemPool(&by_location, &location, cudaMemAllocationTypePinned), cudaSuccess);
  EXPECT_TRUE(by_location == pool);
  EXPECT_CUDA(cudaMemGetMemPool(&by_location, &location, cudaMemAllocationTypePinned), cudaSuccess);
  EXPECT_TRUE(by_location == pool);
  location.id = 3;
  EXPECT_CUDA(cudaMemGetMemPool(&by_location, &location, cudaMemAllocationTypePinned), cudaErrorInvalidDevice);

  // Managed memory attached to a stream: the kernel's results are seen by the host.
  int* managed = nullptr;
  EXPECT_CUDA(cudaMallocManaged(&managed, bytes, cudaMemAttachGlobal), cudaSuccess);
  EXPECT_CUDA(cudaStreamAttachMemAsync(s1, managed, 0, cudaMemAttachSingle), cudaSuccess);
  iota<<<blocks, 256, 0, s1>>>(managed, 40, n);
  EXPECT_CUDA(cudaStreamAttachMemAsync(s1, managed, bytes, cudaMemAttachHost), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(s1), cudaSuccess);
  EXPECT_TRUE(managed[0] == 40 && managed[n - 1] == 40 + n - 1);
  EXPECT_CUDA(cudaStreamAttachMemAsync(s1, managed, bytes / 2, cudaMemAttachHost), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamAttachMemAsync(s1, managed, 0, 3), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamAttachMemAsync(s1, b, 0, cudaMemAttachHost), cudaErrorInvalidValue);  // not managed
  EXPECT_CUDA(cudaFree(managed), cudaSuccess);

  // Bad input.
  EXPECT_CUDA(cudaMallocAsync(nullptr, bytes, s1), cudaErrorInvalidValue);
  int* h = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&h, bytes, s1), cudaSuccess);
  EXPECT_CUDA(cudaFreeAsync(h, s1), cudaSuccess);
  EXPECT_CUDA(cudaFreeAsync(h, s1), cudaErrorInvalidValue);  // freed twice
  EXPECT_CUDA(cudaMemPoolDestroy(pool), cudaErrorInvalidValue);  // the default pool stays
  EXPECT_CUDA(cudaMemPoolGetAttribute(pool, static_cast<cudaMemPoolAttr>(99), &threshold), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &zero), cudaErrorInvalidValue);
  props.location.id = 1;
  EXPECT_CUDA(cudaMemPoolCreate(&own, &props), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaDeviceGetDefaultMemPool(&current, 1), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);

  EXPECT_CUDA(cudaStreamDestroy(s1), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(s2), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  if (failures != 0) return 1;
  std::printf("PASS mem_pools\n");
  return 0;
}
