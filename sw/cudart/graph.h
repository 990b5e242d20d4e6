// CUDA graphs of libcudart.so.13: graphs built node by node or captured from streams,
// instantiated into executable graphs and launched into a stream.
//
// A launch replays the executable graph's nodes in a topological order (ties broken by creation
// order, so a launch is deterministic): kernels are submitted as graph kernel nodes (the device
// applies gpu.launch.graph_latency), copies and memsets as the runtime's own commands, host nodes
// as host functions in stream order, event nodes as event records and waits. A chain runs on the
// launching stream; a graph with independent branches runs on up to four lanes (streams of the
// executable graph) ordered by events, after the launching stream's earlier work and before its
// later work, so branches overlap on the device. Nested graphs (child graphs, conditional bodies)
// run in order on their node's lane.
//
// Conditional nodes: a handle is a 4-byte cell of device memory whose address is the handle's
// value; device code sets it with cudaGraphSetConditional (a store to that address). The launch
// evaluates a conditional node by reading the cell back once every node before it in the launch
// order has completed (a 4-byte device-to-host copy, timed like any copy), so cudaGraphLaunch
// returns only after the last conditional node of the graph has been evaluated.
//
// Graph memory (memory allocation nodes, cudaMallocAsync captured): the memory is allocated when
// the node is created, keeps its address for the node's lifetime (as CUDA's does) and is freed
// with the last graph, clone or executable graph that refers to it; free nodes, and cudaFree /
// cudaFreeAsync of it outside the graph, leave it allocated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace gpuvp::cudart {

struct Function;
struct Stream;
struct Event;
struct Graph;
struct GraphState;
class Runtime;

// Device memory of a memory allocation node, shared by the graph's clones and instantiations.
struct GraphAllocation {
  GraphState* state = nullptr;
  void* address = nullptr;
  std::size_t bytes = 0;
  bool graph_memory = true;  // counted as graph memory (false: a conditional handle's cell)
  GraphAllocation() = default;
  GraphAllocation(const GraphAllocation&) = delete;
  GraphAllocation& operator=(const GraphAllocation&) = delete;
  ~GraphAllocation();  // frees the memory (not while the runtime shuts down)
};

struct GraphNode {
  Graph* graph = nullptr;  // the graph it belongs to
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  uint64_t order = 0;  // creation order in its graph: the tie-break of the launch order
  std::vector<GraphNode*> dependencies;  // in the order added
  std::vector<GraphNode*> dependents;
  bool enabled = true;  // cudaGraphNodeSetEnabled (executable graphs)

  // Kernel: the function, its configuration and its arguments packed in the PTX .param layout.
  const void* func = nullptr;
  Function* function = nullptr;
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<uint8_t> arguments;
  std::vector<void*> argument_pointers;  // into `arguments`, one per parameter (kernelParams)
  // Memcpy (1D copies are a cudaMemcpy3DParms of one row).
  cudaMemcpy3DParms copy{};
  // Memset.
  cudaMemsetParams memset{};
  // Host.
  cudaHostFn_t host_fn = nullptr;
  void* user_data = nullptr;
  // Event record / wait.
  cudaEvent_t event = nullptr;
  // Child graph (bodies[0]) and conditional bodies.
  std::vector<std::unique_ptr<Graph>> bodies;
  // Memory allocation / free.
  std::shared_ptr<GraphAllocation> allocation;
  void* free_address = nullptr;
  cudaMemAllocNodeParams alloc_params{};
  // Conditional.
  cudaGraphConditionalHandle handle = 0;
  cudaGraphConditionalNodeType condition = cudaGraphCondTypeIf;
  std::vector<cudaGraph_t> body_handles;  // phGraph_out: CUDA's array of the bodies, kept with the node
};

struct ConditionalHandle {
  std::shared_ptr<GraphAllocation> cell;
  uint64_t address = 0;  // the cell's device address: the handle's value
  unsigned default_value = 0;
  bool assign_default = false;  // cudaGraphCondAssignDefault: reset at each launch
};

struct Graph {
  std::vector<std::unique_ptr<GraphNode>> nodes;  // in creation order
  uint64_t next_order = 0;
  GraphNode* owner = nullptr;  // the child-graph or conditional node holding it (null: the program's)
  std::vector<std::shared_ptr<ConditionalHandle>> handles;  // created for this graph
  std::map<const GraphNode*, GraphNode*> originals;  // cudaGraphClone: original node -> this graph's
};

struct GraphExec {
  std::unique_ptr<Graph> graph;  // a clone of the instantiated graph
  std::map<const GraphNode*, GraphNode*> node_of;  // nodes of the instantiated graph -> the clone's
  unsigned long long flags = 0;
  // Independent branches run on lanes: non-blocking streams of the executable graph, ordered by
  // events (made on the first launch that needs them; GraphAccess::release_lanes).
  std::vector<cudaStream_t> lanes;
  std::vector<cudaEvent_t> lane_done;
  std::map<const GraphNode*, cudaEvent_t> node_done;  // nodes with a dependent on another lane
  cudaEvent_t start = nullptr;                        // recorded on the launching stream
};

struct CaptureSequence {
  std::unique_ptr<Graph> graph;  // what is captured (null when capturing into the program's graph)
  Graph* target = nullptr;       // the graph nodes are added to
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  unsigned long long id = 0;
  std::thread::id thread;
  Stream* origin = nullptr;
  bool invalidated = false;
};

struct StreamCapture {
  CaptureSequence* sequence = nullptr;
  std::vector<GraphNode*> dependencies;     // what the stream's next captured work depends on
  std::vector<cudaGraphNode_t> reported;    // cudaStreamGetCaptureInfo's array (valid until the next call)
  std::vector<cudaGraphEdgeData> reported_edges;
};

struct CapturedEvent {
  CaptureSequence* sequence = nullptr;
  std::vector<GraphNode*> dependencies;  // the recording stream's dependencies at the record
};

// Everything the runtime keeps about graphs; owned by the Runtime.
struct GraphState {
  bool closing = false;  // first member: still valid while the others are destroyed
  Runtime* runtime = nullptr;
  explicit GraphState(Runtime* owner) : runtime(owner) {}
  GraphState(const GraphState&) = delete;
  GraphState& operator=(const GraphState&) = delete;
  ~GraphState() { closing = true; }
  std::map<Graph*, std::unique_ptr<Graph>> graphs;  // graphs the program owns
  std::set<const Graph*> live_graphs;               // those and every graph nested in them
  std::set<const GraphNode*> live_nodes;            // nodes of live graphs
  std::map<GraphExec*, std::unique_ptr<GraphExec>> execs;
  std::map<uint64_t, std::shared_ptr<ConditionalHandle>> handles;  // by handle value
  std::vector<std::unique_ptr<CaptureSequence>> sequences;          // in progress
  std::map<Stream*, StreamCapture> capturing;
  std::map<Event*, CapturedEvent> captured_events;
  unsigned long long next_capture_id = 1;
  uint64_t graph_memory = 0;       // bytes of live graph allocations
  uint64_t graph_memory_high = 0;  // their high-water mark
  std::set<uint64_t> graph_addresses;  // live graph allocations (cudaFree of one is not a free)
};

struct HostCallback;

// ---- Graph structure (graph.cpp).
// Adds a node of `type` to `graph` after `dependencies` (already checked to be nodes of it) and
// registers it as live.
GraphNode* add_node(GraphState& state, Graph& graph, cudaGraphNodeType type, const std::vector<GraphNode*>& dependencies);
// Removes `node` and its edges from its graph (and what it holds from the live sets).
void remove_node(GraphState& state, GraphNode& node);
// A deep copy of `graph`; `node_of` (optional) receives original -> copy for every node, nested
// graphs' included.
std::unique_ptr<Graph> clone_graph(const Graph& graph, std::map<const GraphNode*, GraphNode*>* node_of);
void adopt(GraphState& state, const Graph& graph);   // registers a graph and everything in it as live
void forget(GraphState& state, const Graph& graph);  // and unregisters
// Kahn's order, ready nodes taken in creation order; false when the graph has a cycle (`order`
// then holds the nodes that precede it).
bool topological_order(const Graph& graph, std::vector<GraphNode*>* order);

// The graph code's access to the runtime (a friend of Runtime): stream capture's entry points,
// which the runtime's stream-ordered calls take while some stream captures, and what the
// exported graph functions (api_graph.cpp) need. Every function runs with the runtime locked.
class GraphAccess {
 public:
  static GraphState& state(Runtime& runtime);
  static Stream* stream_of(Runtime& runtime, cudaStream_t stream);
  static Event* event_of(Runtime& runtime, cudaEvent_t event);

  // ---- Stream capture (graph.cpp).
  // True when work for `stream` is to be captured rather than run: the stream captures, or it is
  // the legacy stream while a blocking stream captures (the capture_* call then refuses it).
  static bool captured(Runtime& runtime, cudaStream_t stream);
  static bool event_captured(Runtime& runtime, Event* event);
  // A potentially unsafe call (allocation, synchronous copy, device synchronization) while some
  // stream captures: by the capture modes' rules, cudaErrorStreamCaptureUnsupported and the
  // captures concerned invalidated, or cudaSuccess.
  static cudaError_t forbids(Runtime& runtime);
  // cudaStreamSynchronize / cudaStreamQuery: refused for a capturing stream (and its capture
  // invalidated), and like forbids() for the legacy stream.
  static cudaError_t forbids_wait(Runtime& runtime, cudaStream_t stream);
  static cudaError_t capture_kernel(Runtime& runtime, Function* function, dim3 grid, dim3 block, void** args,
                                    std::size_t shared, cudaStream_t stream);
  static cudaError_t capture_memcpy(Runtime& runtime, void* dst, const void* src, std::size_t bytes,
                                    cudaMemcpyKind kind, cudaStream_t stream);
  static cudaError_t capture_memset(Runtime& runtime, void* dst, int value, std::size_t bytes, cudaStream_t stream);
  static cudaError_t capture_event_record(Runtime& runtime, cudaEvent_t event, cudaStream_t stream);
  static cudaError_t capture_event_wait(Runtime& runtime, cudaStream_t stream, cudaEvent_t event);
  static cudaError_t capture_host_function(Runtime& runtime, cudaStream_t stream, const HostCallback& callback);
  static cudaError_t capture_malloc(Runtime& runtime, void** ptr, std::size_t bytes, cudaStream_t stream);
  static cudaError_t capture_free(Runtime& runtime, void* ptr, cudaStream_t stream);
  static cudaError_t capture_graph(Runtime& runtime, const Graph& graph, cudaStream_t stream);  // cudaGraphLaunch
  // cudaEventRecordWithFlags(cudaEventRecordExternal) / cudaStreamWaitEvent(cudaEventWaitExternal):
  // an event record / wait node in a capture; outside one, a plain record (a wait is refused).
  static cudaError_t capture_external_event(Runtime& runtime, cudaStream_t stream, cudaEvent_t event, bool record);
  static cudaError_t begin_capture(Runtime& runtime, cudaStream_t stream, Graph* into, const cudaGraphNode_t* dependencies,
                                   std::size_t count, cudaStreamCaptureMode mode);
  static cudaError_t end_capture(Runtime& runtime, cudaStream_t stream, cudaGraph_t* graph);
  static cudaError_t capture_info(Runtime& runtime, cudaStream_t stream, cudaStreamCaptureStatus* status,
                                  unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                                  const cudaGraphEdgeData** edges, std::size_t* count);
  static cudaError_t update_capture_dependencies(Runtime& runtime, cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                 std::size_t count, unsigned flags);
  static cudaStreamCaptureMode& thread_mode();  // cudaThreadExchangeStreamCaptureMode's, per thread
  // A capturing stream is destroyed: it leaves its capture (which ends, its graph discarded, when
  // the stream was the capture's origin).
  static void forget_stream(Runtime& runtime, Stream* stream);
  static void forget_event(Runtime& runtime, Event* event);  // an event is destroyed

  // ---- Graph memory and conditional handles.
  static bool graph_memory(Runtime& runtime, const void* ptr);  // a live graph allocation
  static cudaError_t allocate(Runtime& runtime, std::size_t bytes, std::shared_ptr<GraphAllocation>* allocation);
  static void release(Runtime& runtime, void* address, std::size_t bytes);
  static cudaError_t create_handle(Runtime& runtime, Graph& graph, unsigned default_value, unsigned flags,
                                   cudaGraphConditionalHandle* handle);

  // ---- Nodes and launches.
  // Sets a kernel node's function, configuration and arguments (copied) from the API's form.
  static cudaError_t set_kernel(Runtime& runtime, GraphNode& node, const void* func, dim3 grid, dim3 block,
                                unsigned shared, void** args, void** extra);
  static cudaError_t launch(Runtime& runtime, GraphExec& exec, cudaStream_t stream);
  static void release_lanes(Runtime& runtime, GraphExec& exec);  // before the executable graph goes

 private:
  static void update_active(Runtime& runtime);
  static void end_sequence(Runtime& runtime, CaptureSequence* sequence);  // every stream leaves it
  // Adds a node like `prototype` (its parameters moved) to the capture `stream` belongs to, after
  // the stream's dependencies, and makes it the stream's only dependency.
  static cudaError_t add_captured(Runtime& runtime, cudaStream_t stream, GraphNode& prototype);
  static cudaError_t write_cell(Runtime& runtime, uint64_t address, unsigned value, Stream& stream);
  static cudaError_t read_cell(Runtime& runtime, uint64_t address, Stream& stream, unsigned* value);
  static cudaError_t run_node(Runtime& runtime, const GraphNode& node, cudaStream_t stream);
  static cudaError_t run_graph(Runtime& runtime, const Graph& graph, cudaStream_t stream);  // in order, on `stream`
  static cudaError_t run_parallel(Runtime& runtime, GraphExec& exec, cudaStream_t stream);  // on lanes
  static cudaError_t run_copy(Runtime& runtime, const cudaMemcpy3DParms& copy, cudaStream_t stream);
  static cudaError_t run_memset(Runtime& runtime, const cudaMemsetParams& memset, cudaStream_t stream);
};

// Copies a node's parameters (not its edges, nor its nested graphs).
void copy_params(const GraphNode& from, GraphNode& to);

}  // namespace gpuvp::cudart
