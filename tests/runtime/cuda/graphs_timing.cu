// Graph launches have a lower per-kernel launch overhead than stream launches: the same empty
// kernel (under two names, so the statistics tell them apart) launched kLaunches times in a
// stream and kLaunches times as the nodes of one graph. Prints both simulated times (events);
// the test compares them and the kernels' cycles in the statistics.
#include <cstdlib>

#include "check.cuh"

constexpr int kLaunches = 20;

__global__ void tiny_stream(int* count) {
  if (threadIdx.x == 0) atomicAdd(count, 1);
}

__global__ void tiny_graph(int* count) {
  if (threadIdx.x == 0) atomicAdd(count, 1);
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
  std::printf("PASS graphs_timing\n");
  return 0;
}
