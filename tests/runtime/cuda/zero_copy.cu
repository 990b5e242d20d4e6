// Zero copy: kernels read and write mapped host memory in place (cudaHostAlloc(Mapped),
// cudaHostRegister(Mapped), cudaHostGetDevicePointer), system-scope atomics on it, and a kernel
// spinning on a host-mapped volatile flag that the host sets while the kernel runs. Every result
// is checked against a CPU reference. Prints "PASS zero_copy".
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.cuh"

__global__ void saxpy(const float* x, const float* y, float* out, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

// Every thread adds to one host counter with system-scope atomics, and the last block to finish
// (counted at system scope after a system fence) writes the total it saw.
__global__ void count_system(unsigned* counter, unsigned* blocks_done, unsigned* seen) {
  atomicAdd_system(counter, 1u);
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned done = atomicAdd_system(blocks_done, 1u);
    if (done == gridDim.x - 1) *seen = atomicAdd_system(counter, 0u);
  }
}

// Adds its index to the first int of page `i` of a large mapped area; thread 0 also bumps the last int.
__global__ void touch_pages(int* area, int stride, int pages, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pages) area[i * stride] += i;
  if (i == 0) area[count - 1] += 1;
}

// Spins until the host sets *flag, counting its polls; then reports what it read after the flag.
__global__ void wait_for_host(volatile int* flag, volatile int* payload, int* polls, int* got) {
  int count = 0;
  while (*flag == 0) ++count;
  __threadfence_system();
  *polls = count;
  *got = *payload;
}

int main(int argc, char** argv) {
  // On the functional model a kernel runs to its end in one step: it cannot wait for the host.
  bool spin = true, host_pointers = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "no-spin") == 0) spin = false;
    // Kernels given host pointers access memory at addresses the OS chose: statistics vary.
    if (std::strcmp(argv[i], "no-host-pointers") == 0) host_pointers = false;
  }
  int can_map = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0), cudaSuccess);
  CHECK(can_map == 1);
  EXPECT_CUDA(cudaSetDeviceFlags(cudaDeviceMapHost), cudaSuccess);

  // ---- cudaHostAlloc(Mapped): the kernel writes the host buffer itself.
  const int n = 10000;
  float *x = nullptr, *y = nullptr, *out = nullptr;
  EXPECT_CUDA(cudaHostAlloc(&x, n * sizeof(float), cudaHostAllocMapped), cudaSuccess);
  EXPECT_CUDA(cudaHostAlloc(&y, n * sizeof(float), cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  EXPECT_CUDA(cudaHostAlloc(&out, n * sizeof(float), cudaHostAllocMapped), cudaSuccess);
  unsigned flags = 0;
  EXPECT_CUDA(cudaHostGetFlags(&flags, y), cudaSuccess);
  CHECK(flags == (cudaHostAllocMapped | cudaHostAllocPortable));
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97) * 0.5f;
    y[i] = static_cast<float>(i % 13);
    out[i] = -1.0f;
  }
  float *dx = nullptr, *dy = nullptr, *dout = nullptr;
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dx), x, 0), cudaSuccess);
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dy), y, 0), cudaSuccess);
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dout), out, 0), cudaSuccess);
  CHECK(dx != nullptr && dy != nullptr && dout != nullptr);
  saxpy<<<(n + 255) / 256, 256>>>(dx, dy, dout, 3.0f, n);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) CHECK(out[i] == 3.0f * x[i] + y[i]);
  // The host changes its input; the next kernel reads the new values (no copy to refresh).
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  if (host_pointers) {
    saxpy<<<(n + 255) / 256, 256>>>(x, dy, out, 2.0f, n);  // host pointers work too (unified addressing)
  } else {
    saxpy<<<(n + 255) / 256, 256>>>(dx, dy, dout, 2.0f, n);
  }
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) CHECK(out[i] == 2.0f * static_cast<float>(i) + y[i]);

  // ---- cudaMallocHost: with unified addressing a kernel takes its host pointer as it is.
  float* plain = nullptr;
  EXPECT_CUDA(cudaMallocHost(&plain, n * sizeof(float)), cudaSuccess);
  if (host_pointers) {
    saxpy<<<(n + 255) / 256, 256>>>(x, y, plain, 4.0f, n);  // x, y mapped; plain only pinned
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < n; ++i) CHECK(plain[i] == 4.0f * static_cast<float>(i) + y[i]);
  }
  float *dplain = nullptr, *dplain10 = nullptr;
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dplain10), plain + 10, 0), cudaSuccess);
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dplain), plain, 0), cudaSuccess);
  CHECK(dplain10 == dplain + 10);
  saxpy<<<(n + 255) / 256, 256>>>(dx, dy, dplain, 1.0f, n);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) CHECK(plain[i] == x[i] + y[i]);

  // ---- cudaHostRegister(Mapped) of the program's own (page-aligned and unaligned) memory.
  const size_t bytes = 3 * 4096 + 100;
  void* raw = mmap(nullptr, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(raw != MAP_FAILED);
  float* reg = reinterpret_cast<float*>(static_cast<char*>(raw) + 64);  // not page aligned
  const int m = static_cast<int>(bytes / sizeof(float));
  for (int i = 0; i < m; ++i) reg[i] = static_cast<float>(i);
  EXPECT_CUDA(cudaHostRegister(reg, bytes, cudaHostRegisterMapped), cudaSuccess);
  for (int i = 0; i < m; ++i) CHECK(reg[i] == static_cast<float>(i));  // registration keeps the values
  float* dreg = nullptr;
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dreg), reg, 0), cudaSuccess);
  saxpy<<<(m + 255) / 256, 256>>>(dreg, dreg, dreg, 2.0f, m);  // reg[i] = 3 * reg[i], in place
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < m; ++i) CHECK(reg[i] == 3.0f * static_cast<float>(i));
  EXPECT_CUDA(cudaHostUnregister(reg), cudaSuccess);
  for (int i = 0; i < m; ++i) CHECK(reg[i] == 3.0f * static_cast<float>(i));  // the program's memory again
  reg[0] = 42.0f;
  CHECK(reg[0] == 42.0f);
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dreg), reg, 0), cudaErrorInvalidValue);
  munmap(raw, bytes + 4096);

  // ---- A large registration, as the streams sample makes: 64 MiB of the program's memory mapped
  // for the device (more than a 1 GiB region's per-channel window held). A kernel adds its
  // thread index to one int per 4 KiB page and to the last int; the host sees each in place.
  {
    const size_t big = size_t{64} << 20;
    int* area = static_cast<int*>(mmap(nullptr, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    CHECK(area != MAP_FAILED);
    const int count = static_cast<int>(big / sizeof(int)), stride = 1024, pages = count / stride;
    for (int i = 0; i < count; i += stride) area[i] = i;
    area[count - 1] = 7;
    EXPECT_CUDA(cudaHostRegister(area, big, cudaHostRegisterMapped), cudaSuccess);
    int* darea = nullptr;
    EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&darea), area, 0), cudaSuccess);
    touch_pages<<<(pages + 255) / 256, 256>>>(darea, stride, pages, count);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    for (int p = 0; p < pages; ++p) CHECK(area[p * stride] == p * stride + p);
    CHECK(area[count - 1] == 7 + 1);
    EXPECT_CUDA(cudaHostUnregister(area), cudaSuccess);
    munmap(area, big);
  }

  // ---- System-scope atomics on a mapped host counter.
  unsigned* counters = nullptr;
  EXPECT_CUDA(cudaHostAlloc(&counters, 3 * sizeof(unsigned), cudaHostAllocMapped), cudaSuccess);
  counters[0] = 5;
  counters[1] = 0;
  counters[2] = 0;
  unsigned* dcounters = nullptr;
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dcounters), counters, 0), cudaSuccess);
  count_system<<<40, 128>>>(dcounters, dcounters + 1, dcounters + 2);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  CHECK(counters[0] == 5 + 40 * 128);
  CHECK(counters[1] == 40);
  CHECK(counters[2] == 5 + 40 * 128);

  // ---- A kernel spins on a host-mapped flag that the host sets while the kernel runs.
  int* shared = nullptr;
  if (spin) {
  EXPECT_CUDA(cudaHostAlloc(&shared, 4 * sizeof(int), cudaHostAllocMapped), cudaSuccess);
  std::memset(shared, 0, 4 * sizeof(int));
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  int* dshared = nullptr;
  EXPECT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dshared), shared, 0), cudaSuccess);
  wait_for_host<<<1, 1, 0, stream>>>(dshared, dshared + 1, dshared + 2, dshared + 3);
  int not_ready = 0;
  while (not_ready < 3) {  // each query lets the kernel run for a moment: it is spinning
    const cudaError_t q = cudaStreamQuery(stream);
    CHECK(q == cudaErrorNotReady);
    ++not_ready;
  }
  shared[1] = 1234;                                  // the payload first,
  __atomic_store_n(&shared[0], 1, __ATOMIC_RELEASE);  // then the flag
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  CHECK(shared[3] == 1234);
  CHECK(shared[2] > 0);  // it did spin before the host's write
  std::printf("kernel polled the host flag %d times\n", shared[2]);
  EXPECT_CUDA(cudaFreeHost(shared), cudaSuccess);
  }

  EXPECT_CUDA(cudaFreeHost(x), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(y), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(out), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(plain), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(counters), cudaSuccess);
  std::printf("PASS zero_copy\n");
  return 0;
}
