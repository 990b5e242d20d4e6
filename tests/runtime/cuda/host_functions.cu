// Host functions in stream order (cudaLaunchHostFunc, cudaStreamAddCallback): each waits for the
// stream's earlier kernels and copies, the stream's later work waits for it, an event recorded
// after one orders another stream behind it, they run on a thread of the runtime that may not
// call CUDA, and synchronizing or polling a stream runs them. Checked against the CPU.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "check.cuh"

constexpr int kN = 4096;

__global__ void fill(int* p, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

__global__ void add(int* p, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += value;
}

// Keeps a stream busy for a while of simulated time.
__global__ void slow_add(int* p, int value, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = p[i];
  for (int r = 0; r < rounds; ++r) v = (v * 3 + 1) % 1000003;
  p[i] += v == -7 ? 0 : value;  // v is never -7: the loop only costs time
}

struct Log {
  std::atomic<int> step{0};
  int order[16] = {};  // which callback ran at which step
  std::thread::id threads[16];
  void ran(int who) {
    const int at = step.fetch_add(1);
    if (at < 16) {
      order[at] = who;
      threads[at] = std::this_thread::get_id();
    }
  }
};

Log g_log;
int* g_copied = nullptr;   // pinned: the D2H copy before callback 1 lands here
int* g_source = nullptr;   // pinned: callback 1 writes what the H2D copy after it reads
int* g_result = nullptr;   // pinned: the D2H copy before callback 2 lands here
int g_failures = 0;
cudaStream_t g_stream_a = nullptr;
std::atomic<bool> g_first_ran{false};

void fail(const char* what) {
  std::printf("FAIL %s\n", what);
  ++g_failures;
}

void CUDART_CB first(void*) {
  g_log.ran(1);
  // The copy queued before this host function has landed: the kernel before it ran too.
  for (int i = 0; i < kN; ++i) {
    if (g_copied[i] != 5) {
      fail("host function ran before the stream's earlier kernel and copy");
      break;
    }
  }
  // CUDA calls from a host function are refused.
  void* p = nullptr;
  if (cudaMalloc(&p, 16) != cudaErrorNotPermitted) fail("cudaMalloc inside a host function was not refused");
  if (cudaGetLastError() != cudaErrorNotPermitted) fail("cudaGetLastError inside a host function was not refused");
  if (cudaGraphCreate(nullptr, 0) != cudaErrorNotPermitted) fail("cudaGraphCreate inside a host function was not refused");
  // The stream's next copy must read these values: it waits for this function.
  for (int i = 0; i < kN; ++i) g_source[i] = 7 * i;
  g_first_ran = true;
}

void CUDART_CB second(cudaStream_t stream, cudaError_t status, void* user) {
  g_log.ran(2);
  if (stream != g_stream_a) fail("cudaStreamAddCallback passed the wrong stream");
  if (status != cudaSuccess) fail("cudaStreamAddCallback passed an error status");
  if (user != &g_log) fail("cudaStreamAddCallback passed the wrong user data");
  for (int i = 0; i < kN; ++i) {
    if (g_result[i] != 7 * i + 100) {
      std::printf("FAIL result[%d] = %d, expected %d\n", i, g_result[i], 7 * i + 100);
      ++g_failures;
      break;
    }
  }
}

void CUDART_CB on_b(void*) {
  g_log.ran(3);
  if (!g_first_ran) fail("stream B's host function ran before the one its event waits for");
}

void CUDART_CB on_legacy(void* flag) {
  g_log.ran(4);
  *static_cast<int*>(flag) = 1;
}

void CUDART_CB on_polled(void* flag) {
  g_log.ran(5);
  *static_cast<int*>(flag) = 1;
}

int main() {
  const int blocks = kN / 256;
  int* d_a = nullptr;
  int* d_b = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_a, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_b, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&g_copied, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&g_source, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&g_result, kN * sizeof(int)), cudaSuccess);
  std::memset(g_copied, 0, kN * sizeof(int));
  std::memset(g_source, 0, kN * sizeof(int));
  std::memset(g_result, 0, kN * sizeof(int));
  cudaStream_t b = nullptr;
  EXPECT_CUDA(cudaStreamCreate(&g_stream_a), cudaSuccess);
  EXPECT_CUDA(cudaStreamCreate(&b), cudaSuccess);
  cudaEvent_t after_first = nullptr;
  EXPECT_CUDA(cudaEventCreateWithFlags(&after_first, cudaEventDisableTiming), cudaSuccess);

  // Stream A: kernel, copy out, host function 1, copy in (of what host function 1 wrote),
  // kernel, copy out, callback 2.
  cudaStream_t a = g_stream_a;
  fill<<<blocks, 256, 0, a>>>(d_a, 5, kN);
  EXPECT_CUDA(cudaMemcpyAsync(g_copied, d_a, kN * sizeof(int), cudaMemcpyDeviceToHost, a), cudaSuccess);
  EXPECT_CUDA(cudaLaunchHostFunc(a, first, nullptr), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(after_first, a), cudaSuccess);
  EXPECT_CUDA(cudaMemcpyAsync(d_a, g_source, kN * sizeof(int), cudaMemcpyHostToDevice, a), cudaSuccess);
  add<<<blocks, 256, 0, a>>>(d_a, 100, kN);
  EXPECT_CUDA(cudaMemcpyAsync(g_result, d_a, kN * sizeof(int), cudaMemcpyDeviceToHost, a), cudaSuccess);
  EXPECT_CUDA(cudaStreamAddCallback(a, second, &g_log, 0), cudaSuccess);

  // Stream B: busy with its own kernel, then waits for the event recorded after host function 1.
  fill<<<blocks, 256, 0, b>>>(d_b, 1, kN);
  slow_add<<<blocks, 256, 0, b>>>(d_b, 1, kN, 50);
  EXPECT_CUDA(cudaStreamWaitEvent(b, after_first, 0), cudaSuccess);
  EXPECT_CUDA(cudaLaunchHostFunc(b, on_b, nullptr), cudaSuccess);

  EXPECT_CUDA(cudaStreamSynchronize(a), cudaSuccess);
  if (g_log.step.load() < 2) fail("cudaStreamSynchronize returned before the stream's host functions ran");
  EXPECT_CUDA(cudaStreamSynchronize(b), cudaSuccess);
  if (g_log.step.load() != 3) fail("stream B's host function did not run by its synchronize");
  std::vector<int> host_b(kN);
  EXPECT_CUDA(cudaMemcpy(host_b.data(), d_b, kN * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  if (host_b[0] != 2 || host_b[kN - 1] != 2) fail("stream B's kernels computed the wrong values");

  // The legacy default stream, and a stream that is only polled.
  int legacy_ran = 0;
  add<<<blocks, 256>>>(d_a, 1, kN);
  EXPECT_CUDA(cudaLaunchHostFunc(nullptr, on_legacy, &legacy_ran), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  if (legacy_ran != 1) fail("cudaDeviceSynchronize returned before the legacy stream's host function ran");
  int polled_ran = 0;
  add<<<blocks, 256, 0, b>>>(d_b, 1, kN);
  EXPECT_CUDA(cudaLaunchHostFunc(b, on_polled, &polled_ran), cudaSuccess);
  add<<<blocks, 256, 0, b>>>(d_b, 1, kN);
  int polls = 0;
  cudaError_t state;
  while ((state = cudaStreamQuery(b)) == cudaErrorNotReady) ++polls;
  EXPECT_CUDA(state, cudaSuccess);
  if (polled_ran != 1) fail("polling a stream to completion did not run its host function");

  // Order (stream A's two in order; B's after A's first, through the event) and thread.
  const int steps = g_log.step.load();
  if (steps != 5) fail("not every host function ran exactly once");
  int position[6] = {-1, -1, -1, -1, -1, -1};
  for (int i = 0; i < steps && i < 16; ++i) {
    if (g_log.order[i] >= 1 && g_log.order[i] <= 5) position[g_log.order[i]] = i;
    if (g_log.threads[i] == std::this_thread::get_id()) fail("a host function ran on the program's own thread");
  }
  if (!(position[1] < position[2] && position[1] < position[3] && position[2] < position[4] &&
        position[3] < position[4] && position[4] < position[5])) {
    fail("host functions ran out of stream order");
  }

  // Across streams, host functions run in the order their streams reach them: the one behind a
  // short kernel, queued second, runs before the one behind a long kernel, queued first.
  std::atomic<int> next{0};
  int long_at = -1, short_at = -1;
  struct Mark {
    std::atomic<int>* next;
    int* at;
  } long_mark{&next, &long_at}, short_mark{&next, &short_at};
  auto record = [](void* data) {
    Mark* mark = static_cast<Mark*>(data);
    *mark->at = mark->next->fetch_add(1);
  };
  slow_add<<<blocks, 256, 0, a>>>(d_a, 0, kN, 400);
  EXPECT_CUDA(cudaLaunchHostFunc(a, record, &long_mark), cudaSuccess);
  add<<<1, 32, 0, b>>>(d_b, 0, 32);
  EXPECT_CUDA(cudaLaunchHostFunc(b, record, &short_mark), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  if (!(short_at == 0 && long_at == 1)) {
    std::printf("FAIL the host function behind the short kernel ran at %d, behind the long one at %d\n", short_at,
                long_at);
    ++g_failures;
  }

  // Bad input.
  EXPECT_CUDA(cudaLaunchHostFunc(a, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamAddCallback(a, nullptr, nullptr, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamAddCallback(a, second, &g_log, 1), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

  EXPECT_CUDA(cudaEventDestroy(after_first), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(a), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(b), cudaSuccess);
  if (g_failures != 0) return 1;
  std::printf("PASS host_functions: 5 host functions in stream order, %d polls\n", polls);
  return 0;
}
