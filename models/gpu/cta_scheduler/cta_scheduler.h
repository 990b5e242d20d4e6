// CTA scheduler (seed 000 §B.1): a kernel queue fed by launches and an SM launch table whose
// CTA slots per SM are sized by occupancy (threads, warps, registers, static + dynamic shared
// memory within the kernel's shared capacity, CTA limit). A kernel's shared capacity is its
// carve-out (SmParams::shared_capacity); an SM runs CTAs of one capacity at a time and is
// reconfigured (Sm::configure_shared: the L1 takes the rest) when it has no resident CTA. Each core cycle it issues at most one CTA to each SM that has room,
// taking the oldest kernel with CTAs left that fits (so concurrent kernels share SMs once the
// older one has issued everything, or where it does not fit); slots are freed by the SMs'
// CTA-complete callbacks. A cooperative kernel (LaunchConfig::cooperative) with CTAs left to
// issue holds back every younger kernel, so its whole grid -- which the command processor has
// checked fits the GPU at once -- becomes resident as older kernels drain, and grid-wide
// barriers cannot wait on CTAs that never start. Slots are freed by the SMs'
// CTA-complete callbacks. A scheduler with nothing to issue waits on an event.
//
// Launch overheads (LaunchParams, launch_params.h; set_launch_latencies, whole core cycles):
// a kernel's first CTA may be dispatched `launch` cycles after the first edge at or after its
// submission; each CTA reaches its SM `cta_dispatch` cycles after the scheduler took its slot;
// `done` runs `completion` cycles after the edge following the last CTA's end. A kernel node of a
// CUDA graph waits `graph_launch` cycles instead of `launch`. All zero by
// default here; GpuTiming sets them from the configuration.
//
// CTA side: Sm::launch_cta / Sm::on_cta_done (direct calls in the same SystemC process
// context; the scheduler owns each SM's on_cta_done callback).
//
// Occupancy is sized by the resources the host told with the launch (KernelRun::resources(): the
// registers, static shared memory and local memory ptxas gave the kernel's SASS); a kernel told
// nothing gets registers estimated from its PTX (estimate_registers_per_thread).
//
// Statistics (group "gpu.cta_scheduler"): ctas_issued, kernels_completed; per launch (a kernel
// scope holds its launch's figures): histograms registers_per_thread, shared_bytes_per_cta,
// local_bytes_per_thread, ctas_per_sm (occupancy) and sass_arch (0: estimated); counters
// resources_cubin_exact / resources_cubin_nearest / resources_estimated (where the figures came
// from) and occupancy_limited_by_{ctas,threads,warps,registers,shared_memory} (the limit).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "gpuvp/occupancy.h"
#include "models/gpu/cta_scheduler/launch_params.h"
#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/sm/sm.h"
#include "models/gpu/sm/sm_params.h"
#include "models/tlm/clock_domain.h"
#include "models/tlm/trace_observer.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

// What one CTA of a kernel occupies on an SM.
struct CtaFootprint {
  uint32_t threads = 0;
  uint32_t registers_per_thread = 0;
  uint32_t shared_bytes = 0;  // static + dynamic
  uint32_t local_bytes_per_thread = 0;  // told by the host (0 when estimated)
};

using device::Occupancy;
using device::OccupancyLimit;
const char* to_string(OccupancyLimit limit) noexcept;

// Registers are allocated per warp in units of kRegisterAllocationUnit (Volta/Pascal: 256).
constexpr uint32_t kRegisterAllocationUnit = device::kRegisterAllocationUnit;
// By the shared rule of gpuvp/occupancy.h (libcudart answers cudaOccupancy* by it too).
Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta);
// The same on an SM whose shared memory is `shared_capacity` bytes (the kernel's carve-out).
Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta, uint64_t shared_capacity);

// Registers per thread for a kernel the host told nothing about. PTX registers are virtual
// (ptxas allocates the real ones), so this is an estimate: the 32-bit-equivalent count of the
// registers the kernel's call tree declares (64-bit slots count as two, predicates not at all),
// rounded up to a multiple of 8, clamped to [16, 255].
uint32_t estimate_registers_per_thread(const ptx::KernelRun& run);
// A CTA's footprint: the told resources (run.resources()), or the estimate when none were told.
CtaFootprint footprint(const ptx::KernelRun& run);

// The launch overheads in whole cycles of one clock (each latency rounded up).
struct LaunchLatencies {
  uint64_t launch = 0;
  uint64_t cta_dispatch = 0;
  uint64_t completion = 0;
  uint64_t graph_launch = 0;  // `launch` for a kernel node of a CUDA graph
  static LaunchLatencies in_cycles(const LaunchParams& params, const ClockDomain& clock);
};

class CtaScheduler : public sc_core::sc_module {
 public:
  CtaScheduler(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock,
               std::vector<Sm*> sms, stats::Registry& stats, TraceObserver* tracer = nullptr);
  ~CtaScheduler() override;
  CtaScheduler(const CtaScheduler&) = delete;
  CtaScheduler& operator=(const CtaScheduler&) = delete;

  // Before the first submit.
  void set_launch_latencies(const LaunchLatencies& latencies) { latencies_ = latencies; }
  // Queues a kernel; `done` runs the completion latency after its last CTA completed (or the
  // kernel faulted). Throws std::invalid_argument when one CTA does not fit on an SM.
  // `graph_node`: launched as a node of a CUDA graph (the graph launch latency applies).
  void submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done, bool graph_node = false);
  uint32_t pending_kernels() const { return static_cast<uint32_t>(kernels_.size()); }

 private:
  struct Kernel {
    ptx::KernelRun* run = nullptr;
    uint64_t id = 0;
    CtaFootprint cta;
    uint64_t shared_capacity = 0;  // the SM shared memory its carve-out chooses
    uint64_t next_cta = 0;
    uint64_t completed = 0;
    uint64_t first_dispatch_cycle = 0;  // no CTA of it is dispatched before this edge
    std::function<void()> done;
  };
  // A CTA whose slot is taken, on its way to its SM.
  struct Dispatch {
    uint64_t cycle = 0;  // the edge it reaches the SM
    uint32_t sm = 0;
    ptx::KernelRun* run = nullptr;
    uint64_t kernel_id = 0;
    uint64_t cta = 0;
  };
  struct Completion {
    sc_core::sc_time at;
    std::function<void()> done;
  };
  struct SmUsage {
    uint32_t ctas = 0, threads = 0, warps = 0, registers = 0, shared = 0;
    uint64_t shared_capacity = 0;  // as the SM is configured now
  };
  bool fits(const SmUsage& use, const Kernel& k) const;
  void thread();
  void deliver(const Dispatch& d);
  void complete_due();  // SC_METHOD on completion_due_
  void cta_done(uint32_t sm, ptx::KernelRun& run, uint64_t kernel_id);

  const SmParams& params_;
  const ClockDomain& clock_;
  std::vector<Sm*> sms_;
  TraceObserver* tracer_;  // optional: told when each CTA starts and ends
  std::vector<SmUsage> usage_;
  std::vector<Kernel> kernels_;  // queue, oldest first
  LaunchLatencies latencies_;
  std::deque<Dispatch> dispatches_;     // in order of arrival cycle (one latency for all)
  std::deque<Completion> completions_;  // in order of time (one latency for all)
  sc_core::sc_event wake_;
  sc_core::sc_event completion_due_;
  uint32_t next_sm_ = 0;
  stats::Counter& ctas_issued_;
  stats::Counter& kernels_completed_;
  struct LaunchStats;
  std::unique_ptr<LaunchStats> launch_stats_;
};

}  // namespace gpuvp::gpu
