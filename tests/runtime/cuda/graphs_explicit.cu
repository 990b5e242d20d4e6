// CUDA graphs built node by node: kernel, memcpy (1D and pitched 3D parameters), memset (1- and
// 4-byte elements), host, empty, event record / wait, child graph and memory allocation / free
// nodes with dependencies; the structure queries; clone; kernel node parameters; executable
// graph updates; and the errors for bad input. Every result is checked against the CPU.
#include <cstdint>
#include <cstring>
#include <vector>

#include "check.cuh"

constexpr int kN = 1024;
constexpr int kThreads = 128;
constexpr int kBlocks = kN / kThreads;

__global__ void scale(int* p, int factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= factor;
}

__global__ void add(int* p, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += value;
}

__global__ void combine(int* out, const int* a, const int* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] - b[i];
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

// Host nodes record the order they ran in and what the device had produced by then.
struct HostLog {
  int calls = 0;
  int order[8] = {};
  int seen[8] = {};
  const int* pinned = nullptr;  // filled by the memcpy node before the host node
};
HostLog g_log;

void CUDART_CB host_mark(void* data) {
  const int who = static_cast<int>(reinterpret_cast<intptr_t>(data));
  if (g_log.calls < 8) {
    g_log.order[g_log.calls] = who;
    g_log.seen[g_log.calls] = g_log.pinned != nullptr ? g_log.pinned[kN - 1] : -1;
  }
  ++g_log.calls;
}

cudaGraphNode_t kernel_node(cudaGraph_t graph, const std::vector<cudaGraphNode_t>& after, void* func, void** args) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(kBlocks);
  p.blockDim = dim3(kThreads);
  p.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  EXPECT_CUDA(cudaGraphAddKernelNode(&node, graph, after.data(), after.size(), &p), cudaSuccess);
  return node;
}

int main() {
  std::vector<int> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = i - 100;
  int *a = nullptr, *b = nullptr, *c = nullptr, *pinned = nullptr;
  EXPECT_CUDA(cudaMalloc(&a, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&b, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&c, kN * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&pinned, kN * sizeof(int)), cudaSuccess);
  g_log.pinned = pinned;
  cudaStream_t stream = nullptr;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);

  // ---- A diamond: copy in -> (a *= 3 | b = copy of a, b += 7) -> c = a - b -> copy out -> host.
  cudaGraph_t graph = nullptr;
  EXPECT_CUDA(cudaGraphCreate(&graph, 0), cudaSuccess);
  cudaGraphNode_t copy_in = nullptr, copy_ab = nullptr, copy_out = nullptr, host_node = nullptr, empty = nullptr;
  EXPECT_CUDA(cudaGraphAddMemcpyNode1D(&copy_in, graph, nullptr, 0, a, host.data(), kN * sizeof(int),
                                       cudaMemcpyHostToDevice),
              cudaSuccess);
  EXPECT_CUDA(cudaGraphAddMemcpyNode1D(&copy_ab, graph, &copy_in, 1, b, a, kN * sizeof(int), cudaMemcpyDeviceToDevice),
              cudaSuccess);
  int factor = 3, addend = 7, n = kN;
  void* scale_args[] = {&a, &factor, &n};
  void* add_args[] = {&b, &addend, &n};
  void* combine_args[] = {&c, &a, &b, &n};
  cudaGraphNode_t scale_node = kernel_node(graph, {copy_ab}, reinterpret_cast<void*>(scale), scale_args);
  cudaGraphNode_t add_node = kernel_node(graph, {copy_ab}, reinterpret_cast<void*>(add), add_args);
  factor = 1000;  // the node copied the arguments when it was added
  EXPECT_CUDA(cudaGraphAddEmptyNode(&empty, graph, std::vector<cudaGraphNode_t>{scale_node, add_node}.data(), 2),
              cudaSuccess);
  cudaGraphNode_t combine_node = kernel_node(graph, {empty}, reinterpret_cast<void*>(combine), combine_args);
  EXPECT_CUDA(cudaGraphAddMemcpyNode1D(&copy_out, graph, &combine_node, 1, pinned, c, kN * sizeof(int),
                                       cudaMemcpyDeviceToHost),
              cudaSuccess);
  cudaHostNodeParams host_params{host_mark, reinterpret_cast<void*>(intptr_t{1})};
  EXPECT_CUDA(cudaGraphAddHostNode(&host_node, graph, &copy_out, 1, &host_params), cudaSuccess);

  // Structure queries.
  size_t count = 0;
  EXPECT_CUDA(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 8, "%zu nodes", count);
  EXPECT_CUDA(cudaGraphGetRootNodes(graph, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 1, "%zu roots", count);
  cudaGraphNode_t root = nullptr;
  count = 1;
  EXPECT_CUDA(cudaGraphGetRootNodes(graph, &root, &count), cudaSuccess);
  CHECK_COUNTED(root == copy_in, "root is not the first copy");
  EXPECT_CUDA(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 8, "%zu edges", count);
  cudaGraphNodeType type;
  EXPECT_CUDA(cudaGraphNodeGetType(empty, &type), cudaSuccess);
  CHECK_COUNTED(type == cudaGraphNodeTypeEmpty, "type %d", type);
  EXPECT_CUDA(cudaGraphNodeGetType(host_node, &type), cudaSuccess);
  CHECK_COUNTED(type == cudaGraphNodeTypeHost, "type %d", type);
  EXPECT_CUDA(cudaGraphNodeGetDependentNodes(copy_ab, nullptr, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 2, "%zu dependents of the device copy", count);
  cudaGraphNode_t deps[2] = {};
  count = 2;
  EXPECT_CUDA(cudaGraphNodeGetDependencies(empty, deps, nullptr, &count), cudaSuccess);
  CHECK_COUNTED(count == 2 && deps[0] == scale_node && deps[1] == add_node, "dependencies of the empty node");
  cudaKernelNodeParams got{};
  EXPECT_CUDA(cudaGraphKernelNodeGetParams(scale_node, &got), cudaSuccess);
  CHECK_COUNTED(got.func == reinterpret_cast<void*>(scale) && got.gridDim.x == kBlocks && got.blockDim.x == kThreads &&
            *static_cast<int*>(got.kernelParams[1]) == 3,
        "kernel node parameters read back");

  cudaGraphExec_t exec = nullptr;
  EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int launch = 0; launch < 2; ++launch) {
    std::memset(pinned, 0, kN * sizeof(int));
    EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
    EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
    bool ok = true;
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == host[i] * 3 - (host[i] + 7);
    CHECK_COUNTED(ok, "diamond result, launch %d (pinned[5] = %d)", launch, pinned[5]);
  }
  CHECK_COUNTED(g_log.calls == 2 && g_log.seen[0] == host[kN - 1] * 2 - 7 && g_log.seen[1] == host[kN - 1] * 2 - 7,
        "host node ran after the copy before it (%d calls, saw %d)", g_log.calls, g_log.seen[0]);

  // ---- Executable graph setters: the kernel node's factor for the next launches.
  int new_factor = 5;
  void* new_scale_args[] = {&a, &new_factor, &n};
  cudaKernelNodeParams changed = got;
  changed.kernelParams = new_scale_args;
  EXPECT_CUDA(cudaGraphExecKernelNodeSetParams(exec, scale_node, &changed), cudaSuccess);
  EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  {
    bool ok = true;
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == host[i] * 5 - (host[i] + 7);
    CHECK_COUNTED(ok, "cudaGraphExecKernelNodeSetParams took effect (pinned[5] = %d)", pinned[5]);
  }
  // The graph itself is unchanged: a new instantiation scales by 3 again.
  EXPECT_CUDA(cudaGraphKernelNodeGetParams(scale_node, &got), cudaSuccess);
  CHECK_COUNTED(*static_cast<int*>(got.kernelParams[1]) == 3, "the graph's node changed with the executable graph");

  // Disabled node: the add kernel skipped.
  EXPECT_CUDA(cudaGraphNodeSetEnabled(exec, add_node, 0), cudaSuccess);
  unsigned enabled = 1;
  EXPECT_CUDA(cudaGraphNodeGetEnabled(exec, add_node, &enabled), cudaSuccess);
  CHECK_COUNTED(enabled == 0, "node still enabled");
  EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  {
    bool ok = true;
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == host[i] * 5 - host[i];
    CHECK_COUNTED(ok, "disabled node skipped (pinned[5] = %d)", pinned[5]);
  }
  EXPECT_CUDA(cudaGraphNodeSetEnabled(exec, add_node, 1), cudaSuccess);

  // ---- cudaGraphExecUpdate: same topology, other parameters.
  cudaGraph_t clone = nullptr;
  EXPECT_CUDA(cudaGraphClone(&clone, graph), cudaSuccess);
  cudaGraphNode_t cloned_add = nullptr;
  EXPECT_CUDA(cudaGraphNodeFindInClone(&cloned_add, add_node, clone), cudaSuccess);
  int addend_11 = 11;
  void* add11_args[] = {&b, &addend_11, &n};
  cudaKernelNodeParams add_params{};
  EXPECT_CUDA(cudaGraphKernelNodeGetParams(cloned_add, &add_params), cudaSuccess);
  add_params.kernelParams = add11_args;
  EXPECT_CUDA(cudaGraphKernelNodeSetParams(cloned_add, &add_params), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  EXPECT_CUDA(cudaGraphExecUpdate(exec, clone, &info), cudaSuccess);
  CHECK_COUNTED(info.result == cudaGraphExecUpdateSuccess, "update result %d", info.result);
  EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  {
    bool ok = true;  // the update took the clone's parameters: factor 3 again, addend 11
    for (int i = 0; i < kN; ++i) ok &= pinned[i] == host[i] * 3 - (host[i] + 11);
    CHECK_COUNTED(ok, "cudaGraphExecUpdate took effect (pinned[5] = %d)", pinned[5]);
  }
  // A topology change is refused and says why.
  cudaGraphNode_t extra = nullptr;
  EXPECT_CUDA(cudaGraphAddEmptyNode(&extra, clone, nullptr, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphExecUpdate(exec, clone, &info), cudaErrorGraphExecUpdateFailure);
  CHECK_COUNTED(info.result == cudaGraphExecUpdateErrorTopologyChanged, "update result %d", info.result);
  EXPECT_CUDA(cudaGraphDestroyNode(extra), cudaSuccess);
  EXPECT_CUDA(cudaGraphNodeGetType(extra, &type), cudaErrorInvalidValue);  // destroyed node
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

  // ---- Memset (wide elements), pitched copy, child graph, event nodes, graph memory.
  cudaGraph_t second = nullptr, child = nullptr;
  EXPECT_CUDA(cudaGraphCreate(&second, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphCreate(&child, 0), cudaSuccess);
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location.type = cudaMemLocationTypeDevice;
  alloc.poolProps.location.id = 0;
  alloc.bytesize = kN * sizeof(int);
  cudaGraphNode_t alloc_node = nullptr, memset_node = nullptr, child_node = nullptr, pitched = nullptr,
                  free_node = nullptr, record = nullptr, wait = nullptr;
  EXPECT_CUDA(cudaGraphAddMemAllocNode(&alloc_node, second, nullptr, 0, &alloc), cudaSuccess);
  int* scratch = static_cast<int*>(alloc.dptr);
  CHECK_COUNTED(scratch != nullptr, "no graph allocation address");
  uint64_t graph_memory = 0;
  EXPECT_CUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &graph_memory), cudaSuccess);
  CHECK_COUNTED(graph_memory >= kN * sizeof(int), "graph memory %llu", static_cast<unsigned long long>(graph_memory));
  cudaMemsetParams memset_params{};
  memset_params.dst = scratch;
  memset_params.value = 0x01020304;
  memset_params.elementSize = 4;
  memset_params.width = kN;
  memset_params.height = 1;
  EXPECT_CUDA(cudaGraphAddMemsetNode(&memset_node, second, &alloc_node, 1, &memset_params), cudaSuccess);
  int two = 2;
  void* child_args[] = {&scratch, &two, &n};
  kernel_node(child, {}, reinterpret_cast<void*>(scale), child_args);
  EXPECT_CUDA(cudaGraphAddChildGraphNode(&child_node, second, &memset_node, 1, child), cudaSuccess);
  // Rows 0..7 of a 32 x 32 int matrix, pitched 128 bytes, into a 16-int-wide block (first 16 columns).
  int* block = nullptr;
  EXPECT_CUDA(cudaMallocHost(&block, 8 * 16 * sizeof(int)), cudaSuccess);
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(scratch, 32 * sizeof(int), 32, 32);
  copy.dstPtr = make_cudaPitchedPtr(block, 16 * sizeof(int), 16, 8);
  copy.srcPos = make_cudaPos(4 * sizeof(int), 1, 0);  // from column 4, row 1
  copy.extent = make_cudaExtent(16 * sizeof(int), 8, 1);
  copy.kind = cudaMemcpyDeviceToHost;
  EXPECT_CUDA(cudaGraphAddMemcpyNode(&pitched, second, &child_node, 1, &copy), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddMemFreeNode(&free_node, second, &pitched, 1, scratch), cudaSuccess);
  cudaEvent_t done = nullptr;
  EXPECT_CUDA(cudaEventCreate(&done), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddEventRecordNode(&record, second, &free_node, 1, done), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddEventWaitNode(&wait, second, &record, 1, done), cudaSuccess);
  cudaGraphExec_t second_exec = nullptr;
  EXPECT_CUDA(cudaGraphInstantiate(&second_exec, second, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphLaunch(second_exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventSynchronize(done), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  {
    bool ok = true;
    for (int i = 0; i < 8 * 16; ++i) ok &= block[i] == 0x01020304 * 2;
    CHECK_COUNTED(ok, "memset 4-byte pattern, child graph, pitched copy: block[0] = %#x", block[0]);
  }

  // ---- Bad input.
  cudaGraphNode_t bad = nullptr;
  EXPECT_CUDA(cudaGraphAddEmptyNode(&bad, second, &copy_in, 1), cudaErrorInvalidValue);  // a node of another graph
  EXPECT_CUDA(cudaGraphAddDependencies(graph, &copy_in, &copy_ab, nullptr, 1), cudaErrorInvalidValue);  // exists
  memset_params.elementSize = 3;
  EXPECT_CUDA(cudaGraphAddMemsetNode(&bad, second, nullptr, 0, &memset_params), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGraphAddKernelNode(&bad, second, nullptr, 0, nullptr), cudaErrorInvalidValue);
  cudaKernelNodeParams not_a_kernel{};
  not_a_kernel.func = reinterpret_cast<void*>(host_mark);
  not_a_kernel.gridDim = dim3(1);
  not_a_kernel.blockDim = dim3(1);
  EXPECT_CUDA(cudaGraphAddKernelNode(&bad, second, nullptr, 0, &not_a_kernel), cudaErrorInvalidDeviceFunction);
  // A cycle: instantiation fails and names a node on it.
  cudaGraph_t cyclic = nullptr;
  cudaGraphNode_t x = nullptr, y = nullptr;
  EXPECT_CUDA(cudaGraphCreate(&cyclic, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddEmptyNode(&x, cyclic, nullptr, 0), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddEmptyNode(&y, cyclic, &x, 1), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddDependencies(cyclic, &y, &x, nullptr, 1), cudaSuccess);
  cudaGraphInstantiateParams instantiate{};
  cudaGraphExec_t never = nullptr;
  EXPECT_CUDA(cudaGraphInstantiateWithParams(&never, cyclic, &instantiate), cudaErrorInvalidValue);
  CHECK_COUNTED(instantiate.result_out == cudaGraphInstantiateInvalidStructure, "instantiate result %d", instantiate.result_out);
  CHECK_COUNTED(instantiate.errNode_out == x || instantiate.errNode_out == y, "no error node for the cycle");
  EXPECT_CUDA(cudaGraphDestroy(cyclic), cudaSuccess);
  EXPECT_CUDA(cudaGraphAddEmptyNode(&bad, cyclic, nullptr, 0), cudaErrorInvalidValue);  // destroyed graph
  // A destroyed executable graph.
  EXPECT_CUDA(cudaGraphExecDestroy(second_exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphLaunch(second_exec, stream), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGraphExecDestroy(second_exec), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
  // The first executable graph still works after all that.
  EXPECT_CUDA(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);

  EXPECT_CUDA(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(clone), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(second), cudaSuccess);
  EXPECT_CUDA(cudaGraphDestroy(child), cudaSuccess);
  EXPECT_CUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &graph_memory), cudaSuccess);
  CHECK_COUNTED(graph_memory == 0, "graph memory %llu after every graph is gone", static_cast<unsigned long long>(graph_memory));
  EXPECT_CUDA(cudaEventDestroy(done), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  if (g_failures != 0) return 1;
  std::printf("PASS graphs_explicit\n");
  return 0;
}
