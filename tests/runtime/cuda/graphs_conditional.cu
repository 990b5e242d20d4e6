// Conditional nodes: a WHILE loop whose body counts down and sets the condition from device code
// (cudaGraphSetConditional) with a handle reset to its default at each launch; an IF/ELSE whose
// bodies are filled by node calls and by capturing into the body graph; a SWITCH. Added through
// the generic cudaGraphAddNode. Results checked against the CPU.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "check.cuh"

constexpr int kN = 512;

__global__ void set_value(int* p, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *p = value;
}

__global__ void accumulate(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

// One loop iteration's condition: continue while the counter stays positive.
__global__ void countdown(int* counter, cudaGraphConditionalHandle handle) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const int left = --*counter;
    cudaGraphSetConditional(handle, left > 0 ? 1u : 0u);
  }
}

__global__ void choose(const int* selector, cudaGraphConditionalHandle handle) {
  if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(handle, static_cast<unsigned>(*selector));
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

cudaGraphNode_t add_kernel(cudaGraph_t graph, const std::vector<cudaGraphNode_t>& after, void* func, void** args,
                           unsigned blocks, unsigned threads) {
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeKernel;
  params.kernel.func = func;
  params.kernel.gridDim = dim3(blocks);
  params.kernel.blockDim = dim3(threads);
  params.kernel.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  EXPECT_CUDA(cudaGraphAddNode(&node, graph, after.data(), nullptr, after.size(), &params), cudaSuccess);
  return node;
}

// A conditional node after `after`; returns its body graphs (CUDA's array, phGraph_out).
std::vector<cudaGraph_t> add_conditional(cudaGraph_t graph, cudaGraphNode_t after, cudaGraphConditionalHandle handle,
                                         cudaGraphConditionalNodeType type, unsigned size) {
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = size;
  cudaGraphNode_t node = nullptr;
  EXPECT_CUDA(cudaGraphAddNode(&node, graph, &after, nullptr, 1, &params), cudaSuccess);
  CHECK_COUNTED(params.conditional.phGraph_out != nullptr, "no array of body graphs");
  if (params.conditional.phGraph_out == nullptr) std::exit(1);
  std::vector<cudaGraph_t> bodies(params.conditional.phGraph_out, params.conditional.phGraph_out + size);
  for (cudaGraph_t body : bodies) CHECK_COUNTED(body != nullptr, "no body graph");
  return bodies;
}

int read(const int* device) {
  int value = 0;
  EXPECT_CUDA(cudaMemcpy(&value, device, sizeof value, cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

int main() {
  int *data = nullptr, *counter = nullptr, *selector = nullptr, *out = nullptr;
  EXPECT_CUDA(cudaMalloc(&data, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&counter, sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&selector, sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&out, sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(data, 0, kN * sizeof(int)), cudaSuccess);
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  int n = kN;

  // ---- WHILE: counter = 5; while (condition) { data += i; condition = --counter > 0 }.
  {
    cudaGraph_t graph;
    EXPECT_CUDA(cudaGraphCreate(&graph, 0), cudaSuccess);
    cudaGraphConditionalHandle handle = 0;
    EXPECT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault), cudaSuccess);
    int five = 5;
    void* init_args[] = {&counter, &five};
    cudaGraphNode_t init = add_kernel(graph, {}, reinterpret_cast<void*>(set_value), init_args, 1, 32);
    std::vector<cudaGraph_t> body = add_conditional(graph, init, handle, cudaGraphCondTypeWhile, 1);
    void* accumulate_args[] = {&data, &n};
    void* countdown_args[] = {&counter, &handle};
    cudaGraphNode_t step = add_kernel(body[0], {}, reinterpret_cast<void*>(accumulate), accumulate_args, kN / 128, 128);
    add_kernel(body[0], {step}, reinterpret_cast<void*>(countdown), countdown_args, 1, 32);
    cudaGraphExec_t exec;
    EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int launch = 1; launch <= 2; ++launch) {  // the handle starts at 1 again each launch
      EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
      EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
      std::vector<int> host(kN);
      EXPECT_CUDA(cudaMemcpy(host.data(), data, kN * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
      bool ok = true;
      for (int i = 0; i < kN; ++i) ok &= host[i] == 5 * launch * i;
      CHECK_COUNTED(ok, "WHILE loop, launch %d: data[1] = %d (expected %d)", launch, host[1], 5 * launch);
      CHECK_COUNTED(read(counter) == 0, "WHILE loop counter %d", read(counter));
    }
    EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
  }

  // ---- IF / ELSE: out = selector ? 111 : 222. The ELSE body is captured into its graph.
  {
    cudaGraph_t graph;
    EXPECT_CUDA(cudaGraphCreate(&graph, 0), cudaSuccess);
    cudaGraphConditionalHandle handle = 0;
    EXPECT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), cudaSuccess);
    void* choose_args[] = {&selector, &handle};
    cudaGraphNode_t decide = add_kernel(graph, {}, reinterpret_cast<void*>(choose), choose_args, 1, 32);
    std::vector<cudaGraph_t> bodies = add_conditional(graph, decide, handle, cudaGraphCondTypeIf, 2);
    int then_value = 111;
    void* then_args[] = {&out, &then_value};
    add_kernel(bodies[0], {}, reinterpret_cast<void*>(set_value), then_args, 1, 32);
    cudaStream_t capture;
    EXPECT_CUDA(cudaStreamCreate(&capture), cudaSuccess);
    EXPECT_CUDA(cudaStreamBeginCaptureToGraph(capture, bodies[1], nullptr, nullptr, 0, cudaStreamCaptureModeGlobal),
                cudaSuccess);
    set_value<<<1, 32, 0, capture>>>(out, 222);
    cudaGraph_t captured = nullptr;
    EXPECT_CUDA(cudaStreamEndCapture(capture, &captured), cudaSuccess);
    CHECK_COUNTED(captured == bodies[1], "capture into the ELSE body returned another graph");
    size_t count = 0;
    EXPECT_CUDA(cudaGraphGetNodes(bodies[1], nullptr, &count), cudaSuccess);
    CHECK_COUNTED(count == 1, "%zu nodes in the ELSE body", count);
    cudaGraphExec_t exec;
    EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int selected : {1, 0, 7}) {
      EXPECT_CUDA(cudaMemcpy(selector, &selected, sizeof selected, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
      EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
      const int expected = selected != 0 ? 111 : 222;
      CHECK_COUNTED(read(out) == expected, "IF/ELSE with selector %d: out %d, expected %d", selected, read(out), expected);
    }
    EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
    EXPECT_CUDA(cudaStreamDestroy(capture), cudaSuccess);
  }

  // ---- SWITCH: out = 10 * selector for selector < 3; otherwise out is left alone.
  {
    cudaGraph_t graph;
    EXPECT_CUDA(cudaGraphCreate(&graph, 0), cudaSuccess);
    cudaGraphConditionalHandle handle = 0;
    EXPECT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), cudaSuccess);
    void* choose_args[] = {&selector, &handle};
    cudaGraphNode_t decide = add_kernel(graph, {}, reinterpret_cast<void*>(choose), choose_args, 1, 32);
    std::vector<cudaGraph_t> bodies = add_conditional(graph, decide, handle, cudaGraphCondTypeSwitch, 3);
    int values[3] = {0, 10, 20};
    for (int k = 0; k < 3; ++k) {
      void* case_args[] = {&out, &values[k]};
      add_kernel(bodies[k], {}, reinterpret_cast<void*>(set_value), case_args, 1, 32);
    }
    cudaGraphExec_t exec;
    EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int selected : {2, 1, 5}) {
      const int before = read(out);
      EXPECT_CUDA(cudaMemcpy(selector, &selected, sizeof selected, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
      EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
      const int expected = selected < 3 ? 10 * selected : before;
      CHECK_COUNTED(read(out) == expected, "SWITCH with selector %d: out %d, expected %d", selected, read(out), expected);
    }
    EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
  }

  // ---- Bad input: an unknown handle, a WHILE with two bodies.
  {
    cudaGraph_t graph;
    EXPECT_CUDA(cudaGraphCreate(&graph, 0), cudaSuccess);
    cudaGraphConditionalHandle handle = 0;
    EXPECT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), cudaSuccess);
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle + 4096;
    params.conditional.type = cudaGraphCondTypeIf;
    params.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    EXPECT_CUDA(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 2;
    EXPECT_CUDA(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
    EXPECT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, 2), cudaErrorInvalidValue);  // unknown flag
    EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
  }
  if (g_failures != 0) return 1;
  std::printf("PASS graphs_conditional\n");
  return 0;
}
