// gpuvp's unified-memory suite: small CUDA programs on cudaMallocManaged memory, each checked
// against a CPU reference. Run one with `uvm_suite NAME` (or `all`); prints "PASS uvm NAME".
//
//   stream    c = a + b over 1 MiB arrays: sequential first touch (prefetchers shine)
//   random    gather through a fixed pseudo-random index (prefetchers help little)
//   strided   one 4 KB page per thread (a fault per thread without prefetching)
//   oversub   two passes over a 4 MiB working set (run with uvm.device_memory below it)
//   prefetch  cudaMemPrefetchAsync the inputs to the device before the kernel
//   retouch   kernel writes, host reads and changes the data, kernel reads it back
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void gather(const float* table, const unsigned* index, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[index[i]] * 2.0f;
}

__global__ void strided(const float* in, float* out, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[static_cast<size_t>(i) * stride] + 1.0f;
}

__global__ void scale(float* x, int n, float factor, float offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * factor + offset;
}

int blocks(int n) { return (n + 255) / 256; }

bool report(const char* name, int bad, int n) {
  if (bad != 0) {
    std::printf("FAIL uvm %s: %d of %d values differ from the CPU reference\n", name, bad, n);
    return false;
  }
  std::printf("PASS uvm %s\n", name);
  return true;
}

bool run_stream() {
  const int n = 1 << 18;  // 1 MiB per array
  float *a, *b, *c;
  CHECK(cudaMallocManaged(&a, n * sizeof(float)));
  CHECK(cudaMallocManaged(&b, n * sizeof(float)));
  CHECK(cudaMallocManaged(&c, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  add<<<blocks(n), 256>>>(a, b, c, n);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return report("stream", bad, n);
}

bool run_random() {
  const int n = 1 << 14, table_size = 1 << 18;
  float *table, *out;
  unsigned* index;
  CHECK(cudaMallocManaged(&table, table_size * sizeof(float)));
  CHECK(cudaMallocManaged(&index, n * sizeof(unsigned)));
  CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  for (int i = 0; i < table_size; ++i) table[i] = static_cast<float>(i % 1000);
  uint32_t x = 12345;  // fixed LCG: the same indices every run
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    index[i] = (x >> 8) % table_size;
  }
  gather<<<blocks(n), 256>>>(table, index, out, n);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != table[index[i]] * 2.0f;
  CHECK(cudaFree(table));
  CHECK(cudaFree(index));
  CHECK(cudaFree(out));
  return report("random", bad, n);
}

bool run_strided() {
  const int n = 512, stride = 1024;  // 4 KB apart: 2 MiB touched sparsely
  float *in, *out;
  CHECK(cudaMallocManaged(&in, static_cast<size_t>(n) * stride * sizeof(float)));
  CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[static_cast<size_t>(i) * stride] = static_cast<float>(3 * i);
  strided<<<blocks(n), 256>>>(in, out, n, stride);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != static_cast<float>(3 * i) + 1.0f;
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return report("strided", bad, n);
}

bool run_oversub() {
  const int n = 1 << 20;  // 4 MiB
  float* x;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 4096);
  // Two passes in one stream without a host touch between them: the second refaults what the
  // first evicted once device memory is smaller than the working set.
  scale<<<blocks(n), 256>>>(x, n, 2.0f, 1.0f);
  scale<<<blocks(n), 256>>>(x, n, 1.0f, -3.0f);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(i % 4096) * 2.0f - 2.0f;
  CHECK(cudaFree(x));
  return report("oversub", bad, n);
}

bool run_prefetch() {
  const int n = 1 << 18;
  float *a, *b, *c;
  CHECK(cudaMallocManaged(&a, n * sizeof(float)));
  CHECK(cudaMallocManaged(&b, n * sizeof(float)));
  CHECK(cudaMallocManaged(&c, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 77);
    b[i] = 0.5f;
  }
  cudaMemLocation device{};
  device.type = cudaMemLocationTypeDevice;
  device.id = 0;
  CHECK(cudaMemPrefetchAsync(a, n * sizeof(float), device, 0, 0));
  CHECK(cudaMemPrefetchAsync(b, n * sizeof(float), device, 0, 0));
  CHECK(cudaMemPrefetchAsync(c, n * sizeof(float), device, 0, 0));
  CHECK(cudaMemAdvise(a, n * sizeof(float), cudaMemAdviseSetReadMostly, device));
  add<<<blocks(n), 256>>>(a, b, c, n);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != static_cast<float>(i % 77) + 0.5f;
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return report("prefetch", bad, n);
}

bool run_retouch() {
  const int n = 1 << 16;
  float* x;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  scale<<<blocks(n), 256>>>(x, n, 1.0f, 5.0f);  // x = i + 5 on the device
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    bad += x[i] != static_cast<float>(i) + 5.0f;  // the host sees the GPU's writes
    x[i] = x[i] * 10.0f;                           // and changes them
  }
  scale<<<blocks(n), 256>>>(x, n, 0.5f, 0.0f);     // the device sees the host's writes
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) bad += x[i] != (static_cast<float>(i) + 5.0f) * 5.0f;
  CHECK(cudaFree(x));
  return report("retouch", bad, n);
}

struct Entry {
  const char* name;
  bool (*run)();
};
const Entry kPrograms[] = {{"stream", run_stream},     {"random", run_random},     {"strided", run_strided},
                           {"oversub", run_oversub},   {"prefetch", run_prefetch}, {"retouch", run_retouch}};

}  // namespace

int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "all";
  bool ok = true, found = false;
  for (const Entry& e : kPrograms) {
    if (std::strcmp(which, "all") == 0 || std::strcmp(which, e.name) == 0) {
      found = true;
      ok = e.run() && ok;
    }
  }
  if (!found) {
    std::fprintf(stderr, "uvm_suite: unknown program '%s' (stream random strided oversub prefetch retouch all)\n", which);
    return 2;
  }
  return ok ? 0 : 1;
}
