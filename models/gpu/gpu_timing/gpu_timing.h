// The GPU's timing path as one module: GpuCore (CTA scheduler + SM clusters), the crossbar, one
// L2 slice per memory sub-partition and the HBM controller, built from PlatformParams and wired
// through their TLM-2.0 sockets (cluster i -> crossbar.cluster, crossbar.slice k -> L2 slice k,
// every slice -> HBM). The functional model (ptx::KernelRun) still computes every value; this
// module decides when each warp instruction issues.
//
//   GpuTiming timing("timing", params, ClockDomains::from(params), stats);
//   ptx::KernelRun run(...);
//   KernelTiming t = timing.run(run, kernel_id);   // from an SC_THREAD: returns when the kernel ended
//   ptx::LaunchResult r = run.finish();
//
// Statistics, group "gpu" (per-kernel deltas land in the registry's kernel scopes): kernels,
// cycles, time_ps, warp/thread instructions, L1/L2 sector hits and accesses, DRAM bytes, row hits
// and requests, summed over every SM, slice and pseudo-channel at the end of each kernel; ratios
// ipc, l1_hit_rate, l2_hit_rate, dram_bandwidth (B/s over kernel time), row_buffer_hit_rate.
// The per-instance groups (gpu.sm[i], memory.l2[k], memory.hbm.channel[c]) carry the detail.
#pragma once

#include <cstdint>
#include <memory>

#include <systemc>

#include "models/gpu/ptx/kernel_run.h"
#include "models/tlm/trace_observer.h"
#include "platform/clock_domains.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::parallel {
class RankExchange;
}

namespace gpuvp::uvm {
class UvmSystem;
}

namespace gpuvp::gpu {

struct KernelTiming {
  uint64_t cycles = 0;  // core cycles from submission to completion: launch latency, CTAs, completion latency
  uint64_t ps = 0;      // the same span in simulated time
};

class GpuTiming : public sc_core::sc_module {
 public:
  // `tracer` (optional, outlives this module): every link is bound through a TlmMonitor it
  // selects, and it hears of kernels and CTAs. Null: direct bindings, no tracing cost.
  GpuTiming(sc_core::sc_module_name name, const PlatformParams& params, const ClockDomains& clocks,
            stats::Registry& stats, TraceObserver* tracer = nullptr);
  ~GpuTiming() override;
  GpuTiming(const GpuTiming&) = delete;
  GpuTiming& operator=(const GpuTiming&) = delete;

  // Runs `run` to its end (completion or fault) on the timing model. Must be called from an
  // SC_THREAD; simulated time advances by the kernel's duration. Throws std::invalid_argument
  // when one CTA does not fit on an SM (the caller decides what that means). A kernel running
  // longer than 10 s of wall time prints a progress line to stderr every 10 s. `graph_node`: the
  // kernel is a node of a launched CUDA graph (gpu.launch.graph_latency applies).
  KernelTiming run(ptx::KernelRun& run, uint64_t kernel_id, bool graph_node = false);

  uint32_t sm_count() const;
  // Finishes a window the SMs may be running on other host threads (SmStepper::quiesce).
  void quiesce();
  // SM partitions in several ranks (SmStepper::set_rank_exchange); statistics reads then gather
  // every SM's from the rank that steps it.
  void set_rank_exchange(parallel::RankExchange* exchange);
  // Unified memory (models/uvm/uvm_system.h): an L1 TLB sits on every SM's memory path.
  uvm::UvmSystem& uvm();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  stats::Registry& registry_;
};

}  // namespace gpuvp::gpu
