// CTA scheduler (seed 000 §B.1): a kernel queue fed by launches and an SM launch table whose
// CTA slots per SM are sized by occupancy (threads, warps, registers, static + dynamic shared
// memory within the kernel's shared capacity, CTA limit). A kernel's shared capacity is its
// carve-out (SmParams::shared_capacity); an SM runs CTAs of one capacity at a time and is
// reconfigured (Sm::configure_shared: the L1 takes the rest) when it has no resident CTA. Each core cycle it issues at most one CTA to each SM that has room,
// taking the oldest kernel with CTAs left that fits (so concurrent kernels share SMs once the
// older one has issued everything, or where it does not fit); slots are freed by the SMs'
// CTA-complete callbacks. A scheduler with nothing to issue waits on an event.
//
// CTA side: Sm::launch_cta / Sm::on_cta_done (direct calls in the same SystemC process
// context; the scheduler owns each SM's on_cta_done callback).
//
// Statistics (group "gpu.cta_scheduler"): ctas_issued, kernels_completed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>

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
};

enum class OccupancyLimit : uint8_t { kCtas, kThreads, kWarps, kRegisters, kSharedMemory };
const char* to_string(OccupancyLimit limit) noexcept;

struct Occupancy {
  uint32_t ctas_per_sm = 0;  // 0: the CTA does not fit on an SM at all
  OccupancyLimit limit = OccupancyLimit::kCtas;
};

// Registers are allocated per warp in units of kRegisterAllocationUnit (Volta/Pascal: 256).
constexpr uint32_t kRegisterAllocationUnit = 256;
Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta);
// The same on an SM whose shared memory is `shared_capacity` bytes (the kernel's carve-out).
Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta, uint64_t shared_capacity);

// Registers per thread for occupancy. PTX registers are virtual (ptxas allocates the real
// ones), so this is an estimate: the 32-bit-equivalent count of the registers the kernel's
// call tree declares (64-bit slots count as two, predicates not at all), rounded up to a
// multiple of 8, clamped to [16, 255]. Documented as an estimate, not ptxas's number.
uint32_t estimate_registers_per_thread(const ptx::KernelRun& run);
CtaFootprint footprint(const ptx::KernelRun& run);

class CtaScheduler : public sc_core::sc_module {
 public:
  CtaScheduler(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock,
               std::vector<Sm*> sms, stats::Registry& stats, TraceObserver* tracer = nullptr);
  ~CtaScheduler() override;
  CtaScheduler(const CtaScheduler&) = delete;
  CtaScheduler& operator=(const CtaScheduler&) = delete;

  // Queues a kernel; `done` runs when its last CTA completed (or the kernel faulted).
  // Throws std::invalid_argument when one CTA does not fit on an SM.
  void submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done);
  uint32_t pending_kernels() const { return static_cast<uint32_t>(kernels_.size()); }

 private:
  struct Kernel {
    ptx::KernelRun* run = nullptr;
    uint64_t id = 0;
    CtaFootprint cta;
    uint64_t shared_capacity = 0;  // the SM shared memory its carve-out chooses
    uint64_t next_cta = 0;
    uint64_t completed = 0;
    std::function<void()> done;
  };
  struct SmUsage {
    uint32_t ctas = 0, threads = 0, warps = 0, registers = 0, shared = 0;
    uint64_t shared_capacity = 0;  // as the SM is configured now
  };
  bool fits(const SmUsage& use, const Kernel& k) const;
  void thread();
  void cta_done(uint32_t sm, ptx::KernelRun& run, uint64_t kernel_id);

  const SmParams& params_;
  const ClockDomain& clock_;
  std::vector<Sm*> sms_;
  TraceObserver* tracer_;  // optional: told when each CTA starts and ends
  std::vector<SmUsage> usage_;
  std::vector<Kernel> kernels_;  // queue, oldest first
  sc_core::sc_event wake_;
  uint32_t next_sm_ = 0;
  stats::Counter& ctas_issued_;
  stats::Counter& kernels_completed_;
};

}  // namespace gpuvp::gpu
