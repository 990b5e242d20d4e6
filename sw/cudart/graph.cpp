#include "sw/cudart/graph.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "sw/cudart/runtime.h"

namespace gpuvp::cudart {
namespace dev = gpuvp::device;

namespace {

template <typename T>
void erase_value(std::vector<T>& values, const T& value) {
  values.erase(std::remove(values.begin(), values.end(), value), values.end());
}

// Points a kernel node's kernelParams at its copied arguments.
void point_arguments(GraphNode& node) {
  node.argument_pointers.clear();
  if (node.function == nullptr) return;
  for (const dev::ParamLayout& p : node.function->params) node.argument_pointers.push_back(node.arguments.data() + p.offset);
}

cudaGraphNode_t handle_of(GraphNode* node) { return reinterpret_cast<cudaGraphNode_t>(node); }

}  // namespace

GraphAllocation::~GraphAllocation() {
  if (state != nullptr && !state->closing && address != nullptr) {
    GraphAccess::release(*state->runtime, address, graph_memory ? bytes : 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Structure.

void copy_params(const GraphNode& from, GraphNode& to) {
  to.type = from.type;
  to.enabled = from.enabled;
  to.func = from.func;
  to.function = from.function;
  to.grid = from.grid;
  to.block = from.block;
  to.shared_bytes = from.shared_bytes;
  to.arguments = from.arguments;
  point_arguments(to);
  to.copy = from.copy;
  to.memset = from.memset;
  to.host_fn = from.host_fn;
  to.user_data = from.user_data;
  to.event = from.event;
  to.allocation = from.allocation;
  to.free_address = from.free_address;
  to.alloc_params = from.alloc_params;
  to.handle = from.handle;
  to.condition = from.condition;
}

GraphNode* add_node(GraphState& state, Graph& graph, cudaGraphNodeType type, const std::vector<GraphNode*>& dependencies) {
  auto node = std::make_unique<GraphNode>();
  node->graph = &graph;
  node->type = type;
  node->order = graph.next_order++;
  node->dependencies = dependencies;
  for (GraphNode* d : dependencies) d->dependents.push_back(node.get());
  GraphNode* added = node.get();
  graph.nodes.push_back(std::move(node));
  state.live_nodes.insert(added);
  return added;
}

void remove_node(GraphState& state, GraphNode& node) {
  for (GraphNode* d : node.dependencies) erase_value(d->dependents, &node);
  for (GraphNode* d : node.dependents) erase_value(d->dependencies, &node);
  for (const auto& body : node.bodies) forget(state, *body);
  state.live_nodes.erase(&node);
  auto& nodes = node.graph->nodes;
  nodes.erase(std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.get() == &node; }));
}

std::unique_ptr<Graph> clone_graph(const Graph& graph, std::map<const GraphNode*, GraphNode*>* node_of) {
  auto copy = std::make_unique<Graph>();
  copy->next_order = graph.next_order;
  copy->handles = graph.handles;
  std::map<const GraphNode*, GraphNode*> local;
  for (const auto& node : graph.nodes) {
    auto n = std::make_unique<GraphNode>();
    copy_params(*node, *n);
    n->graph = copy.get();
    n->order = node->order;
    for (const auto& body : node->bodies) {
      n->bodies.push_back(clone_graph(*body, node_of));
      n->bodies.back()->owner = n.get();
    }
    local[node.get()] = n.get();
    if (node_of != nullptr) (*node_of)[node.get()] = n.get();
    copy->nodes.push_back(std::move(n));
  }
  for (const auto& node : graph.nodes) {
    GraphNode* n = local[node.get()];
    for (GraphNode* d : node->dependencies) n->dependencies.push_back(local[d]);
    for (GraphNode* d : node->dependents) n->dependents.push_back(local[d]);
  }
  return copy;
}

void adopt(GraphState& state, const Graph& graph) {
  state.live_graphs.insert(&graph);
  for (const auto& node : graph.nodes) {
    state.live_nodes.insert(node.get());
    for (const auto& body : node->bodies) adopt(state, *body);
  }
}

void forget(GraphState& state, const Graph& graph) {
  state.live_graphs.erase(&graph);
  for (const auto& node : graph.nodes) {
    state.live_nodes.erase(node.get());
    for (const auto& body : node->bodies) forget(state, *body);
  }
}

bool topological_order(const Graph& graph, std::vector<GraphNode*>* order) {
  order->clear();
  std::map<const GraphNode*, std::size_t> waiting;  // node -> dependencies not yet ordered
  std::set<std::pair<uint64_t, GraphNode*>> ready;  // by creation order
  for (const auto& node : graph.nodes) {
    waiting[node.get()] = node->dependencies.size();
    if (node->dependencies.empty()) ready.insert({node->order, node.get()});
  }
  while (!ready.empty()) {
    GraphNode* next = ready.begin()->second;
    ready.erase(ready.begin());
    order->push_back(next);
    for (GraphNode* d : next->dependents) {
      if (--waiting[d] == 0) ready.insert({d->order, d});
    }
  }
  return order->size() == graph.nodes.size();
}

// ---------------------------------------------------------------------------------------------
// Runtime access.

GraphState& GraphAccess::state(Runtime& runtime) {
  if (runtime.graphs_ == nullptr) runtime.graphs_ = std::make_unique<GraphState>(&runtime);
  return *runtime.graphs_;
}

Stream* GraphAccess::stream_of(Runtime& runtime, cudaStream_t stream) { return runtime.stream_of(stream); }

Event* GraphAccess::event_of(Runtime& runtime, cudaEvent_t event) { return runtime.event_of(event); }

cudaStreamCaptureMode& GraphAccess::thread_mode() {
  thread_local cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  return mode;
}

void GraphAccess::update_active(Runtime& runtime) { runtime.capture_active_ = !state(runtime).capturing.empty(); }

// ---------------------------------------------------------------------------------------------
// Stream capture.

bool GraphAccess::captured(Runtime& runtime, cudaStream_t stream_handle) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return false;
  if (s.capturing.count(stream) != 0) return true;
  if (stream->queue != 0) return false;
  for (const auto& entry : s.capturing) {
    if (entry.first->blocking) return true;  // the legacy stream would wait for a capturing stream
  }
  return false;
}

bool GraphAccess::event_captured(Runtime& runtime, Event* event) {
  return state(runtime).captured_events.count(event) != 0;
}

cudaError_t GraphAccess::forbids(Runtime& runtime) {
  GraphState& s = state(runtime);
  const cudaStreamCaptureMode mode = thread_mode();
  if (mode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  const std::thread::id me = std::this_thread::get_id();
  bool forbidden = false;
  for (const auto& sequence : s.sequences) {
    const bool own = sequence->thread == me && sequence->mode != cudaStreamCaptureModeRelaxed;
    const bool other = mode == cudaStreamCaptureModeGlobal && sequence->thread != me &&
                       sequence->mode == cudaStreamCaptureModeGlobal;
    if (own || other) {
      sequence->invalidated = true;
      forbidden = true;
    }
  }
  return forbidden ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

cudaError_t GraphAccess::forbids_wait(Runtime& runtime, cudaStream_t stream_handle) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  if (const auto it = s.capturing.find(stream); it != s.capturing.end()) {
    it->second.sequence->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  return stream != nullptr && stream->queue == 0 ? forbids(runtime) : cudaSuccess;
}

cudaError_t GraphAccess::add_captured(Runtime& runtime, cudaStream_t stream_handle, GraphNode& prototype) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) {
    // The legacy stream, which would synchronize with the capturing blocking streams.
    for (auto& entry : s.capturing) {
      if (entry.first->blocking) entry.second.sequence->invalidated = true;
    }
    return cudaErrorStreamCaptureImplicit;
  }
  StreamCapture& capture = it->second;
  if (capture.sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  GraphNode* node = add_node(s, *capture.sequence->target, prototype.type, capture.dependencies);
  copy_params(prototype, *node);
  node->bodies = std::move(prototype.bodies);
  for (const auto& body : node->bodies) {
    body->owner = node;
    adopt(s, *body);
  }
  capture.dependencies.assign(1, node);
  return cudaSuccess;
}

cudaError_t GraphAccess::capture_kernel(Runtime& runtime, Function* function, dim3 grid, dim3 block, void** args,
                                        std::size_t shared, cudaStream_t stream) {
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeKernel;
  if (const cudaError_t e = set_kernel(runtime, prototype, function->host_function, grid, block,
                                       static_cast<unsigned>(shared), args, nullptr);
      e != cudaSuccess) {
    return e;
  }
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_memcpy(Runtime& runtime, void* dst, const void* src, std::size_t bytes,
                                        cudaMemcpyKind kind, cudaStream_t stream) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeMemcpy;
  prototype.copy.srcPtr = cudaPitchedPtr{const_cast<void*>(src), bytes, bytes, 1};
  prototype.copy.dstPtr = cudaPitchedPtr{dst, bytes, bytes, 1};
  prototype.copy.extent = cudaExtent{bytes, 1, 1};
  prototype.copy.kind = kind;
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_memset(Runtime& runtime, void* dst, int value, std::size_t bytes, cudaStream_t stream) {
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeMemset;
  prototype.memset.dst = dst;
  prototype.memset.pitch = bytes;
  prototype.memset.value = static_cast<unsigned>(value) & 0xffu;
  prototype.memset.elementSize = 1;
  prototype.memset.width = bytes;
  prototype.memset.height = 1;
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_event_record(Runtime& runtime, cudaEvent_t event, cudaStream_t stream_handle) {
  GraphState& s = state(runtime);
  const auto it = s.capturing.find(runtime.stream_of(stream_handle));
  if (it == s.capturing.end()) {
    GraphNode empty;
    return add_captured(runtime, stream_handle, empty);  // the legacy stream: refused
  }
  if (it->second.sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  // An event recorded in a capture marks a point of the graph for other streams to wait on.
  CapturedEvent& captured_event = s.captured_events[runtime.event_of(event)];
  captured_event.sequence = it->second.sequence;
  captured_event.dependencies = it->second.dependencies;
  return cudaSuccess;
}

cudaError_t GraphAccess::capture_event_wait(Runtime& runtime, cudaStream_t stream_handle, cudaEvent_t event_handle) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  Event* event = runtime.event_of(event_handle);
  const auto recorded = s.captured_events.find(event);
  auto capture = s.capturing.find(stream);
  if (recorded == s.captured_events.end()) {
    if (capture == s.capturing.end()) {
      GraphNode empty;
      return add_captured(runtime, stream_handle, empty);  // the legacy stream: refused
    }
    if (capture->second.sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
    if (event->value == 0) return cudaSuccess;  // never recorded: nothing to wait for
    // Work outside the capture cannot be a dependency of the graph.
    capture->second.sequence->invalidated = true;
    return cudaErrorStreamCaptureIsolation;
  }
  CaptureSequence* sequence = recorded->second.sequence;
  if (sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  if (capture == s.capturing.end()) {
    if (stream->queue == 0) {  // the legacy stream cannot capture
      sequence->invalidated = true;
      return cudaErrorStreamCaptureImplicit;
    }
    // A fork: the stream joins the capture, after the event's point.
    StreamCapture joined;
    joined.sequence = sequence;
    joined.dependencies = recorded->second.dependencies;
    s.capturing[stream] = std::move(joined);
    update_active(runtime);
    return cudaSuccess;
  }
  if (capture->second.sequence != sequence) {
    sequence->invalidated = true;
    capture->second.sequence->invalidated = true;
    return cudaErrorStreamCaptureIsolation;
  }
  // A join: the stream's next work also depends on the event's point.
  std::vector<GraphNode*>& dependencies = capture->second.dependencies;
  for (GraphNode* d : recorded->second.dependencies) {
    if (std::find(dependencies.begin(), dependencies.end(), d) == dependencies.end()) dependencies.push_back(d);
  }
  return cudaSuccess;
}

cudaError_t GraphAccess::capture_host_function(Runtime& runtime, cudaStream_t stream, const HostCallback& callback) {
  if (callback.callback != nullptr) {  // cudaStreamAddCallback cannot be captured (cudaLaunchHostFunc can)
    GraphState& s = state(runtime);
    if (const auto it = s.capturing.find(runtime.stream_of(stream)); it != s.capturing.end()) {
      it->second.sequence->invalidated = true;
    }
    return cudaErrorStreamCaptureUnsupported;
  }
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeHost;
  prototype.host_fn = callback.host_fn;
  prototype.user_data = callback.user_data;
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_malloc(Runtime& runtime, void** ptr, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaErrorInvalidValue;
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeMemAlloc;
  if (const cudaError_t e = allocate(runtime, bytes, &prototype.allocation); e != cudaSuccess) return e;
  prototype.alloc_params.poolProps.allocType = cudaMemAllocationTypePinned;
  prototype.alloc_params.poolProps.location = {cudaMemLocationTypeDevice, 0};
  prototype.alloc_params.bytesize = bytes;
  prototype.alloc_params.dptr = prototype.allocation->address;
  if (const cudaError_t e = add_captured(runtime, stream, prototype); e != cudaSuccess) return e;
  *ptr = prototype.alloc_params.dptr;
  return cudaSuccess;
}

cudaError_t GraphAccess::capture_free(Runtime& runtime, void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeMemFree;
  prototype.free_address = ptr;
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_graph(Runtime& runtime, const Graph& graph, cudaStream_t stream) {
  GraphNode prototype;
  prototype.type = cudaGraphNodeTypeGraph;
  prototype.bodies.push_back(clone_graph(graph, nullptr));
  return add_captured(runtime, stream, prototype);
}

cudaError_t GraphAccess::capture_external_event(Runtime& runtime, cudaStream_t stream_handle, cudaEvent_t event,
                                                bool record) {
  if (runtime.stream_of(stream_handle) == nullptr || runtime.event_of(event) == nullptr) {
    return cudaErrorInvalidResourceHandle;
  }
  if (!runtime.capture_active_ || !captured(runtime, stream_handle)) {
    return record ? runtime.event_record(event, stream_handle) : cudaErrorInvalidValue;
  }
  GraphNode prototype;
  prototype.type = record ? cudaGraphNodeTypeEventRecord : cudaGraphNodeTypeWaitEvent;
  prototype.event = event;
  return add_captured(runtime, stream_handle, prototype);
}

cudaError_t GraphAccess::begin_capture(Runtime& runtime, cudaStream_t stream_handle, Graph* into,
                                       const cudaGraphNode_t* dependencies, std::size_t count,
                                       cudaStreamCaptureMode mode) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed) {
    return cudaErrorInvalidValue;
  }
  if (stream->queue == 0) return cudaErrorStreamCaptureUnsupported;  // the legacy stream cannot capture
  if (s.capturing.count(stream) != 0) return cudaErrorIllegalState;
  std::vector<GraphNode*> start;
  for (std::size_t i = 0; i < count; ++i) {
    auto* node = reinterpret_cast<GraphNode*>(dependencies[i]);
    if (s.live_nodes.count(node) == 0 || node->graph != into) return cudaErrorInvalidValue;
    start.push_back(node);
  }
  auto sequence = std::make_unique<CaptureSequence>();
  if (into == nullptr) {
    sequence->graph = std::make_unique<Graph>();
    into = sequence->graph.get();
    s.live_graphs.insert(into);
  }
  sequence->target = into;
  sequence->mode = mode;
  sequence->id = s.next_capture_id++;
  sequence->thread = std::this_thread::get_id();
  sequence->origin = stream;
  StreamCapture capture;
  capture.sequence = sequence.get();
  capture.dependencies = std::move(start);
  s.capturing[stream] = std::move(capture);
  s.sequences.push_back(std::move(sequence));
  update_active(runtime);
  return cudaSuccess;
}

cudaError_t GraphAccess::end_capture(Runtime& runtime, cudaStream_t stream_handle, cudaGraph_t* graph_out) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) return cudaErrorIllegalState;
  CaptureSequence* sequence = it->second.sequence;
  // Capturing into the program's graph (cudaStreamBeginCaptureToGraph) needs no graph back.
  cudaGraph_t ignored = nullptr;
  if (graph_out == nullptr && sequence->graph == nullptr) graph_out = &ignored;
  if (graph_out == nullptr) return cudaErrorInvalidValue;
  if (sequence->origin != stream) return cudaErrorStreamCaptureUnmatched;
  if (sequence->mode != cudaStreamCaptureModeRelaxed && sequence->thread != std::this_thread::get_id()) {
    return cudaErrorStreamCaptureWrongThread;
  }
  // Every stream forked from the origin must have been joined back: its last work is something
  // the origin's last work depends on.
  std::set<const GraphNode*> joined;
  std::vector<const GraphNode*> walk(it->second.dependencies.begin(), it->second.dependencies.end());
  while (!walk.empty()) {
    const GraphNode* node = walk.back();
    walk.pop_back();
    if (!joined.insert(node).second) continue;
    walk.insert(walk.end(), node->dependencies.begin(), node->dependencies.end());
  }
  bool unjoined = false;
  for (const auto& entry : s.capturing) {
    if (entry.second.sequence != sequence) continue;
    for (const GraphNode* d : entry.second.dependencies) unjoined |= joined.count(d) == 0;
  }
  const bool invalidated = sequence->invalidated;
  std::unique_ptr<Graph> graph = std::move(sequence->graph);
  Graph* target = sequence->target;
  end_sequence(runtime, sequence);
  *graph_out = nullptr;
  if (invalidated || unjoined) {
    if (graph != nullptr) forget(s, *graph);
    return invalidated ? cudaErrorStreamCaptureInvalidated : cudaErrorStreamCaptureUnjoined;
  }
  if (graph != nullptr) {
    target = graph.get();
    s.graphs[target] = std::move(graph);
  }
  *graph_out = reinterpret_cast<cudaGraph_t>(target);
  return cudaSuccess;
}

void GraphAccess::end_sequence(Runtime& runtime, CaptureSequence* sequence) {
  GraphState& s = state(runtime);
  for (auto entry = s.capturing.begin(); entry != s.capturing.end();) {
    entry = entry->second.sequence == sequence ? s.capturing.erase(entry) : std::next(entry);
  }
  for (auto entry = s.captured_events.begin(); entry != s.captured_events.end();) {
    entry = entry->second.sequence == sequence ? s.captured_events.erase(entry) : std::next(entry);
  }
  if (sequence->graph != nullptr) forget(s, *sequence->graph);
  s.sequences.erase(std::find_if(s.sequences.begin(), s.sequences.end(),
                                 [&](const auto& q) { return q.get() == sequence; }));
  update_active(runtime);
}

void GraphAccess::forget_stream(Runtime& runtime, Stream* stream) {
  GraphState& s = state(runtime);
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) return;
  CaptureSequence* sequence = it->second.sequence;
  if (sequence->origin == stream) {
    end_sequence(runtime, sequence);
  } else {
    s.capturing.erase(it);  // a forked stream leaves the capture (joined or not, as CUDA lets it)
  }
}

void GraphAccess::forget_event(Runtime& runtime, Event* event) { state(runtime).captured_events.erase(event); }

cudaError_t GraphAccess::capture_info(Runtime& runtime, cudaStream_t stream_handle, cudaStreamCaptureStatus* status,
                                      unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                                      const cudaGraphEdgeData** edges, std::size_t* count) {
  GraphState& s = state(runtime);
  if (status == nullptr) return cudaErrorInvalidValue;
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) {
    *status = cudaStreamCaptureStatusNone;  // the other outputs are left alone
    return cudaSuccess;
  }
  StreamCapture& capture = it->second;
  *status = capture.sequence->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  if (id != nullptr) *id = capture.sequence->id;
  if (graph != nullptr) *graph = reinterpret_cast<cudaGraph_t>(capture.sequence->target);
  capture.reported.clear();
  for (GraphNode* d : capture.dependencies) capture.reported.push_back(handle_of(d));
  capture.reported_edges.assign(capture.reported.size(), cudaGraphEdgeData{});
  if (dependencies != nullptr) *dependencies = capture.reported.empty() ? nullptr : capture.reported.data();
  if (edges != nullptr) *edges = capture.reported_edges.empty() ? nullptr : capture.reported_edges.data();
  if (count != nullptr) *count = capture.reported.size();
  return cudaSuccess;
}

cudaError_t GraphAccess::update_capture_dependencies(Runtime& runtime, cudaStream_t stream_handle,
                                                     cudaGraphNode_t* dependencies, std::size_t count, unsigned flags) {
  GraphState& s = state(runtime);
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies) {
    return cudaErrorInvalidValue;
  }
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) return cudaErrorIllegalState;
  if (it->second.sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  std::vector<GraphNode*> nodes;
  for (std::size_t i = 0; i < count; ++i) {
    auto* node = reinterpret_cast<GraphNode*>(dependencies[i]);
    if (s.live_nodes.count(node) == 0 || node->graph != it->second.sequence->target) return cudaErrorInvalidValue;
    nodes.push_back(node);
  }
  std::vector<GraphNode*>& current = it->second.dependencies;
  if (flags == cudaStreamSetCaptureDependencies) current.clear();
  for (GraphNode* node : nodes) {
    if (std::find(current.begin(), current.end(), node) == current.end()) current.push_back(node);
  }
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Graph memory and conditional handles.

bool GraphAccess::graph_memory(Runtime& runtime, const void* ptr) {
  return state(runtime).graph_addresses.count(reinterpret_cast<uint64_t>(ptr)) != 0;
}

cudaError_t GraphAccess::allocate(Runtime& runtime, std::size_t bytes, std::shared_ptr<GraphAllocation>* allocation) {
  GraphState& s = state(runtime);
  void* address = nullptr;
  // The graph's own allocation, not the program's: not a call that capture forbids.
  const bool active = std::exchange(runtime.capture_active_, false);
  const cudaError_t e = runtime.malloc_device(&address, bytes);
  runtime.capture_active_ = active;
  if (e != cudaSuccess) return e;
  auto made = std::make_shared<GraphAllocation>();
  made->state = &s;
  made->address = address;
  made->bytes = bytes;
  s.graph_addresses.insert(reinterpret_cast<uint64_t>(address));
  s.graph_memory += bytes;
  s.graph_memory_high = std::max(s.graph_memory_high, s.graph_memory);
  *allocation = std::move(made);
  return cudaSuccess;
}

void GraphAccess::release(Runtime& runtime, void* address, std::size_t bytes) {
  GraphState& s = state(runtime);
  s.graph_addresses.erase(reinterpret_cast<uint64_t>(address));
  s.graph_memory -= std::min<uint64_t>(bytes, s.graph_memory);
  const bool active = std::exchange(runtime.capture_active_, false);
  runtime.free_device(address);
  runtime.capture_active_ = active;
}

cudaError_t GraphAccess::create_handle(Runtime& runtime, Graph& graph, unsigned default_value, unsigned flags,
                                       cudaGraphConditionalHandle* handle) {
  GraphState& s = state(runtime);
  if (handle == nullptr || (flags & ~static_cast<unsigned>(cudaGraphCondAssignDefault)) != 0) return cudaErrorInvalidValue;
  auto made = std::make_shared<ConditionalHandle>();
  if (const cudaError_t e = allocate(runtime, 4, &made->cell); e != cudaSuccess) return e;
  made->cell->graph_memory = false;
  s.graph_addresses.erase(reinterpret_cast<uint64_t>(made->cell->address));
  s.graph_memory -= 4;
  made->address = reinterpret_cast<uint64_t>(made->cell->address);
  made->default_value = default_value;
  made->assign_default = (flags & cudaGraphCondAssignDefault) != 0;
  if (default_value != 0) {  // new device memory reads 0
    if (const cudaError_t e = write_cell(runtime, made->address, default_value, runtime.legacy_); e != cudaSuccess) return e;
  }
  graph.handles.push_back(made);
  s.handles[made->address] = made;
  *handle = made->address;
  return cudaSuccess;
}

cudaError_t GraphAccess::write_cell(Runtime& runtime, uint64_t address, unsigned value, Stream& stream) {
  const auto block = runtime.copy_into_window(&value, sizeof value);
  if (!block) return cudaErrorMemoryAllocation;
  Pending pending;
  pending.what = "conditional handle";
  pending.release[0] = *block;
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(dev::Opcode::Memcpy);
  cmd.body.generic = {address, *block, sizeof value, static_cast<uint64_t>(dev::CopyDirection::HostToDevice)};
  return runtime.submit(stream, cmd, std::move(pending)) == 0 ? cudaErrorDevicesUnavailable : cudaSuccess;
}

cudaError_t GraphAccess::read_cell(Runtime& runtime, uint64_t address, Stream& stream, unsigned* value) {
  const auto block = runtime.driver_->allocate(16, 16);
  if (!block) return cudaErrorMemoryAllocation;
  Pending pending;
  pending.what = "conditional node";
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(dev::Opcode::Memcpy);
  cmd.body.generic = {*block, address, sizeof *value, static_cast<uint64_t>(dev::CopyDirection::DeviceToHost)};
  const uint64_t sequence = runtime.submit(stream, cmd, std::move(pending));
  const cudaError_t e = runtime.wait_for(sequence);
  if (e == cudaSuccess) std::memcpy(value, runtime.driver_->pointer(*block), sizeof *value);
  if (runtime.sticky_ != cudaErrorDevicesUnavailable) runtime.driver_->release(*block);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Nodes and launches.

cudaError_t GraphAccess::set_kernel(Runtime& runtime, GraphNode& node, const void* func, dim3 grid, dim3 block,
                                    unsigned shared, void** args, void** extra) {
  Function* function = runtime.function_of(func);
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
    return cudaErrorInvalidConfiguration;
  }
  if (const cudaError_t e = runtime.resolve(*function); e != cudaSuccess) return e;
  std::vector<uint8_t> packed(function->param_bytes, 0);
  if (extra != nullptr) {
    // CU_LAUNCH_PARAM_BUFFER_POINTER (1), pointer, CU_LAUNCH_PARAM_BUFFER_SIZE (2), &size, CU_LAUNCH_PARAM_END (0).
    const void* buffer = nullptr;
    std::size_t size = 0;
    for (std::size_t i = 0; extra[i] != nullptr; i += 2) {
      if (extra[i] == reinterpret_cast<void*>(1)) buffer = extra[i + 1];
      else if (extra[i] == reinterpret_cast<void*>(2)) size = *static_cast<const std::size_t*>(extra[i + 1]);
      else return cudaErrorInvalidValue;
    }
    if (buffer == nullptr || size != packed.size()) return cudaErrorInvalidValue;
    std::memcpy(packed.data(), buffer, size);
  } else {
    for (std::size_t i = 0; i < function->params.size(); ++i) {
      const dev::ParamLayout& p = function->params[i];
      if (args == nullptr || args[i] == nullptr || uint64_t{p.offset} + p.size > packed.size()) return cudaErrorInvalidValue;
      std::memcpy(packed.data() + p.offset, args[i], p.size);
    }
  }
  node.func = func;
  node.function = function;
  node.grid = grid;
  node.block = block;
  node.shared_bytes = shared;
  node.arguments = std::move(packed);
  point_arguments(node);
  return cudaSuccess;
}

cudaError_t GraphAccess::run_copy(Runtime& runtime, const cudaMemcpy3DParms& copy, cudaStream_t stream) {
  if (copy.srcArray != nullptr || copy.dstArray != nullptr) {
    runtime.log_unsupported("graph memcpy node with a cudaArray (cudaMemcpy3DParms srcArray/dstArray)");
    return cudaErrorNotSupported;
  }
  const cudaExtent& e = copy.extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0) return cudaSuccess;
  auto* src = static_cast<const uint8_t*>(copy.srcPtr.ptr);
  auto* dst = static_cast<uint8_t*>(copy.dstPtr.ptr);
  // A host-to-host copy is done by the runtime, not the device: in stream order only once the
  // stream's earlier work is done (the copy then waits for it; cudaMemcpyAsync's own H2H does not).
  const bool host_to_host =
      copy.kind == cudaMemcpyHostToHost ||
      (copy.kind == cudaMemcpyDefault && !runtime.is_device_range(reinterpret_cast<uint64_t>(src), 1) &&
       !runtime.is_device_range(reinterpret_cast<uint64_t>(dst), 1));
  if (host_to_host) {
    Stream* stream_of_copy = runtime.stream_of(stream);
    const uint64_t last = runtime.last_on_queue_[stream_of_copy->queue];
    if (last != 0) {
      if (const cudaError_t err = runtime.wait_for(last); err != cudaSuccess) return err;
    }
  }
  const bool at_origin = copy.srcPos.x == 0 && copy.srcPos.y == 0 && copy.srcPos.z == 0 && copy.dstPos.x == 0 &&
                         copy.dstPos.y == 0 && copy.dstPos.z == 0;
  const bool packed = copy.srcPtr.pitch == e.width && copy.dstPtr.pitch == e.width &&
                      (e.depth == 1 || (copy.srcPtr.ysize == e.height && copy.dstPtr.ysize == e.height));
  if (at_origin && (packed || (e.height == 1 && e.depth == 1))) {
    return runtime.memcpy(dst, src, e.width * e.height * e.depth, copy.kind, stream, true);
  }
  for (std::size_t z = 0; z < e.depth; ++z) {
    for (std::size_t y = 0; y < e.height; ++y) {
      const std::size_t s = ((copy.srcPos.z + z) * copy.srcPtr.ysize + copy.srcPos.y + y) * copy.srcPtr.pitch + copy.srcPos.x;
      const std::size_t d = ((copy.dstPos.z + z) * copy.dstPtr.ysize + copy.dstPos.y + y) * copy.dstPtr.pitch + copy.dstPos.x;
      if (const cudaError_t err = runtime.memcpy(dst + d, src + s, e.width, copy.kind, stream, true); err != cudaSuccess) {
        return err;
      }
    }
  }
  return cudaSuccess;
}

cudaError_t GraphAccess::run_memset(Runtime& runtime, const cudaMemsetParams& m, cudaStream_t stream_handle) {
  const std::size_t row = m.width * m.elementSize;
  if (row == 0 || m.height == 0) return cudaSuccess;
  uint8_t element[4];
  std::memcpy(element, &m.value, 4);  // little-endian: the element's bytes in memory order
  bool uniform = true;
  for (unsigned i = 1; i < m.elementSize; ++i) uniform &= element[i] == element[0];
  const bool packed = m.height == 1 || m.pitch == row;
  const std::size_t rows = packed ? 1 : m.height;
  const std::size_t bytes = packed ? row * m.height : row;
  std::vector<uint8_t> pattern;
  if (!uniform) {
    pattern.resize(bytes);
    for (std::size_t i = 0; i < bytes; ++i) pattern[i] = element[i % m.elementSize];
  }
  Stream* stream = runtime.stream_of(stream_handle);
  for (std::size_t y = 0; y < rows; ++y) {
    auto* dst = static_cast<uint8_t*>(m.dst) + y * m.pitch;
    if (uniform) {
      if (const cudaError_t e = runtime.memset(dst, element[0], bytes, stream_handle, true); e != cudaSuccess) return e;
      continue;
    }
    // A wider pattern: copied from the window (the device's memset writes one byte value).
    if (!runtime.is_device_range(reinterpret_cast<uint64_t>(dst), bytes)) return cudaErrorInvalidValue;
    const auto block = runtime.copy_into_window(pattern.data(), bytes);
    if (!block) return cudaErrorMemoryAllocation;
    Pending pending;
    pending.what = "graph memset node";
    pending.release[0] = *block;
    dev::Command cmd{};
    cmd.opcode = static_cast<uint32_t>(dev::Opcode::Memcpy);
    cmd.body.generic = {reinterpret_cast<uint64_t>(dst), *block, bytes,
                        static_cast<uint64_t>(dev::CopyDirection::HostToDevice)};
    if (runtime.submit(*stream, cmd, std::move(pending)) == 0) return cudaErrorDevicesUnavailable;
  }
  return cudaSuccess;
}

cudaError_t GraphAccess::run_node(Runtime& runtime, const GraphNode& node, cudaStream_t stream) {
  if (!node.enabled) return cudaSuccess;
  switch (node.type) {
    case cudaGraphNodeTypeKernel:
      return runtime.launch_kernel(node.function, node.grid, node.block, const_cast<void**>(node.argument_pointers.data()),
                                   node.shared_bytes, stream, LaunchOptions{false, -2, true});
    case cudaGraphNodeTypeMemcpy: return run_copy(runtime, node.copy, stream);
    case cudaGraphNodeTypeMemset: return run_memset(runtime, node.memset, stream);
    case cudaGraphNodeTypeHost: {
      HostCallback callback;
      callback.host_fn = node.host_fn;
      callback.user_data = node.user_data;
      return runtime.launch_host_function(stream, callback);
    }
    case cudaGraphNodeTypeGraph: return run_graph(runtime, *node.bodies[0], stream);
    case cudaGraphNodeTypeWaitEvent: return runtime.stream_wait_event(stream, node.event);
    case cudaGraphNodeTypeEventRecord: return runtime.event_record(node.event, stream);
    case cudaGraphNodeTypeConditional: {
      GraphState& s = state(runtime);
      const auto handle = s.handles.find(node.handle);
      if (handle == s.handles.end()) return cudaErrorInvalidValue;
      Stream& on = *runtime.stream_of(stream);
      unsigned value = 0;
      cudaError_t e = cudaSuccess;
      if (node.condition == cudaGraphCondTypeWhile) {
        while ((e = read_cell(runtime, handle->second->address, on, &value)) == cudaSuccess && value != 0) {
          if ((e = run_graph(runtime, *node.bodies[0], stream)) != cudaSuccess) break;
        }
        return e;
      }
      if ((e = read_cell(runtime, handle->second->address, on, &value)) != cudaSuccess) return e;
      std::size_t body = node.bodies.size();  // none
      if (node.condition == cudaGraphCondTypeIf) body = value != 0 ? 0 : 1;
      if (node.condition == cudaGraphCondTypeSwitch) body = value;
      return body < node.bodies.size() ? run_graph(runtime, *node.bodies[body], stream) : cudaSuccess;
    }
    default: return cudaSuccess;  // empty, memory allocation and free nodes: nothing to do at launch
  }
}

cudaError_t GraphAccess::run_graph(Runtime& runtime, const Graph& graph, cudaStream_t stream) {
  std::vector<GraphNode*> order;
  if (!topological_order(graph, &order)) return cudaErrorInvalidValue;
  for (GraphNode* node : order) {
    if (const cudaError_t e = run_node(runtime, *node, stream); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

namespace {

// One root, and no node with more than one dependency or dependent.
bool is_chain(const Graph& graph) {
  std::size_t roots = 0;
  for (const auto& node : graph.nodes) {
    if (node->dependencies.size() > 1 || node->dependents.size() > 1) return false;
    roots += node->dependencies.empty() ? 1 : 0;
  }
  return roots <= 1;
}

}  // namespace

cudaError_t GraphAccess::run_parallel(Runtime& runtime, GraphExec& exec, cudaStream_t stream) {
  const Graph& graph = *exec.graph;
  std::vector<GraphNode*> order;
  if (!topological_order(graph, &order)) return cudaErrorInvalidValue;
  // Lanes: a node continues the lane of a dependency it directly follows, else takes a new lane,
  // else (all kMaxLanes taken) the lane whose last node came first in the order.
  constexpr std::size_t kMaxLanes = 4;
  std::map<const GraphNode*, std::size_t> position, lane_of;
  std::vector<const GraphNode*> tail;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const GraphNode* node = order[i];
    position[node] = i;
    std::size_t lane = tail.size();
    for (const GraphNode* d : node->dependencies) {
      if (tail[lane_of[d]] == d) {
        lane = lane_of[d];
        break;
      }
    }
    if (lane == tail.size()) {
      if (tail.size() < kMaxLanes) {
        tail.push_back(nullptr);
      } else {
        lane = 0;
        for (std::size_t l = 1; l < tail.size(); ++l) {
          if (position[tail[l]] < position[tail[lane]]) lane = l;
        }
      }
    }
    lane_of[node] = lane;
    tail[lane] = node;
  }
  // The streams and events, made on the first launch that needs them.
  auto event = [&](cudaEvent_t* made) {
    return *made != nullptr ? cudaSuccess : runtime.event_create(made, cudaEventDisableTiming);
  };
  while (exec.lanes.size() < tail.size()) {
    cudaStream_t lane = nullptr;
    if (const cudaError_t e = runtime.stream_create(&lane, cudaStreamNonBlocking); e != cudaSuccess) return e;
    exec.lanes.push_back(lane);
    exec.lane_done.push_back(nullptr);
  }
  if (const cudaError_t e = event(&exec.start); e != cudaSuccess) return e;
  if (const cudaError_t e = runtime.event_record(exec.start, stream); e != cudaSuccess) return e;
  for (std::size_t l = 0; l < tail.size(); ++l) {
    if (const cudaError_t e = runtime.stream_wait_event(exec.lanes[l], exec.start); e != cudaSuccess) return e;
  }
  for (std::size_t l = 0; l < tail.size(); ++l) {
    if (const cudaError_t e = event(&exec.lane_done[l]); e != cudaSuccess) return e;
  }
  for (const GraphNode* node : order) {
    cudaStream_t lane = exec.lanes[lane_of[node]];
    if (node->type == cudaGraphNodeTypeConditional) {
      // The runtime evaluates the condition: after every node before it in the launch order (as
      // were they all on one stream), not only its dependencies.
      for (std::size_t l = 0; l < tail.size(); ++l) {
        if (l == lane_of[node]) continue;
        if (const cudaError_t e = runtime.event_record(exec.lane_done[l], exec.lanes[l]); e != cudaSuccess) return e;
        if (const cudaError_t e = runtime.stream_wait_event(lane, exec.lane_done[l]); e != cudaSuccess) return e;
      }
    }
    for (const GraphNode* d : node->dependencies) {
      if (lane_of[d] == lane_of[node]) continue;  // earlier on the same lane: in order already
      if (const cudaError_t e = runtime.stream_wait_event(lane, exec.node_done[d]); e != cudaSuccess) return e;
    }
    if (const cudaError_t e = run_node(runtime, *node, lane); e != cudaSuccess) return e;
    bool signals = false;
    for (const GraphNode* d : node->dependents) signals |= lane_of[d] != lane_of[node];
    if (signals) {
      if (const cudaError_t e = event(&exec.node_done[node]); e != cudaSuccess) return e;
      if (const cudaError_t e = runtime.event_record(exec.node_done[node], lane); e != cudaSuccess) return e;
    }
  }
  // The launching stream's later work waits for every lane.
  for (std::size_t l = 0; l < tail.size(); ++l) {
    if (const cudaError_t e = runtime.event_record(exec.lane_done[l], exec.lanes[l]); e != cudaSuccess) return e;
    if (const cudaError_t e = runtime.stream_wait_event(stream, exec.lane_done[l]); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

void GraphAccess::release_lanes(Runtime& runtime, GraphExec& exec) {
  for (cudaStream_t lane : exec.lanes) runtime.stream_destroy(lane);
  for (cudaEvent_t e : exec.lane_done) {
    if (e != nullptr) runtime.event_destroy(e);
  }
  for (const auto& entry : exec.node_done) {
    if (entry.second != nullptr) runtime.event_destroy(entry.second);
  }
  if (exec.start != nullptr) runtime.event_destroy(exec.start);
  exec.lanes.clear();
  exec.lane_done.clear();
  exec.node_done.clear();
  exec.start = nullptr;
}

cudaError_t GraphAccess::launch(Runtime& runtime, GraphExec& exec, cudaStream_t stream_handle) {
  Stream* stream = runtime.stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (runtime.capture_active_ && captured(runtime, stream_handle)) return capture_graph(runtime, *exec.graph, stream_handle);
  // Conditional handles with cudaGraphCondAssignDefault start each launch at their default.
  std::vector<const Graph*> graphs{exec.graph.get()};
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    for (const auto& handle : graphs[i]->handles) {
      if (!handle->assign_default) continue;
      if (const cudaError_t e = write_cell(runtime, handle->address, handle->default_value, *stream); e != cudaSuccess) {
        return e;
      }
    }
    for (const auto& node : graphs[i]->nodes) {
      for (const auto& body : node->bodies) graphs.push_back(body.get());
    }
  }
  // Independent branches run on lanes of their own (streams of the executable graph), so they
  // may overlap; a chain runs on the launching stream itself.
  if (is_chain(*exec.graph)) return run_graph(runtime, *exec.graph, stream_handle);
  return run_parallel(runtime, exec, stream_handle);
}

}  // namespace gpuvp::cudart
