// Replay of an elastic trace (platform/elastic_trace) on the memory system of a configuration:
// TraceInjectors (models/gpu/trace_injector) in place of the SMs, bound through L1 TLBs to the
// unified-memory system (GMMU, PCIe migrations) and to SM clusters, the crossbar, the L2 slices
// and the HBM controller built from `params` exactly as the timing model builds them, plus the
// copy engine replaying each launch's parameter and code writes; the host's managed-memory
// operations are performed before each kernel at their captured distance.
//
// An arbiter (seed 001 Fig. 4b) enforces the trace's boundaries: kernels one after another
// (each begins after the previous one ended, the captured host gap later); a CTA starts when
// what it waited for at capture (the kernel's begin, or the end of the CTA whose slot it took)
// has happened in the replay, the captured gap later; a kernel ends when its last CTA ended,
// the captured completion gap later, and the copy engine is idle.
//
// Modes:
//   sync (default): every CTA on its captured SM. `replicas` = k > 1 replays the trace on
//     k * N SMs (weak scaling): replica r runs every CTA on SM sm + r * N; with
//     `offset_stride` > 0, replica r adds r * offset_stride to the addresses of lines the trace
//     writes (read-only lines stay shared). The default stride is 0: no offsetting.
//   task (strong scaling): CTAs are tasks put on `task_sms` SMs, by a static map
//     (`task_map`: kernel index or all kernels, CTA, SM) or, with no map, dynamically: each SM
//     takes the next CTA in grid order when a slot frees, as the CTA scheduler does. Per SM at
//     most `cta_slots` CTAs run at once (0: the most the capture had resident on one SM).
// L1: as captured (the requests that passed the captured L1), or redone (`l1_redo`): each
// injector looks up every load of the trace, the captured hits and merges included, in an L1 of
// the replay configuration (TraceInjector::enable_l1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tlm/trace_observer.h"
#include "platform/elastic_trace/elastic_trace.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::replay {

struct TaskAssignment {
  static constexpr uint32_t kAllKernels = 0xffffffffu;
  uint32_t kernel = kAllKernels;  // index in the trace
  uint64_t cta = 0;
  uint32_t sm = 0;
};

struct ReplayOptions {
  enum class Mode { kSync, kTask };
  Mode mode = Mode::kSync;
  uint32_t replicas = 1;
  uint64_t offset_stride = 0;  // bytes
  uint32_t task_sms = 0;       // task mode: SMs (0: gpu.sm.count of the replay configuration)
  uint32_t cta_slots = 0;      // task mode: CTAs per SM at once (0: as captured)
  std::vector<TaskAssignment> task_map;  // task mode: empty = dynamic
  // Redo the L1 with the replay configuration's gpu.sm.l1.* (elastic::interleave_l1_hits and
  // TraceInjector::enable_l1) instead of replaying what passed the captured L1;
  // captured_l1_hit_latency: gpu.sm.l1.hit_latency of the captured configuration.
  bool l1_redo = false;
  uint32_t captured_l1_hit_latency = 0;
};

struct KernelResult {
  uint64_t id = 0;
  std::string name;
  uint64_t captured_cycles = 0;
  uint64_t cycles = 0;  // replayed: core cycles from begin to end
  uint64_t ps = 0;
};

struct ReplayResult {
  std::vector<KernelResult> kernels;
  uint32_t sms = 0;            // injectors built
  uint64_t simulated_ps = 0;
  uint64_t requests = 0;
};

// Reads "KERNEL CTA SM" lines (KERNEL: index in the trace or '*'; '#' starts a comment);
// throws std::invalid_argument naming the file and line.
std::vector<TaskAssignment> read_task_map(const std::string& path);

// Replays `trace` (marking its shared lines, elastic::mark_shared_lines) in the current SystemC context (time resolution 1 ps, nothing elaborated
// yet); statistics go to `stats` (groups gpu, gpu.injector[i], gpu.crossbar, memory.*), one
// kernel scope per replayed kernel. `tracer` (optional): TLM links and kernel/CTA spans as the
// timing model reports them. Throws std::invalid_argument for options the trace cannot meet
// (an SM index beyond the platform, a map naming a CTA the kernel lacks).
ReplayResult run_replay(elastic::Trace& trace, const PlatformParams& params, const ReplayOptions& options,
                        stats::Registry& stats, TraceObserver* tracer = nullptr);

}  // namespace gpuvp::replay
