// CUDA graphs and stream capture (graph.h describes how a graph runs). Handles that are not
// live graphs, nodes or executable graphs of this runtime answer cudaErrorInvalidValue, the
// error these functions document; each _ptsz variant is the same call with the null stream
// meaning the calling thread's per-thread default stream.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sw/cudart/api.h"
#include "sw/cudart/graph.h"

using gpuvp::cudart::Graph;
using gpuvp::cudart::GraphAccess;
using gpuvp::cudart::GraphExec;
using gpuvp::cudart::GraphNode;
using gpuvp::cudart::GraphState;
using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;
using gpuvp::cudart::with_runtime;

namespace {

GraphState& state(Runtime& runtime) { return GraphAccess::state(runtime); }

Graph* graph_of(Runtime& runtime, cudaGraph_t graph) {
  auto* g = reinterpret_cast<Graph*>(graph);
  return state(runtime).live_graphs.count(g) != 0 ? g : nullptr;
}

GraphNode* node_of(Runtime& runtime, cudaGraphNode_t node) {
  auto* n = reinterpret_cast<GraphNode*>(node);
  return state(runtime).live_nodes.count(n) != 0 ? n : nullptr;
}

GraphExec* exec_of(Runtime& runtime, cudaGraphExec_t exec) {
  const auto it = state(runtime).execs.find(reinterpret_cast<GraphExec*>(exec));
  return it == state(runtime).execs.end() ? nullptr : it->second.get();
}

cudaGraphNode_t handle_of(GraphNode* node) { return reinterpret_cast<cudaGraphNode_t>(node); }
cudaGraph_t handle_of(Graph* graph) { return reinterpret_cast<cudaGraph_t>(graph); }

// The dependencies of a node to add: live nodes of `graph`, no duplicates.
cudaError_t dependencies_of(Runtime& runtime, Graph& graph, const cudaGraphNode_t* dependencies, std::size_t count,
                            std::vector<GraphNode*>* out) {
  if (count != 0 && dependencies == nullptr) return cudaErrorInvalidValue;
  for (std::size_t i = 0; i < count; ++i) {
    GraphNode* node = node_of(runtime, dependencies[i]);
    if (node == nullptr || node->graph != &graph) return cudaErrorInvalidValue;
    for (GraphNode* seen : *out) {
      if (seen == node) return cudaErrorInvalidValue;
    }
    out->push_back(node);
  }
  return cudaSuccess;
}

cudaError_t check_edges(const cudaGraphEdgeData* edges, std::size_t count) {
  // Only ordinary full dependencies (a zero cudaGraphEdgeData) are modelled.
  for (std::size_t i = 0; edges != nullptr && i < count; ++i) {
    if (edges[i].type != cudaGraphDependencyTypeDefault || edges[i].from_port != 0 || edges[i].to_port != 0) {
      return cudaErrorNotSupported;
    }
  }
  return cudaSuccess;
}

// Adds a node whose parameters `fill` sets on a prototype (nothing is added when it fails).
template <typename Fill>
cudaError_t add(Runtime& runtime, cudaGraphNode_t* out, cudaGraph_t graph_handle, const cudaGraphNode_t* dependencies,
                std::size_t count, cudaGraphNodeType type, Fill&& fill) {
  Graph* graph = graph_of(runtime, graph_handle);
  if (out == nullptr || graph == nullptr) return cudaErrorInvalidValue;
  std::vector<GraphNode*> after;
  if (const cudaError_t e = dependencies_of(runtime, *graph, dependencies, count, &after); e != cudaSuccess) return e;
  GraphNode prototype;
  prototype.type = type;
  if (const cudaError_t e = fill(prototype); e != cudaSuccess) return e;
  GraphNode* node = gpuvp::cudart::add_node(state(runtime), *graph, type, after);
  gpuvp::cudart::copy_params(prototype, *node);
  node->bodies = std::move(prototype.bodies);
  for (const auto& body : node->bodies) {
    body->owner = node;
    gpuvp::cudart::adopt(state(runtime), *body);
  }
  *out = handle_of(node);
  return cudaSuccess;
}

cudaError_t fill_copy(Runtime& runtime, GraphNode& node, const cudaMemcpy3DParms* params) {
  if (params == nullptr) return cudaErrorInvalidValue;
  if (params->kind < cudaMemcpyHostToHost || params->kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  if (params->srcArray != nullptr || params->dstArray != nullptr) {
    runtime.log_unsupported("graph memcpy node with a cudaArray (cudaMemcpy3DParms srcArray/dstArray)");
    return cudaErrorNotSupported;
  }
  const cudaExtent& e = params->extent;
  if (e.width != 0 && e.height != 0 && e.depth != 0 &&
      (params->srcPtr.ptr == nullptr || params->dstPtr.ptr == nullptr ||
       params->srcPos.x + e.width > params->srcPtr.pitch || params->dstPos.x + e.width > params->dstPtr.pitch ||
       (e.depth > 1 && (params->srcPos.y + e.height > params->srcPtr.ysize ||
                        params->dstPos.y + e.height > params->dstPtr.ysize)))) {
    return cudaErrorInvalidValue;
  }
  node.copy = *params;
  return cudaSuccess;
}

cudaError_t fill_copy_1d(Runtime& runtime, GraphNode& node, void* dst, const void* src, std::size_t count,
                         cudaMemcpyKind kind) {
  cudaMemcpy3DParms params{};
  params.srcPtr = cudaPitchedPtr{const_cast<void*>(src), count, count, 1};
  params.dstPtr = cudaPitchedPtr{dst, count, count, 1};
  params.extent = cudaExtent{count, 1, 1};
  params.kind = kind;
  return fill_copy(runtime, node, &params);
}

// A copy to or from a __device__ variable.
cudaError_t fill_copy_symbol(Runtime& runtime, GraphNode& node, const void* symbol, void* host, std::size_t count,
                             std::size_t offset, cudaMemcpyKind kind, bool to_symbol) {
  void* address = nullptr;
  std::size_t size = 0;
  if (const cudaError_t e = runtime.symbol_address(&address, &size, symbol); e != cudaSuccess) return e;
  if (offset + count > size) return cudaErrorInvalidValue;
  void* device = static_cast<uint8_t*>(address) + offset;
  return to_symbol ? fill_copy_1d(runtime, node, device, host, count, kind)
                   : fill_copy_1d(runtime, node, host, device, count, kind);
}

cudaError_t fill_memset(GraphNode& node, const cudaMemsetParams* params) {
  if (params == nullptr || params->dst == nullptr) return cudaErrorInvalidValue;
  if (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) return cudaErrorInvalidValue;
  if (params->height > 1 && params->pitch < params->width * params->elementSize) return cudaErrorInvalidValue;
  node.memset = *params;
  return cudaSuccess;
}

cudaError_t fill_host(GraphNode& node, cudaHostFn_t fn, void* user_data) {
  if (fn == nullptr) return cudaErrorInvalidValue;
  node.host_fn = fn;
  node.user_data = user_data;
  return cudaSuccess;
}

cudaError_t fill_event(Runtime& runtime, GraphNode& node, cudaEvent_t event) {
  if (GraphAccess::event_of(runtime, event) == nullptr) return cudaErrorInvalidValue;
  node.event = event;
  return cudaSuccess;
}

cudaError_t fill_child(Runtime& runtime, GraphNode& node, cudaGraph_t child) {
  Graph* graph = graph_of(runtime, child);
  if (graph == nullptr) return cudaErrorInvalidValue;
  node.bodies.clear();
  node.bodies.push_back(gpuvp::cudart::clone_graph(*graph, nullptr));
  return cudaSuccess;
}

cudaError_t fill_alloc(Runtime& runtime, GraphNode& node, cudaMemAllocNodeParams* params) {
  if (params == nullptr || params->bytesize == 0) return cudaErrorInvalidValue;
  if (params->poolProps.location.type != cudaMemLocationTypeDevice || params->poolProps.location.id != 0) {
    return cudaErrorInvalidValue;
  }
  if (const cudaError_t e = GraphAccess::allocate(runtime, params->bytesize, &node.allocation); e != cudaSuccess) {
    return e;
  }
  params->dptr = node.allocation->address;
  node.alloc_params = *params;
  return cudaSuccess;
}

cudaError_t fill_conditional(Runtime& runtime, GraphNode& node, cudaConditionalNodeParams* params) {
  if (params == nullptr || state(runtime).handles.count(params->handle) == 0) return cudaErrorInvalidValue;
  const bool sized = (params->type == cudaGraphCondTypeIf && (params->size == 1 || params->size == 2)) ||
                     (params->type == cudaGraphCondTypeWhile && params->size == 1) ||
                     (params->type == cudaGraphCondTypeSwitch && params->size > 0);
  if (!sized) return cudaErrorInvalidValue;
  node.handle = params->handle;
  node.condition = params->type;
  for (unsigned i = 0; i < params->size; ++i) node.bodies.push_back(std::make_unique<Graph>());
  return cudaSuccess;
}

// The cudaGraphNodeParams form of every node type this runtime builds.
cudaError_t fill_generic(Runtime& runtime, GraphNode& node, cudaGraphNodeParams* params) {
  switch (params->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParamsV2& k = params->kernel;
      return GraphAccess::set_kernel(runtime, node, k.func, k.gridDim, k.blockDim, k.sharedMemBytes, k.kernelParams,
                                     k.extra);
    }
    case cudaGraphNodeTypeMemcpy:
      if (params->memcpy.flags != 0) return cudaErrorInvalidValue;
      return fill_copy(runtime, node, &params->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParamsV2& m = params->memset;
      cudaMemsetParams plain{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
      return fill_memset(node, &plain);
    }
    case cudaGraphNodeTypeHost: return fill_host(node, params->host.fn, params->host.userData);
    case cudaGraphNodeTypeGraph:
      if (params->graph.ownership != cudaGraphChildGraphOwnershipClone) {
        runtime.log_unsupported("cudaGraphAddNode of a child graph with cudaGraphChildGraphOwnershipMove");
        return cudaErrorNotSupported;
      }
      return fill_child(runtime, node, params->graph.graph);
    case cudaGraphNodeTypeEmpty: return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent: return fill_event(runtime, node, params->eventWait.event);
    case cudaGraphNodeTypeEventRecord: return fill_event(runtime, node, params->eventRecord.event);
    case cudaGraphNodeTypeMemAlloc: {
      cudaMemAllocNodeParamsV2& a = params->alloc;
      cudaMemAllocNodeParams plain{a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize, nullptr};
      const cudaError_t e = fill_alloc(runtime, node, &plain);
      a.dptr = plain.dptr;
      return e;
    }
    case cudaGraphNodeTypeMemFree:
      if (params->free.dptr == nullptr) return cudaErrorInvalidValue;
      node.free_address = params->free.dptr;
      return cudaSuccess;
    case cudaGraphNodeTypeConditional: return fill_conditional(runtime, node, &params->conditional);
    default:
      runtime.log_unsupported("graph node of type external semaphore signal/wait");
      return cudaErrorNotSupported;
  }
}

// After a conditional node was added: phGraph_out points at the node's array of its bodies
// (CUDA owns the array; it lives as long as the node).
void report_bodies(GraphNode* node, cudaConditionalNodeParams* params) {
  node->body_handles.clear();
  for (const auto& body : node->bodies) node->body_handles.push_back(handle_of(body.get()));
  params->phGraph_out = node->body_handles.data();
}

template <typename T, typename Get>
cudaError_t list(const std::vector<T*>& items, cudaGraphNode_t* out, std::size_t* count, Get&& get) {
  if (count == nullptr) return cudaErrorInvalidValue;
  if (out != nullptr) {
    for (std::size_t i = 0; i < *count; ++i) out[i] = i < items.size() ? get(items[i]) : nullptr;
  }
  *count = items.size();
  return cudaSuccess;
}

cudaError_t node_list(const std::vector<GraphNode*>& nodes, cudaGraphNode_t* out, cudaGraphEdgeData* edges,
                      std::size_t* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  if (edges != nullptr) {
    for (std::size_t i = 0; out != nullptr && i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  }
  return list(nodes, out, count, [](GraphNode* n) { return handle_of(n); });
}

// The node of `exec` instantiated from `node`, when of the same type.
GraphNode* exec_node(Runtime& runtime, cudaGraphExec_t exec_handle, cudaGraphNode_t node_handle) {
  GraphExec* exec = exec_of(runtime, exec_handle);
  if (exec == nullptr) return nullptr;
  const auto it = exec->node_of.find(reinterpret_cast<GraphNode*>(node_handle));
  return it == exec->node_of.end() ? nullptr : it->second;
}

cudaError_t instantiate(Runtime& runtime, cudaGraphExec_t* out, cudaGraph_t graph_handle, unsigned long long flags,
                        cudaGraphNode_t* error_node, cudaGraphInstantiateResult* result) {
  Graph* graph = graph_of(runtime, graph_handle);
  if (result != nullptr) *result = cudaGraphInstantiateError;
  if (out == nullptr || graph == nullptr) return cudaErrorInvalidValue;
  constexpr unsigned long long kKnown = cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
                                        cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
  if ((flags & ~kKnown) != 0) return cudaErrorInvalidValue;
  // A cycle anywhere (nested graphs included) makes the graph invalid.
  std::vector<const Graph*> graphs{graph};
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    std::vector<GraphNode*> order;
    if (!gpuvp::cudart::topological_order(*graphs[i], &order)) {
      for (const auto& node : graphs[i]->nodes) {
        if (std::find(order.begin(), order.end(), node.get()) == order.end()) {
          if (error_node != nullptr) *error_node = handle_of(node.get());
          break;
        }
      }
      if (result != nullptr) *result = cudaGraphInstantiateInvalidStructure;
      return cudaErrorInvalidValue;
    }
    for (const auto& node : graphs[i]->nodes) {
      for (const auto& body : node->bodies) graphs.push_back(body.get());
    }
  }
  auto exec = std::make_unique<GraphExec>();
  exec->graph = gpuvp::cudart::clone_graph(*graph, &exec->node_of);
  exec->flags = flags;
  *out = reinterpret_cast<cudaGraphExec_t>(exec.get());
  state(runtime).execs[exec.get()] = std::move(exec);
  if (result != nullptr) *result = cudaGraphInstantiateSuccess;
  return cudaSuccess;
}

cudaError_t set_node_params(Runtime& runtime, GraphNode& node, cudaGraphNodeParams* params) {
  if (params == nullptr || params->type != node.type) return cudaErrorInvalidValue;
  if (node.type == cudaGraphNodeTypeMemAlloc || node.type == cudaGraphNodeTypeMemFree ||
      node.type == cudaGraphNodeTypeConditional) {
    return cudaErrorInvalidValue;  // not updatable, as CUDA documents
  }
  GraphNode prototype;
  prototype.type = node.type;
  if (const cudaError_t e = fill_generic(runtime, prototype, params); e != cudaSuccess) return e;
  const bool enabled = node.enabled;
  gpuvp::cudart::copy_params(prototype, node);
  node.enabled = enabled;
  if (!prototype.bodies.empty()) {
    for (const auto& body : node.bodies) gpuvp::cudart::forget(state(runtime), *body);
    node.bodies = std::move(prototype.bodies);
    for (const auto& body : node.bodies) body->owner = &node;
  }
  return cudaSuccess;
}

// cudaGraphExecUpdate's rule: the same nodes (by creation order) of the same types with the same
// edges; kernels, copies, memsets, host functions, events and child graphs take the new parameters.
bool same_shape(const Graph& exec, const Graph& graph, cudaGraphExecUpdateResultInfo* info) {
  auto fail = [&](cudaGraphExecUpdateResult why, const GraphNode* node) {
    if (info != nullptr) {
      info->result = why;
      info->errorNode = node != nullptr ? handle_of(const_cast<GraphNode*>(node)) : nullptr;
    }
    return false;
  };
  if (exec.nodes.size() != graph.nodes.size()) return fail(cudaGraphExecUpdateErrorTopologyChanged, nullptr);
  std::map<const GraphNode*, std::size_t> position;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) position[graph.nodes[i].get()] = i;
  std::map<const GraphNode*, std::size_t> exec_position;
  for (std::size_t i = 0; i < exec.nodes.size(); ++i) exec_position[exec.nodes[i].get()] = i;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& a = *exec.nodes[i];
    const GraphNode& b = *graph.nodes[i];
    if (a.type != b.type) return fail(cudaGraphExecUpdateErrorNodeTypeChanged, &b);
    if (a.dependencies.size() != b.dependencies.size()) return fail(cudaGraphExecUpdateErrorTopologyChanged, &b);
    for (std::size_t d = 0; d < a.dependencies.size(); ++d) {
      if (exec_position[a.dependencies[d]] != position[b.dependencies[d]]) {
        return fail(cudaGraphExecUpdateErrorTopologyChanged, &b);
      }
    }
    if (a.type == cudaGraphNodeTypeMemAlloc || a.type == cudaGraphNodeTypeMemFree) {
      const bool same = a.type == cudaGraphNodeTypeMemAlloc ? a.allocation == b.allocation : a.free_address == b.free_address;
      if (!same) return fail(cudaGraphExecUpdateErrorParametersChanged, &b);
    }
    if (a.type == cudaGraphNodeTypeConditional &&
        (a.handle != b.handle || a.condition != b.condition || a.bodies.size() != b.bodies.size())) {
      return fail(cudaGraphExecUpdateErrorParametersChanged, &b);
    }
    if (a.type == cudaGraphNodeTypeGraph || a.type == cudaGraphNodeTypeConditional) {
      for (std::size_t k = 0; k < a.bodies.size(); ++k) {
        if (!same_shape(*a.bodies[k], *b.bodies[k], info)) return false;
      }
    }
  }
  return true;
}

void take_params(const Graph& graph, Graph& exec, std::map<const GraphNode*, GraphNode*>& node_of) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    GraphNode& target = *exec.nodes[i];
    const bool enabled = target.enabled;
    gpuvp::cudart::copy_params(*graph.nodes[i], target);
    target.enabled = enabled;
    node_of[graph.nodes[i].get()] = &target;
    for (std::size_t k = 0; k < target.bodies.size(); ++k) take_params(*graph.nodes[i]->bodies[k], *target.bodies[k], node_of);
  }
}

const char* type_name(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "event wait";
    case cudaGraphNodeTypeEventRecord: return "event record";
    case cudaGraphNodeTypeMemAlloc: return "mem alloc";
    case cudaGraphNodeTypeMemFree: return "mem free";
    case cudaGraphNodeTypeConditional: return "conditional";
    default: return "other";
  }
}

void print_dot(std::FILE* out, const Graph& graph, const std::string& prefix) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& node = *graph.nodes[i];
    std::fprintf(out, "  \"%s%zu\" [label=\"%s%s%s\"];\n", prefix.c_str(), i, type_name(node.type),
                 node.function != nullptr ? " " : "", node.function != nullptr ? node.function->name.c_str() : "");
    for (std::size_t k = 0; k < node.bodies.size(); ++k) {
      const std::string nested = prefix + std::to_string(i) + "." + std::to_string(k) + ".";
      print_dot(out, *node.bodies[k], nested);
      for (std::size_t j = 0; j < node.bodies[k]->nodes.size(); ++j) {
        if (node.bodies[k]->nodes[j]->dependencies.empty()) {
          std::fprintf(out, "  \"%s%zu\" -> \"%s%zu\" [style=dashed];\n", prefix.c_str(), i, nested.c_str(), j);
        }
      }
    }
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const GraphNode* d : graph.nodes[i]->dependencies) {
      std::size_t from = 0;
      while (graph.nodes[from].get() != d) ++from;
      std::fprintf(out, "  \"%s%zu\" -> \"%s%zu\";\n", prefix.c_str(), from, prefix.c_str(), i);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Graphs.

GPUVP_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
  return with_runtime([&](Runtime& runtime) {
    if (graph == nullptr || flags != 0) return cudaErrorInvalidValue;
    auto made = std::make_unique<Graph>();
    *graph = handle_of(made.get());
    state(runtime).live_graphs.insert(made.get());
    state(runtime).graphs[made.get()] = std::move(made);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return with_runtime([&](Runtime& runtime) {
    const auto it = state(runtime).graphs.find(reinterpret_cast<Graph*>(graph));
    if (it == state(runtime).graphs.end()) return cudaErrorInvalidValue;  // not one the program owns
    gpuvp::cudart::forget(state(runtime), *it->second);
    state(runtime).graphs.erase(it);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, original);
    if (clone == nullptr || graph == nullptr) return cudaErrorInvalidValue;
    std::map<const GraphNode*, GraphNode*> node_of_original;
    auto made = gpuvp::cudart::clone_graph(*graph, &node_of_original);
    made->originals = std::move(node_of_original);
    gpuvp::cudart::adopt(state(runtime), *made);
    *clone = handle_of(made.get());
    state(runtime).graphs[made.get()] = std::move(made);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* node, cudaGraphNode_t original, cudaGraph_t clone) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, clone);
    if (node == nullptr || graph == nullptr) return cudaErrorInvalidValue;
    const auto it = graph->originals.find(reinterpret_cast<GraphNode*>(original));
    if (it == graph->originals.end() || state(runtime).live_nodes.count(it->second) == 0) return cudaErrorInvalidValue;
    *node = handle_of(it->second);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph_handle, cudaGraphNode_t* nodes, size_t* count) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr) return cudaErrorInvalidValue;
    std::vector<GraphNode*> all;
    for (const auto& node : graph->nodes) all.push_back(node.get());
    return list(all, nodes, count, [](GraphNode* n) { return handle_of(n); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph_handle, cudaGraphNode_t* nodes, size_t* count) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr) return cudaErrorInvalidValue;
    std::vector<GraphNode*> roots;
    for (const auto& node : graph->nodes) {
      if (node->dependencies.empty()) roots.push_back(node.get());
    }
    return list(roots, nodes, count, [](GraphNode* n) { return handle_of(n); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph_handle, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                           cudaGraphEdgeData* edges, size_t* count) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr || count == nullptr || ((from == nullptr) != (to == nullptr))) return cudaErrorInvalidValue;
    std::vector<std::pair<GraphNode*, GraphNode*>> all;
    for (const auto& node : graph->nodes) {
      for (GraphNode* d : node->dependencies) all.emplace_back(d, node.get());
    }
    if (from != nullptr) {
      for (std::size_t i = 0; i < *count; ++i) {
        from[i] = i < all.size() ? handle_of(all[i].first) : nullptr;
        to[i] = i < all.size() ? handle_of(all[i].second) : nullptr;
        if (edges != nullptr) edges[i] = cudaGraphEdgeData{};
      }
    }
    *count = all.size();
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node_handle, cudaGraphNode_t* nodes,
                                                      cudaGraphEdgeData* edges, size_t* count) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr) return cudaErrorInvalidValue;
    return node_list(node->dependencies, nodes, edges, count);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node_handle, cudaGraphNode_t* nodes,
                                                        cudaGraphEdgeData* edges, size_t* count) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr) return cudaErrorInvalidValue;
    return node_list(node->dependents, nodes, edges, count);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph_handle, const cudaGraphNode_t* from,
                                                  const cudaGraphNode_t* to, const cudaGraphEdgeData* edges,
                                                  size_t count) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr || (count != 0 && (from == nullptr || to == nullptr))) return cudaErrorInvalidValue;
    if (const cudaError_t e = check_edges(edges, count); e != cudaSuccess) return e;
    std::vector<std::pair<GraphNode*, GraphNode*>> added;
    for (std::size_t i = 0; i < count; ++i) {
      GraphNode* a = node_of(runtime, from[i]);
      GraphNode* b = node_of(runtime, to[i]);
      if (a == nullptr || b == nullptr || a->graph != graph || b->graph != graph || a == b) return cudaErrorInvalidValue;
      if (std::find(b->dependencies.begin(), b->dependencies.end(), a) != b->dependencies.end()) {
        return cudaErrorInvalidValue;  // an existing dependency
      }
      for (const auto& pair : added) {
        if (pair.first == a && pair.second == b) return cudaErrorInvalidValue;
      }
      added.emplace_back(a, b);
    }
    for (const auto& [a, b] : added) {
      b->dependencies.push_back(a);
      a->dependents.push_back(b);
    }
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph_handle, const cudaGraphNode_t* from,
                                                     const cudaGraphNode_t* to, const cudaGraphEdgeData* edges,
                                                     size_t count) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr || (count != 0 && (from == nullptr || to == nullptr))) return cudaErrorInvalidValue;
    if (const cudaError_t e = check_edges(edges, count); e != cudaSuccess) return e;
    for (std::size_t i = 0; i < count; ++i) {
      GraphNode* a = node_of(runtime, from[i]);
      GraphNode* b = node_of(runtime, to[i]);
      if (a == nullptr || b == nullptr || a->graph != graph || b->graph != graph ||
          std::find(b->dependencies.begin(), b->dependencies.end(), a) == b->dependencies.end()) {
        return cudaErrorInvalidValue;
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      auto* a = reinterpret_cast<GraphNode*>(from[i]);
      auto* b = reinterpret_cast<GraphNode*>(to[i]);
      b->dependencies.erase(std::find(b->dependencies.begin(), b->dependencies.end(), a));
      a->dependents.erase(std::find(a->dependents.begin(), a->dependents.end(), b));
    }
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node_handle) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr) return cudaErrorInvalidValue;
    gpuvp::cudart::remove_node(state(runtime), *node);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node_handle, cudaGraphNodeType* type) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || type == nullptr) return cudaErrorInvalidValue;
    *type = node->type;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph_handle, const char* path, unsigned int) {
  return with_runtime([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr || path == nullptr) return cudaErrorInvalidValue;
    std::FILE* out = std::fopen(path, "w");
    if (out == nullptr) return cudaErrorOperatingSystem;
    std::fprintf(out, "digraph gpuvp_graph {\n");
    print_dot(out, *graph, "");
    std::fprintf(out, "}\n");
    std::fclose(out);
    return cudaSuccess;
  });
}

// ---------------------------------------------------------------------------------------------
// Adding nodes.

GPUVP_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                          const cudaGraphEdgeData* edges, size_t count, cudaGraphNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    if (params == nullptr) return cudaErrorInvalidValue;
    if (const cudaError_t e = check_edges(edges, count); e != cudaSuccess) return e;
    const cudaError_t e = add(runtime, node, graph, dependencies, count, params->type,
                              [&](GraphNode& n) { return fill_generic(runtime, n, params); });
    if (e == cudaSuccess && params->type == cudaGraphNodeTypeConditional) {
      report_bodies(reinterpret_cast<GraphNode*>(*node), &params->conditional);
    }
    return e;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                const cudaGraphNode_t* dependencies, size_t count,
                                                const cudaKernelNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    if (params == nullptr) return cudaErrorInvalidValue;
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeKernel, [&](GraphNode& n) {
      return GraphAccess::set_kernel(runtime, n, params->func, params->gridDim, params->blockDim, params->sharedMemBytes,
                                     params->kernelParams, params->extra);
    });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                const cudaGraphNode_t* dependencies, size_t count,
                                                const cudaMemcpy3DParms* params) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemcpy,
               [&](GraphNode& n) { return fill_copy(runtime, n, params); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph,
                                                  const cudaGraphNode_t* dependencies, size_t count, void* dst,
                                                  const void* src, size_t bytes, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemcpy,
               [&](GraphNode& n) { return fill_copy_1d(runtime, n, dst, src, bytes, kind); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t* node, cudaGraph_t graph,
                                                        const cudaGraphNode_t* dependencies, size_t count,
                                                        const void* symbol, const void* src, size_t bytes,
                                                        size_t offset, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemcpy, [&](GraphNode& n) {
      return fill_copy_symbol(runtime, n, symbol, const_cast<void*>(src), bytes, offset, kind, true);
    });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t* node, cudaGraph_t graph,
                                                          const cudaGraphNode_t* dependencies, size_t count, void* dst,
                                                          const void* symbol, size_t bytes, size_t offset,
                                                          cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemcpy, [&](GraphNode& n) {
      return fill_copy_symbol(runtime, n, symbol, dst, bytes, offset, kind, false);
    });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                const cudaGraphNode_t* dependencies, size_t count,
                                                const cudaMemsetParams* params) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemset,
               [&](GraphNode& n) { return fill_memset(n, params); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                              const cudaGraphNode_t* dependencies, size_t count,
                                              const cudaHostNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    if (params == nullptr) return cudaErrorInvalidValue;
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeHost,
               [&](GraphNode& n) { return fill_host(n, params->fn, params->userData); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                    const cudaGraphNode_t* dependencies, size_t count,
                                                    cudaGraph_t child) {
  return with_runtime([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeGraph,
               [&](GraphNode& n) { return fill_child(runtime, n, child); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                               const cudaGraphNode_t* dependencies, size_t count) {
  return with_runtime([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeEmpty, [](GraphNode&) { return cudaSuccess; });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                     const cudaGraphNode_t* dependencies, size_t count,
                                                     cudaEvent_t event) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeEventRecord,
               [&](GraphNode& n) { return fill_event(runtime, n, event); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                   const cudaGraphNode_t* dependencies, size_t count, cudaEvent_t event) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeWaitEvent,
               [&](GraphNode& n) { return fill_event(runtime, n, event); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                  const cudaGraphNode_t* dependencies, size_t count,
                                                  cudaMemAllocNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemAlloc,
               [&](GraphNode& n) { return fill_alloc(runtime, n, params); });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                 const cudaGraphNode_t* dependencies, size_t count, void* dptr) {
  return with_runtime([&](Runtime& runtime) {
    return add(runtime, node, graph, dependencies, count, cudaGraphNodeTypeMemFree, [&](GraphNode& n) {
      if (dptr == nullptr) return cudaErrorInvalidValue;
      n.free_address = dptr;
      return cudaSuccess;
    });
  });
}

GPUVP_EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t graph_handle,
                                                          unsigned int default_value, unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr) return cudaErrorInvalidValue;
    return GraphAccess::create_handle(runtime, *graph, default_value, flags, handle);
  });
}

// ---------------------------------------------------------------------------------------------
// Node parameters.

GPUVP_EXPORT cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node_handle, cudaGraphNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr) return cudaErrorInvalidValue;
    return set_node_params(runtime, *node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node_handle, cudaKernelNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
    params->func = const_cast<void*>(node->func);
    params->gridDim = node->grid;
    params->blockDim = node->block;
    params->sharedMemBytes = node->shared_bytes;
    params->kernelParams = node->argument_pointers.empty() ? nullptr : node->argument_pointers.data();
    params->extra = nullptr;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node_handle, const cudaKernelNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
    return GraphAccess::set_kernel(runtime, *node, params->func, params->gridDim, params->blockDim,
                                   params->sharedMemBytes, params->kernelParams, params->extra);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node_handle, cudaMemcpy3DParms* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    *params = node->copy;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node_handle, const cudaMemcpy3DParms* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy(runtime, *node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node_handle, void* dst, const void* src,
                                                        size_t bytes, cudaMemcpyKind kind) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_1d(runtime, *node, dst, src, bytes, kind);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node_handle, const void* symbol,
                                                              const void* src, size_t bytes, size_t offset,
                                                              cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_symbol(runtime, *node, symbol, const_cast<void*>(src), bytes, offset, kind, true);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node_handle, void* dst,
                                                                const void* symbol, size_t bytes, size_t offset,
                                                                cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_symbol(runtime, *node, symbol, dst, bytes, offset, kind, false);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node_handle, cudaMemsetParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeMemset) return cudaErrorInvalidValue;
    *params = node->memset;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node_handle, const cudaMemsetParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemset) return cudaErrorInvalidValue;
    return fill_memset(*node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node_handle, cudaHostNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeHost) return cudaErrorInvalidValue;
    params->fn = node->host_fn;
    params->userData = node->user_data;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node_handle, const cudaHostNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeHost) return cudaErrorInvalidValue;
    return fill_host(*node, params->fn, params->userData);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node_handle, cudaGraph_t* graph) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || graph == nullptr || node->type != cudaGraphNodeTypeGraph) return cudaErrorInvalidValue;
    *graph = handle_of(node->bodies[0].get());
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node_handle, cudaEvent_t* event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || event == nullptr || node->type != cudaGraphNodeTypeEventRecord) return cudaErrorInvalidValue;
    *event = node->event;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node_handle, cudaEvent_t event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeEventRecord) return cudaErrorInvalidValue;
    return fill_event(runtime, *node, event);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node_handle, cudaEvent_t* event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || event == nullptr || node->type != cudaGraphNodeTypeWaitEvent) return cudaErrorInvalidValue;
    *event = node->event;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node_handle, cudaEvent_t event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeWaitEvent) return cudaErrorInvalidValue;
    return fill_event(runtime, *node, event);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node_handle, cudaMemAllocNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeMemAlloc) return cudaErrorInvalidValue;
    *params = node->alloc_params;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node_handle, void* dptr) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = node_of(runtime, node_handle);
    if (node == nullptr || dptr == nullptr || node->type != cudaGraphNodeTypeMemFree) return cudaErrorInvalidValue;
    *static_cast<void**>(dptr) = node->free_address;
    return cudaSuccess;
  });
}

// ---------------------------------------------------------------------------------------------
// Executable graphs.

GPUVP_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  return with_device([&](Runtime& runtime) { return instantiate(runtime, exec, graph, flags, nullptr, nullptr); });
}

GPUVP_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                       unsigned long long flags) {
  return with_device([&](Runtime& runtime) {
    if ((flags & cudaGraphInstantiateFlagUpload) != 0) return cudaErrorInvalidValue;  // WithParams only
    return instantiate(runtime, exec, graph, flags, nullptr, nullptr);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                        cudaGraphInstantiateParams* params) {
  return with_device([&](Runtime& runtime) {
    if (params == nullptr) return cudaErrorInvalidValue;
    params->errNode_out = nullptr;
    const cudaError_t e = instantiate(runtime, exec, graph, params->flags, &params->errNode_out, &params->result_out);
    if (e == cudaSuccess && (params->flags & cudaGraphInstantiateFlagUpload) != 0 &&
        GraphAccess::stream_of(runtime, params->uploadStream) == nullptr) {
      return cudaErrorInvalidResourceHandle;  // nothing to upload ahead of a launch here; the stream must exist
    }
    return e;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                             cudaGraphInstantiateParams* params) {
  if (params != nullptr) params->uploadStream = Runtime::per_thread(params->uploadStream);
  return cudaGraphInstantiateWithParams(exec, graph, params);
}

GPUVP_EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec_handle, unsigned long long* flags) {
  return with_runtime([&](Runtime& runtime) {
    GraphExec* exec = exec_of(runtime, exec_handle);
    if (exec == nullptr || flags == nullptr) return cudaErrorInvalidValue;
    *flags = exec->flags;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec_handle) {
  return with_runtime([&](Runtime& runtime) {
    GraphExec* exec = exec_of(runtime, exec_handle);
    if (exec == nullptr) return cudaErrorInvalidValue;
    GraphAccess::release_lanes(runtime, *exec);
    state(runtime).execs.erase(exec);  // launched work keeps running
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec_handle, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) {
    GraphExec* exec = exec_of(runtime, exec_handle);
    if (exec == nullptr) return cudaErrorInvalidValue;
    return GraphAccess::launch(runtime, *exec, stream);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  return cudaGraphLaunch(exec, Runtime::per_thread(stream));
}

// Nothing is prepared ahead of a launch here (a launch submits the nodes' commands itself).
GPUVP_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec_handle, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) {
    if (exec_of(runtime, exec_handle) == nullptr) return cudaErrorInvalidValue;
    return GraphAccess::stream_of(runtime, stream) == nullptr ? cudaErrorInvalidResourceHandle : cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  return cudaGraphUpload(exec, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec_handle, cudaGraph_t graph_handle,
                                             cudaGraphExecUpdateResultInfo* info) {
  return with_runtime([&](Runtime& runtime) {
    GraphExec* exec = exec_of(runtime, exec_handle);
    Graph* graph = graph_of(runtime, graph_handle);
    if (info != nullptr) *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateSuccess, nullptr, nullptr};
    if (exec == nullptr || graph == nullptr) {
      if (info != nullptr) info->result = cudaGraphExecUpdateError;
      return cudaErrorInvalidValue;
    }
    if (!same_shape(*exec->graph, *graph, info)) return cudaErrorGraphExecUpdateFailure;
    take_params(*graph, *exec->graph, exec->node_of);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                    cudaGraphNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr) return cudaErrorInvalidValue;
    return set_node_params(runtime, *node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                          const cudaKernelNodeParams* params) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
    return GraphAccess::set_kernel(runtime, *node, params->func, params->gridDim, params->blockDim,
                                   params->sharedMemBytes, params->kernelParams, params->extra);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                          const cudaMemcpy3DParms* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy(runtime, *node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                            void* dst, const void* src, size_t bytes,
                                                            cudaMemcpyKind kind) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_1d(runtime, *node, dst, src, bytes, kind);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                                  const void* symbol, const void* src, size_t bytes,
                                                                  size_t offset, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_symbol(runtime, *node, symbol, const_cast<void*>(src), bytes, offset, kind, true);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                                    void* dst, const void* symbol, size_t bytes,
                                                                    size_t offset, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemcpy) return cudaErrorInvalidValue;
    return fill_copy_symbol(runtime, *node, symbol, dst, bytes, offset, kind, false);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                          const cudaMemsetParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeMemset) return cudaErrorInvalidValue;
    return fill_memset(*node, params);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                        const cudaHostNodeParams* params) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || params == nullptr || node->type != cudaGraphNodeTypeHost) return cudaErrorInvalidValue;
    return fill_host(*node, params->fn, params->userData);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                              cudaGraph_t child) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    Graph* graph = graph_of(runtime, child);
    if (node == nullptr || graph == nullptr || node->type != cudaGraphNodeTypeGraph) return cudaErrorInvalidValue;
    cudaGraphExecUpdateResultInfo info{};
    if (!same_shape(*node->bodies[0], *graph, &info)) return cudaErrorInvalidValue;  // the topology must not change
    GraphExec* owner = exec_of(runtime, exec);
    take_params(*graph, *node->bodies[0], owner->node_of);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                              cudaEvent_t event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeEventRecord) return cudaErrorInvalidValue;
    return fill_event(runtime, *node, event);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                            cudaEvent_t event) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || node->type != cudaGraphNodeTypeWaitEvent) return cudaErrorInvalidValue;
    return fill_event(runtime, *node, event);
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                 unsigned int enabled) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || (node->type != cudaGraphNodeTypeKernel && node->type != cudaGraphNodeTypeMemcpy &&
                            node->type != cudaGraphNodeTypeMemset)) {
      return cudaErrorInvalidValue;  // kernel, memcpy and memset nodes only, as CUDA documents
    }
    node->enabled = enabled != 0;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node_handle,
                                                 unsigned int* enabled) {
  return with_runtime([&](Runtime& runtime) {
    GraphNode* node = exec_node(runtime, exec, node_handle);
    if (node == nullptr || enabled == nullptr) return cudaErrorInvalidValue;
    *enabled = node->enabled ? 1 : 0;
    return cudaSuccess;
  });
}

// ---------------------------------------------------------------------------------------------
// Graph memory.

GPUVP_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return with_device([&](Runtime& runtime) {
    if (device != 0) return cudaErrorInvalidDevice;
    if (value == nullptr) return cudaErrorInvalidValue;
    // Graph memory is allocated when its node is created: used and reserved are the same.
    const GraphState& s = state(runtime);
    switch (attr) {
      case cudaGraphMemAttrUsedMemCurrent:
      case cudaGraphMemAttrReservedMemCurrent: *static_cast<uint64_t*>(value) = s.graph_memory; return cudaSuccess;
      case cudaGraphMemAttrUsedMemHigh:
      case cudaGraphMemAttrReservedMemHigh: *static_cast<uint64_t*>(value) = s.graph_memory_high; return cudaSuccess;
      default: return cudaErrorInvalidValue;
    }
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return with_device([&](Runtime& runtime) {
    if (device != 0) return cudaErrorInvalidDevice;
    if (value == nullptr || *static_cast<uint64_t*>(value) != 0 ||
        (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh)) {
      return cudaErrorInvalidValue;  // only the high-water marks, and only reset to 0
    }
    state(runtime).graph_memory_high = state(runtime).graph_memory;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device) {
  return with_device([&](Runtime&) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; });
}

// ---------------------------------------------------------------------------------------------
// Stream capture.

GPUVP_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return with_device([&](Runtime& runtime) {
    return GraphAccess::begin_capture(runtime, stream, nullptr, nullptr, 0, mode);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return cudaStreamBeginCapture(Runtime::per_thread(stream), mode);
}

GPUVP_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph_handle,
                                                       const cudaGraphNode_t* dependencies,
                                                       const cudaGraphEdgeData* edges, size_t count,
                                                       cudaStreamCaptureMode mode) {
  return with_device([&](Runtime& runtime) {
    Graph* graph = graph_of(runtime, graph_handle);
    if (graph == nullptr || (count != 0 && dependencies == nullptr)) return cudaErrorInvalidValue;
    if (const cudaError_t e = check_edges(edges, count); e != cudaSuccess) return e;
    return GraphAccess::begin_capture(runtime, stream, graph, dependencies, count, mode);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                            const cudaGraphNode_t* dependencies,
                                                            const cudaGraphEdgeData* edges, size_t count,
                                                            cudaStreamCaptureMode mode) {
  return cudaStreamBeginCaptureToGraph(Runtime::per_thread(stream), graph, dependencies, edges, count, mode);
}

GPUVP_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  return with_device([&](Runtime& runtime) { return GraphAccess::end_capture(runtime, stream, graph); });
}

GPUVP_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph) {
  return cudaStreamEndCapture(Runtime::per_thread(stream), graph);
}

GPUVP_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return with_device([&](Runtime& runtime) {
    return GraphAccess::capture_info(runtime, stream, status, nullptr, nullptr, nullptr, nullptr, nullptr);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return cudaStreamIsCapturing(Runtime::per_thread(stream), status);
}

GPUVP_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                  unsigned long long* id, cudaGraph_t* graph,
                                                  const cudaGraphNode_t** dependencies,
                                                  const cudaGraphEdgeData** edge_data, size_t* dependency_count) {
  return with_device([&](Runtime& runtime) {
    return GraphAccess::capture_info(runtime, stream, status, id, graph, dependencies, edge_data, dependency_count);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                       unsigned long long* id, cudaGraph_t* graph,
                                                       const cudaGraphNode_t** dependencies,
                                                       const cudaGraphEdgeData** edge_data, size_t* dependency_count) {
  return cudaStreamGetCaptureInfo(Runtime::per_thread(stream), status, id, graph, dependencies, edge_data,
                                  dependency_count);
}

GPUVP_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                             const cudaGraphEdgeData* edges, size_t count,
                                                             unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    if (count != 0 && dependencies == nullptr) return cudaErrorInvalidValue;
    if (const cudaError_t e = check_edges(edges, count); e != cudaSuccess) return e;
    return GraphAccess::update_capture_dependencies(runtime, stream, dependencies, count, flags);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                                  const cudaGraphEdgeData* edges, size_t count,
                                                                  unsigned int flags) {
  return cudaStreamUpdateCaptureDependencies(Runtime::per_thread(stream), dependencies, edges, count, flags);
}

// The calling thread's capture interaction mode (GraphAccess::forbids applies it).
GPUVP_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  return with_runtime([&](Runtime&) {
    if (mode == nullptr) return cudaErrorInvalidValue;
    if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
        *mode != cudaStreamCaptureModeRelaxed) {
      return cudaErrorInvalidValue;
    }
    std::swap(GraphAccess::thread_mode(), *mode);
    return cudaSuccess;
  });
}
