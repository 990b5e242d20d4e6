// Stream capture: three streams forked from and joined back into the origin with events (the
// samples' pattern), copies, memsets, kernels, a host function, stream-ordered allocation and a
// graph launched into the capture; the capture's status and dependencies while it runs; the
// captured graph launched repeatedly; and the errors CUDA reports for what a capture forbids
// (synchronous calls in global mode, the legacy stream, unjoined forks, syncing a capturing
// stream), mode by mode, across threads too. Checked against the CPU.
#include <cstdint>
#include <thread>
#include <vector>

#include "check.cuh"

constexpr int kN = 2048;
constexpr int kThreads = 256;

__global__ void fill(int* p, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value + i;
}

__global__ void add_into(int* out, const int* a, const int* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void twice(int* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2;
}

int g_failures = 0;
#define CHECK_COUNTED(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);             \
      std::printf(__VA_ARGS__);                                    \
      std::printf("\n");                                           \
      ++g_failures;                                                \
    }                                                              \
  } while (0)

int g_host_calls = 0;
int g_host_saw = 0;
int* g_pinned = nullptr;
void CUDART_CB after_copy(void*) {
  ++g_host_calls;
  g_host_saw = g_pinned[kN - 1];
}

int main() {
  const int blocks = kN / kThreads;
  int *a = nullptr, *b = nullptr, *sum = nullptr, *pinned = nullptr;
  EXPECT_CUDA(cudaMalloc(&a, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&b, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&sum, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&pinned, kN * sizeof(int)), cudaSuccess);
  g_pinned = pinned;
  cudaStream_t origin, left, right;
  EXPECT_CUDA(cudaStreamCreate(&origin), cudaSuccess);
  EXPECT_CUDA(cudaStreamCreate(&left), cudaSuccess);
  EXPECT_CUDA(cudaStreamCreate(&right), cudaSuccess);
  cudaEvent_t fork, left_done, right_done, external;
  EXPECT_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
  EXPECT_CUDA(cudaEventCreateWithFlags(&left_done, cudaEventDisableTiming), cudaSuccess);
  EXPECT_CUDA(cudaEventCreateWithFlags(&right_done, cudaEventDisableTiming), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&external), cudaSuccess);

  // A small graph to launch into the capture (a child graph node there).
  cudaGraph_t doubling = nullptr;
  cudaGraphExec_t doubling_exec = nullptr;
  {
    cudaStream_t s;
    EXPECT_CUDA(cudaStreamCreate(&s), cudaSuccess);
    EXPECT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    twice<<<blocks, kThreads, 0, s>>>(sum, kN);
    EXPECT_CUDA(cudaStreamEndCapture(s, &doubling), cudaSuccess);
    EXPECT_CUDA(cudaGraphInstantiate(&doubling_exec, doubling, 0), cudaSuccess);
    EXPECT_CUDA(cudaStreamDestroy(s), cudaSuccess);
  }

  // ---- Fork / join capture.
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_CUDA(cudaStreamIsCapturing(origin, &status), cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusActive, "origin not capturing");
  EXPECT_CUDA(cudaEventRecord(fork, origin), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(left, fork, 0), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(right, fork, 0), cudaSuccess);
  cudaStream_t extra;  // forked, then destroyed during the capture: it leaves the capture
  EXPECT_CUDA(cudaStreamCreate(&extra), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(extra, fork, 0), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(extra), cudaSuccess);
  EXPECT_CUDA(cudaStreamIsCapturing(left, &status), cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusActive, "forked stream not capturing");
  int* temp = nullptr;
  EXPECT_CUDA(cudaMallocAsync(&temp, kN * sizeof(int), left), cudaSuccess);  // a memory allocation node
  fill<<<blocks, kThreads, 0, left>>>(temp, 10, kN);
  EXPECT_CUDA(cudaMemcpyAsync(a, temp, kN * sizeof(int), cudaMemcpyDeviceToDevice, left), cudaSuccess);
  EXPECT_CUDA(cudaFreeAsync(temp, left), cudaSuccess);  // a memory free node
  EXPECT_CUDA(cudaEventRecord(left_done, left), cudaSuccess);
  EXPECT_CUDA(cudaMemsetAsync(b, 0, kN * sizeof(int), right), cudaSuccess);
  fill<<<blocks, kThreads, 0, right>>>(b, 1000, kN);
  EXPECT_CUDA(cudaEventRecord(right_done, right), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(origin, left_done, 0), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(origin, right_done, 0), cudaSuccess);
  EXPECT_CUDA(cudaEventQuery(left_done), cudaErrorCapturedEvent);  // recorded in the capture: no work to ask about
  unsigned long long id = 0;
  cudaGraph_t capturing_graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t dependency_count = 0;
  EXPECT_CUDA(cudaStreamGetCaptureInfo(origin, &status, &id, &capturing_graph, &dependencies, nullptr,
                                       &dependency_count),
              cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusActive && id != 0 && capturing_graph != nullptr && dependency_count == 2,
        "capture info: status %d id %llu deps %zu", status, id, dependency_count);
  add_into<<<blocks, kThreads, 0, origin>>>(sum, a, b, kN);
  EXPECT_CUDA(cudaGraphLaunch(doubling_exec, origin), cudaSuccess);  // a child graph node
  EXPECT_CUDA(cudaMemcpyAsync(pinned, sum, kN * sizeof(int), cudaMemcpyDeviceToHost, origin), cudaSuccess);
  EXPECT_CUDA(cudaLaunchHostFunc(origin, after_copy, nullptr), cudaSuccess);
  EXPECT_CUDA(cudaEventRecordWithFlags(external, origin, cudaEventRecordExternal), cudaSuccess);  // a node
  cudaGraph_t graph = nullptr;
  EXPECT_CUDA(cudaStreamEndCapture(origin, &graph), cudaSuccess);
  EXPECT_CUDA(cudaStreamIsCapturing(left, &status), cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusNone, "forked stream still capturing after the end");
  CHECK_COUNTED(g_host_calls == 0, "captured work ran during capture");

  size_t count = 0;
  EXPECT_CUDA(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 11, "%zu captured nodes", count);  // alloc fill copy free, memset fill, add graph copy host record
  std::vector<cudaGraphNode_t> nodes(count);
  EXPECT_CUDA(cudaGraphGetNodes(graph, nodes.data(), &count), cudaSuccess);
  int kinds[16] = {};
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    EXPECT_CUDA(cudaGraphNodeGetType(node, &type), cudaSuccess);
    if (type < 16) ++kinds[type];
  }
  CHECK_COUNTED(kinds[cudaGraphNodeTypeKernel] == 3 && kinds[cudaGraphNodeTypeMemcpy] == 2 && kinds[cudaGraphNodeTypeMemset] == 1 &&
            kinds[cudaGraphNodeTypeHost] == 1 && kinds[cudaGraphNodeTypeGraph] == 1 &&
            kinds[cudaGraphNodeTypeMemAlloc] == 1 && kinds[cudaGraphNodeTypeMemFree] == 1 &&
            kinds[cudaGraphNodeTypeEventRecord] == 1,
        "captured node types");
  size_t roots = 0;
  EXPECT_CUDA(cudaGraphGetRootNodes(graph, nullptr, &roots), cudaSuccess);
  CHECK_COUNTED(roots == 2, "%zu roots (the two forked branches)", roots);

  cudaGraphExec_t exec = nullptr;
  EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int launch = 1; launch <= 3; ++launch) {
    EXPECT_CUDA(cudaGraphLaunch(exec, origin), cudaSuccess);
    EXPECT_CUDA(cudaEventSynchronize(external), cudaSuccess);  // recorded by the graph's event record node
    EXPECT_CUDA(cudaStreamSynchronize(origin), cudaSuccess);
    bool ok = true;
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == 2 * ((10 + i) + (1000 + i));
    CHECK_COUNTED(ok, "captured graph result, launch %d: pinned[3] = %d", launch, pinned[3]);
    CHECK_COUNTED(g_host_calls == launch && g_host_saw == 2 * (1010 + 2 * (kN - 1)), "host node, launch %d", launch);
  }

  // ---- What a capture forbids.
  void* p = nullptr;
  // Global mode: a synchronous allocation invalidates the capture.
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  twice<<<blocks, kThreads, 0, origin>>>(sum, kN);
  EXPECT_CUDA(cudaMalloc(&p, 256), cudaErrorStreamCaptureUnsupported);
  EXPECT_CUDA(cudaStreamIsCapturing(origin, &status), cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusInvalidated, "capture not invalidated by cudaMalloc");
  EXPECT_CUDA(cudaMemsetAsync(sum, 0, 16, origin), cudaErrorStreamCaptureInvalidated);
  cudaGraph_t invalid = reinterpret_cast<cudaGraph_t>(1);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureInvalidated);
  CHECK_COUNTED(invalid == nullptr, "an invalidated capture returned a graph");
  // Relaxed mode: the same allocation is allowed.
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&p, 256), cudaSuccess);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(invalid), cudaSuccess);
  EXPECT_CUDA(cudaFree(p), cudaSuccess);
  // Synchronizing a capturing stream; the legacy stream joining implicitly; device synchronize.
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(origin), cudaErrorStreamCaptureUnsupported);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureInvalidated);
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  twice<<<blocks, kThreads>>>(sum, kN);  // the legacy stream
  EXPECT_CUDA(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureInvalidated);
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureInvalidated);
  // A fork never joined back.
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(fork, origin), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(left, fork, 0), cudaSuccess);
  twice<<<blocks, kThreads, 0, left>>>(sum, kN);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureUnjoined);
  EXPECT_CUDA(cudaStreamIsCapturing(left, &status), cudaSuccess);
  CHECK_COUNTED(status == cudaStreamCaptureStatusNone, "the unjoined stream still captures");
  // Ending on a stream that is not capturing, or capturing the legacy stream.
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorIllegalState);
  EXPECT_CUDA(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);

  // Threads: another thread's cudaMalloc during a global-mode capture is refused (its mode is
  // global); with its mode thread-local it is allowed.
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaError_t other_thread = cudaSuccess;
  std::thread([&] { other_thread = cudaMalloc(&p, 256); }).join();
  CHECK_COUNTED(other_thread == cudaErrorStreamCaptureUnsupported, "other thread's cudaMalloc: %s",
        cudaGetErrorName(other_thread));
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaErrorStreamCaptureInvalidated);
  EXPECT_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
  std::thread([&] {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
    cudaThreadExchangeStreamCaptureMode(&mode);
    other_thread = cudaMalloc(&p, 256);
  }).join();
  CHECK_COUNTED(other_thread == cudaSuccess, "thread-local thread's cudaMalloc: %s", cudaGetErrorName(other_thread));
  twice<<<blocks, kThreads, 0, origin>>>(sum, kN);
  EXPECT_CUDA(cudaStreamEndCapture(origin, &invalid), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(invalid), cudaSuccess);
  EXPECT_CUDA(cudaFree(p), cudaSuccess);

  // A capturing stream destroyed: its capture ends with it (nothing is forbidden afterwards).
  cudaStream_t doomed;
  EXPECT_CUDA(cudaStreamCreate(&doomed), cudaSuccess);
  EXPECT_CUDA(cudaStreamBeginCapture(doomed, cudaStreamCaptureModeGlobal), cudaSuccess);
  twice<<<blocks, kThreads, 0, doomed>>>(sum, kN);
  EXPECT_CUDA(cudaStreamDestroy(doomed), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&p, 256), cudaSuccess);
  EXPECT_CUDA(cudaFree(p), cudaSuccess);

  // Nothing captured ran: the last launch's result is still there.
  EXPECT_CUDA(cudaMemcpy(pinned, sum, kN * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  {
    bool ok = true;
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == 2 * ((10 + i) + (1000 + i));
    CHECK_COUNTED(ok, "work captured by invalid captures ran: pinned[3] = %d", pinned[3]);
  }
  EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphExecDestroy(doubling_exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(doubling), cudaSuccess);
  if (g_failures != 0) return 1;
  std::printf("PASS graphs_capture\n");
  return 0;
}
