// Graph launches have a lower per-kernel launch overhead than stream launches: the same empty
// kernel (under two names, so the statistics tell them apart) launched kLaunches times in a
// stream and kLaunches times as the nodes of one graph. Prints both simulated times (events);
// the test compares them and the kernels' cycles in the statistics. And independent branches of
// a graph overlap: two one-CTA kernels as two root nodes take less time than one after the other.
#include <cstdlib>

#include "check.cuh"

constexpr int kLaunches = 20;

__global__ void tiny_stream(int* count) {
  if (threadIdx.x == 0) atomicAdd(count, 1);
}

__global__ void tiny_graph(int* count) {
  if (threadIdx.x == 0) atomicAdd(count, 1);
}

__global__ void busy(int* out, int rounds) {
  unsigned v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) v = v * 3u + 1u;
  if (threadIdx.x == 0) *out = static_cast<int>(v);
}

// Simulated time of `launch` on `stream`, in ms.
template <typename Launch>
float timed(cudaStream_t stream, Launch&& launch) {
  cudaEvent_t start, end;
  EXPECT_CUDA(cudaEventCreate(&start), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&end), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(start, stream), cudaSuccess);
  launch();
  EXPECT_CUDA(cudaEventRecord(end, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventSynchronize(end), cudaSuccess);
  float ms = 0;
  EXPECT_CUDA(cudaEventElapsedTime(&ms, start, end), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(start), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(end), cudaSuccess);
  return ms;
}

int main() {
  int* counts = nullptr;
  EXPECT_CUDA(cudaMalloc(&counts, 2 * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(counts, 0, 2 * sizeof(int)), cudaSuccess);
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  cudaEvent_t start, middle, end;
  EXPECT_CUDA(cudaEventCreate(&start), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&middle), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&end), cudaSuccess);

  // The graph: a chain of kLaunches kernel nodes, captured.
  int* graph_count = counts + 1;
  cudaGraph_t graph;
  EXPECT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int i = 0; i < kLaunches; ++i) tiny_graph<<<1, 32, 0, stream>>>(graph_count);
  EXPECT_CUDA(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec;
  EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphUpload(exec, stream), cudaSuccess);

  EXPECT_CUDA(cudaEventRecord(start, stream), cudaSuccess);
  for (int i = 0; i < kLaunches; ++i) tiny_stream<<<1, 32, 0, stream>>>(counts);
  EXPECT_CUDA(cudaEventRecord(middle, stream), cudaSuccess);
  EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(end, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventSynchronize(end), cudaSuccess);
  float stream_ms = 0, graph_ms = 0;
  EXPECT_CUDA(cudaEventElapsedTime(&stream_ms, start, middle), cudaSuccess);
  EXPECT_CUDA(cudaEventElapsedTime(&graph_ms, middle, end), cudaSuccess);
  int host[2] = {};
  EXPECT_CUDA(cudaMemcpy(host, counts, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  if (host[0] != kLaunches || host[1] != kLaunches) {
    std::printf("FAIL: %d stream and %d graph kernels ran, expected %d each\n", host[0], host[1], kLaunches);
    return 1;
  }
  std::printf("stream launches: %.3f us, graph launch: %.3f us for %d kernels\n", stream_ms * 1e3, graph_ms * 1e3,
              kLaunches);
  if (!(graph_ms < stream_ms)) {
    std::printf("FAIL: the graph launch is not faster than the stream launches\n");
    return 1;
  }
  EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);

  // Two independent kernels: one after the other in a stream, then as two root nodes of a graph.
  int* outs = nullptr;
  EXPECT_CUDA(cudaMalloc(&outs, 4 * sizeof(int)), cudaSuccess);
  int rounds = 3000;
  const float serial_ms = timed(stream, [&] {
    busy<<<1, 32, 0, stream>>>(outs, rounds);
    busy<<<1, 32, 0, stream>>>(outs + 1, rounds);
  });
  cudaGraph_t branches;
  EXPECT_CUDA(cudaGraphCreate(&branches, 0), cudaSuccess);
  int* targets[2] = {outs + 2, outs + 3};
  for (int k = 0; k < 2; ++k) {
    void* args[] = {&targets[k], &rounds};
    cudaKernelNodeParams p{};
    p.func = reinterpret_cast<void*>(busy);
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    cudaGraphNode_t node;
    EXPECT_CUDA(cudaGraphAddKernelNode(&node, branches, nullptr, 0, &p), cudaSuccess);
  }
  cudaGraphExec_t branches_exec;
  EXPECT_CUDA(cudaGraphInstantiate(&branches_exec, branches, 0), cudaSuccess);
  const float parallel_ms = timed(stream, [&] { EXPECT_CUDA(cudaGraphLaunch(branches_exec, stream), cudaSuccess); });
  int results[4] = {};
  EXPECT_CUDA(cudaMemcpy(results, outs, sizeof results, cudaMemcpyDeviceToHost), cudaSuccess);
  unsigned expected = 0;
  for (int r = 0; r < rounds; ++r) expected = expected * 3u + 1u;
  for (int k = 0; k < 4; ++k) {
    if (results[k] != static_cast<int>(expected)) {
      std::printf("FAIL: busy kernel %d computed %d, expected %d\n", k, results[k], static_cast<int>(expected));
      return 1;
    }
  }
  std::printf("two independent kernels: %.3f us one after the other, %.3f us as graph branches\n", serial_ms * 1e3,
              parallel_ms * 1e3);
  if (!(parallel_ms < 0.75f * serial_ms)) {
    std::printf("FAIL: the graph's independent branches did not overlap\n");
    return 1;
  }
  EXPECT_CUDA(cudaGraphExecDestroy(branches_exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(branches), cudaSuccess);
  std::printf("PASS graphs_timing\n");
  return 0;
}
