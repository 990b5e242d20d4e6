// Resource exhaustion: device memory, managed memory, streams and events asked for beyond what the
// platform has. Each ask gets a clear CUDA error (never a crash), what was handed out comes back when
// freed, and a kernel still runs correctly afterwards. Prints "PASS resource_exhaustion".
#include <cstdio>
#include <vector>

#include "check.cuh"

__global__ void fill(int* out, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

// A small kernel checked against the CPU: the device still works.
static void still_works(int value) {
  const int n = 4096;
  int* d = nullptr;
  EXPECT_CUDA(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  fill<<<(n + 255) / 256, 256>>>(d, n, value);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  std::vector<int> h(n);
  EXPECT_CUDA(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) CHECK(h[i] == value + i);
  EXPECT_CUDA(cudaFree(d), cudaSuccess);
}

int main() {
  cudaDeviceProp prop{};
  EXPECT_CUDA(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const size_t total = prop.totalGlobalMem;
  CHECK(total > 0);

  // ---- Device memory: more than the device has, at once and piece by piece.
  void* p = nullptr;
  EXPECT_CUDA(cudaMalloc(&p, total + 1), cudaErrorMemoryAllocation);
  CHECK(p == nullptr);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);  // the error is recorded once
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  const size_t chunk = size_t{1} << 30;
  std::vector<void*> chunks;
  for (size_t i = 0; i <= total / chunk; ++i) {
    void* c = nullptr;
    const cudaError_t e = cudaMalloc(&c, chunk);
    if (e == cudaErrorMemoryAllocation) break;
    EXPECT_CUDA(e, cudaSuccess);
    chunks.push_back(c);
  }
  CHECK(chunks.size() == total / chunk);  // whole chunks only: the next one does not fit
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  CHECK(total_bytes == total);
  CHECK(free_bytes < chunk);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
  for (void* c : chunks) EXPECT_CUDA(cudaFree(c), cudaSuccess);
  EXPECT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  CHECK(free_bytes == total);  // everything came back
  still_works(1);

  // ---- Managed memory beyond what the device (and a host of this size) could hold.
  void* m = nullptr;
  EXPECT_CUDA(cudaMallocManaged(&m, size_t{1} << 46), cudaErrorMemoryAllocation);  // 64 TiB
  CHECK(m == nullptr);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
  still_works(2);

  // ---- Streams and events by the thousand: created, used, destroyed; nothing is left behind.
  const int kStreams = 4000, kEvents = 4000;
  std::vector<cudaStream_t> streams(kStreams);
  std::vector<cudaEvent_t> events(kEvents);
  for (auto& s : streams) EXPECT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (auto& e : events) EXPECT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  for (int i = 0; i < kEvents; ++i) EXPECT_CUDA(cudaEventRecord(events[i], streams[i % kStreams]), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (auto& e : events) EXPECT_CUDA(cudaEventQuery(e), cudaSuccess);
  for (auto& e : events) EXPECT_CUDA(cudaEventDestroy(e), cudaSuccess);
  for (auto& s : streams) EXPECT_CUDA(cudaStreamDestroy(s), cudaSuccess);
  still_works(3);

  std::printf("PASS resource_exhaustion\n");
  return 0;
}
