// gpuvp's unified-memory suite: small CUDA programs on cudaMallocManaged memory, each checked
// against a CPU reference. Run one with `uvm_suite NAME` (or `all`); prints "PASS uvm NAME".
//
//   stream    c = a + b over 1 MiB arrays: sequential first touch (prefetchers shine)
//   random    gather through a fixed pseudo-random index (prefetchers help little)
//   strided   one 4 KB page per thread (a fault per thread without prefetching)
//   oversub   two passes over a 4 MiB working set (run with uvm.device_memory below it)
//   prefetch  cudaMemPrefetchAsync the inputs to the device before the kernel
//   retouch   kernel writes, host reads and changes the data, kernel reads it back
//   partial   the host touches 17 of 256 pages between two kernels: only those move
//   concurrent the host writes one managed array while a kernel writes another
//   copies    cudaMemset / cudaMemcpy (every direction) and host copies on managed memory
//   readmostly  cudaMemAdviseSetReadMostly: host reads of the input leave it on the device
//   prefhost  cudaMemAdviseSetPreferredLocation(host): the kernel reads and writes remotely
//   accessedby  cudaMemAdviseSetAccessedBy(device): mapped, no fault, no migration
//   prefdevice  cudaMemAdviseSetPreferredLocation(device) survives an oversubscribing stream
//   adviseerrors  bad cudaMemAdvise calls get clear errors; Unset* undo the advice
//   threads   four host threads fault managed pages at once between two kernels
//   chain     the program's own SIGSEGV handler still gets the faults that are not managed memory's
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

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

__global__ void affine(const float* x, float* y, int n, float factor, float offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * factor + offset;
}

cudaMemLocation on_device() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = 0;
  return l;
}

cudaMemLocation on_host() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;
  l.id = 0;
  return l;
}

bool run_partial() {
  const int n = 1 << 18;  // 1 MiB: 256 pages of 1024 floats
  const int per_page = 1024;
  float* x;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000);
  scale<<<blocks(n), 256>>>(x, n, 1.0f, 5.0f);  // x = i % 1000 + 5 on the device
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  // The host reads pages 0..15 and writes page 20; the other 239 pages stay on the device.
  for (int i = 0; i < 16 * per_page; ++i) bad += x[i] != static_cast<float>(i % 1000) + 5.0f;
  for (int i = 20 * per_page; i < 21 * per_page; ++i) x[i] = 1.0f;
  scale<<<blocks(n), 256>>>(x, n, 2.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    const float expected = i / per_page == 20 ? 2.0f : (static_cast<float>(i % 1000) + 5.0f) * 2.0f;
    bad += x[i] != expected;
  }
  CHECK(cudaFree(x));
  return report("partial", bad, n);
}

bool run_concurrent() {
  const int n = 1 << 16;
  float *x, *y;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  scale<<<blocks(n), 256>>>(x, n, 3.0f, 0.0f);  // runs while the host writes y
  for (int i = 0; i < n; ++i) y[i] = static_cast<float>(-i);
  int bad = 0;
  bad += x[7] != 21.0f;  // a host read of x waits for the kernel: never a stale value
  CHECK(cudaDeviceSynchronize());
  scale<<<blocks(n), 256>>>(y, n, 1.0f, 1.0f);
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(3 * i) || y[i] != static_cast<float>(1 - i);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return report("concurrent", bad, n);
}

bool run_copies() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(float);
  float *x, *y, *device;
  CHECK(cudaMallocManaged(&x, bytes));
  CHECK(cudaMallocManaged(&y, bytes));
  CHECK(cudaMalloc(&device, bytes));
  float* host = static_cast<float*>(std::malloc(bytes));
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  CHECK(cudaMemcpy(x, host, bytes, cudaMemcpyHostToDevice));     // into managed memory
  scale<<<blocks(n), 256>>>(x, n, 2.0f, 0.0f);                   // x = 2i
  CHECK(cudaMemcpy(host, x, bytes, cudaMemcpyDefault));          // out of managed memory
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += host[i] != static_cast<float>(2 * i);
  CHECK(cudaMemcpy(device, x, bytes, cudaMemcpyHostToDevice));   // managed as the "host" side
  CHECK(cudaMemcpy(y, device, bytes, cudaMemcpyDeviceToDevice));
  bad += y[n - 1] != static_cast<float>(2 * (n - 1));
  x[1] = 100.0f;                                                 // a host write, then a host copy
  CHECK(cudaMemcpy(y, x, 4 * sizeof(float), cudaMemcpyHostToHost));
  bad += y[0] != 0.0f || y[1] != 100.0f || y[2] != 4.0f || y[4] != 8.0f;
  cudaPointerAttributes attributes{};
  CHECK(cudaPointerGetAttributes(&attributes, x + 5));
  bad += attributes.type != cudaMemoryTypeManaged;
  CHECK(cudaMemset(x, 0, bytes / 2));                            // the device clears the first half
  for (int i = 0; i < n; ++i) bad += x[i] != (i < n / 2 ? 0.0f : static_cast<float>(2 * i));
  std::free(host);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(device));
  return report("copies", bad, n);
}

bool run_readmostly() {
  const int n = 1 << 16;  // 256 KB each: 64 pages
  float *x, *y, *z;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  CHECK(cudaMallocManaged(&z, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 321);
  CHECK(cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetReadMostly, on_device()));
  affine<<<blocks(n), 256>>>(x, y, n, 2.0f, 0.0f);  // x is duplicated on the device
  affine<<<blocks(n), 256>>>(x, z, n, 0.0f, 0.0f);  // z lives on the device
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += y[i] != static_cast<float>(i % 321) * 2.0f || x[i] != static_cast<float>(i % 321);
  affine<<<blocks(n), 256>>>(x, z, n, 1.0f, 1.0f);  // reads x and writes z: nothing to fault
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) bad += z[i] != static_cast<float>(i % 321) + 1.0f;
  x[5] = -1.0f;  // a host write collapses the duplicate
  affine<<<blocks(n), 256>>>(x, y, n, 1.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  bad += y[5] != -1.0f || y[6] != 6.0f;
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(z));
  return report("readmostly", bad, n);
}

bool run_prefhost() {
  const int n = 1 << 16;
  float *a, *b, *c;
  CHECK(cudaMallocManaged(&a, n * sizeof(float)));
  CHECK(cudaMallocManaged(&b, n * sizeof(float)));
  CHECK(cudaMallocManaged(&c, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.25f;
  }
  for (float* p : {a, b, c}) CHECK(cudaMemAdvise(p, n * sizeof(float), cudaMemAdviseSetPreferredLocation, on_host()));
  add<<<blocks(n), 256>>>(a, b, c, n);  // zero copy: reads and writes cross PCIe, nothing migrates
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != static_cast<float>(i) + 0.25f;
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return report("prefhost", bad, n);
}

bool run_accessedby() {
  const int n = 1 << 16;
  float *x, *y;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i & 255);
  CHECK(cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetAccessedBy, on_device()));
  affine<<<blocks(n), 256>>>(x, y, n, 1.0f, 0.5f);  // x: mapped, no fault; y faults in
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += y[i] != static_cast<float>(i & 255) + 0.5f;
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return report("accessedby", bad, n);
}

bool run_prefdevice() {
  const int n_hot = 1 << 16, n_big = 1 << 19;  // 256 KB kept, 2 MiB streamed (uvm.device_memory=1 MiB)
  float *hot, *big;
  CHECK(cudaMallocManaged(&hot, n_hot * sizeof(float)));
  CHECK(cudaMallocManaged(&big, n_big * sizeof(float)));
  for (int i = 0; i < n_hot; ++i) hot[i] = static_cast<float>(i % 17);
  for (int i = 0; i < n_big; ++i) big[i] = 1.0f;
  CHECK(cudaMemAdvise(hot, n_hot * sizeof(float), cudaMemAdviseSetPreferredLocation, on_device()));
  scale<<<blocks(n_hot), 256>>>(hot, n_hot, 1.0f, 1.0f);
  scale<<<blocks(n_big), 256>>>(big, n_big, 3.0f, 0.0f);  // evicts, but not `hot`
  scale<<<blocks(n_hot), 256>>>(hot, n_hot, 2.0f, 0.0f);  // `hot` is still there
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n_hot; ++i) bad += hot[i] != (static_cast<float>(i % 17) + 1.0f) * 2.0f;
  for (int i = 0; i < n_big; ++i) bad += big[i] != 3.0f;
  CHECK(cudaFree(hot));
  CHECK(cudaFree(big));
  return report("prefdevice", bad, n_hot + n_big);
}

bool expect_error(const char* what, cudaError_t got, cudaError_t expected, int& bad) {
  if (got != expected) {
    std::printf("  %s: %s, expected %s\n", what, cudaGetErrorName(got), cudaGetErrorName(expected));
    ++bad;
  }
  cudaGetLastError();
  return got == expected;
}

bool run_adviseerrors() {
  const int n = 1 << 14;
  float *x, *device;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&device, n * sizeof(float)));
  int bad = 0;
  const size_t bytes = n * sizeof(float);
  expect_error("advice 99", cudaMemAdvise(x, bytes, static_cast<cudaMemoryAdvise>(99), on_device()),
               cudaErrorInvalidValue, bad);
  expect_error("device memory", cudaMemAdvise(device, bytes, cudaMemAdviseSetReadMostly, on_device()),
               cudaErrorInvalidValue, bad);
  expect_error("past the end", cudaMemAdvise(x, bytes + 4096, cudaMemAdviseSetReadMostly, on_device()),
               cudaErrorInvalidValue, bad);
  expect_error("0 bytes", cudaMemAdvise(x, 0, cudaMemAdviseSetReadMostly, on_device()), cudaErrorInvalidValue, bad);
  cudaMemLocation other = on_device();
  other.id = 3;
  expect_error("device 3", cudaMemAdvise(x, bytes, cudaMemAdviseSetPreferredLocation, other), cudaErrorInvalidDevice,
               bad);
  // Set then Unset: the data migrates as without advice.
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseSetReadMostly, on_device()));
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseUnsetReadMostly, on_device()));
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseSetPreferredLocation, on_host()));
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseUnsetPreferredLocation, on_host()));
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseSetAccessedBy, on_device()));
  CHECK(cudaMemAdvise(x, bytes, cudaMemAdviseUnsetAccessedBy, on_device()));
  scale<<<blocks(n), 256>>>(x, n, 1.0f, 2.0f);
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(i) + 2.0f;
  CHECK(cudaFree(x));
  CHECK(cudaFree(device));
  return report("adviseerrors", bad, n);
}

char* own_page = nullptr;
volatile sig_atomic_t own_faults = 0;

struct sigaction before_own {};  // with `all`, the runtime's handler is already there: chain to it

void own_handler(int signal, siginfo_t* info, void* context) {
  // The program's handler: its own protected page becomes writable; others go to the handler
  // installed before it, if any (a fault nobody owns is a bug: exit 3).
  const char* at = static_cast<const char*>(info->si_addr);
  if (at < own_page || at >= own_page + 4096) {
    if ((before_own.sa_flags & SA_SIGINFO) != 0 && before_own.sa_sigaction != nullptr) {
      before_own.sa_sigaction(signal, info, context);
      return;
    }
    _exit(3);
  }
  ++own_faults;
  mprotect(own_page, 4096, PROT_READ | PROT_WRITE);
}

bool run_chain() {
  struct sigaction action {};
  action.sa_sigaction = own_handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &before_own);  // alone: before the runtime installs its own
  own_page = static_cast<char*>(mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  const int n = 1 << 14;
  float* x;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  scale<<<blocks(n), 256>>>(x, n, 2.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(2 * i);  // the runtime's faults
  own_page[10] = 1;                                                         // the program's fault
  bad += own_faults != 1 || own_page[10] != 1;
  CHECK(cudaFree(x));
  munmap(own_page, 4096);
  return report("chain", bad, n);
}

bool run_threads() {
  const int n = 1 << 18, parts = 4;
  float* x;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  scale<<<blocks(n), 256>>>(x, n, 1.0f, 3.0f);  // x = 3 on the device
  CHECK(cudaDeviceSynchronize());
  std::vector<int> bad_in(parts, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < parts; ++t) {
    threads.emplace_back([&, t] {  // interleaved pages: the threads fault side by side
      for (int i = t * 1024; i < n; i += parts * 1024) {
        for (int k = i; k < i + 1024; ++k) {
          bad_in[t] += x[k] != 3.0f;
          x[k] = static_cast<float>(k);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  scale<<<blocks(n), 256>>>(x, n, 2.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int b : bad_in) bad += b;
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(2 * i);
  CHECK(cudaFree(x));
  return report("threads", bad, n);
}

struct Entry {
  const char* name;
  bool (*run)();
};
const Entry kPrograms[] = {{"stream", run_stream},         {"random", run_random},       {"strided", run_strided},
                           {"oversub", run_oversub},       {"prefetch", run_prefetch},   {"retouch", run_retouch},
                           {"partial", run_partial},       {"concurrent", run_concurrent}, {"copies", run_copies},
                           {"readmostly", run_readmostly}, {"prefhost", run_prefhost},   {"accessedby", run_accessedby},
                           {"prefdevice", run_prefdevice}, {"adviseerrors", run_adviseerrors}, {"threads", run_threads},
                           {"chain", run_chain}};

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
    std::fprintf(stderr, "uvm_suite: unknown program '%s' (", which);
    for (const Entry& e : kPrograms) std::fprintf(stderr, "%s ", e.name);
    std::fprintf(stderr, "all)\n");
    return 2;
  }
  return ok ? 0 : 1;
}
