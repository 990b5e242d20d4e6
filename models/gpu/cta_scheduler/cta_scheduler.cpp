#include "models/gpu/cta_scheduler/cta_scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace gpuvp::gpu {

namespace {
uint32_t warp_registers(const CtaFootprint& cta) {
  const uint32_t per_warp = cta.registers_per_thread * 32;
  return (per_warp + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
}
uint32_t warps_of(const CtaFootprint& cta) { return (cta.threads + 31) / 32; }
}  // namespace

const char* to_string(OccupancyLimit limit) noexcept {
  switch (limit) {
    case OccupancyLimit::kCtas: return "ctas";
    case OccupancyLimit::kThreads: return "threads";
    case OccupancyLimit::kWarps: return "warps";
    case OccupancyLimit::kRegisters: return "registers";
    case OccupancyLimit::kSharedMemory: return "shared_memory";
  }
  return "?";
}

Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta) { return occupancy(sm, cta, sm.shared_memory_bytes); }

Occupancy occupancy(const SmParams& sm, const CtaFootprint& cta, uint64_t shared_capacity) {
  Occupancy best{sm.max_ctas, OccupancyLimit::kCtas};
  auto limit = [&](uint64_t n, OccupancyLimit why) {
    if (n < best.ctas_per_sm) best = Occupancy{static_cast<uint32_t>(n), why};
  };
  const uint32_t warps = warps_of(cta);
  limit(cta.threads ? sm.max_threads / cta.threads : sm.max_ctas, OccupancyLimit::kThreads);
  limit(warps ? (sm.max_threads / 32) / warps : sm.max_ctas, OccupancyLimit::kWarps);
  const uint64_t regs = uint64_t{warp_registers(cta)} * warps;
  if (regs) limit(sm.registers / regs, OccupancyLimit::kRegisters);
  if (cta.shared_bytes) limit(shared_capacity / cta.shared_bytes, OccupancyLimit::kSharedMemory);
  return best;
}

uint32_t estimate_registers_per_thread(const ptx::KernelRun& run) {
  // register_slots() = 64-bit register slots + predicates of the call tree; without a
  // breakdown by width, count every slot as one 32-bit register plus half again for the
  // 64-bit ones nvcc uses for addresses (an estimate: ptxas usually needs fewer).
  const uint32_t slots = run.register_slots();
  uint32_t estimate = slots + slots / 2;
  estimate = (estimate + 7) / 8 * 8;
  return std::clamp<uint32_t>(estimate, 16, 255);
}

CtaFootprint footprint(const ptx::KernelRun& run) {
  CtaFootprint f;
  f.threads = static_cast<uint32_t>(run.config().block.count());
  f.registers_per_thread = estimate_registers_per_thread(run);
  f.shared_bytes = run.shared_bytes_per_cta();
  return f;
}

CtaScheduler::CtaScheduler(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock,
                           std::vector<Sm*> sms, stats::Registry& stats, TraceObserver* tracer)
    : sc_core::sc_module(name),
      params_(params),
      clock_(clock),
      sms_(std::move(sms)),
      tracer_(tracer),
      usage_(sms_.size(), SmUsage{0, 0, 0, 0, 0, params.shared_memory_bytes}),
      ctas_issued_(stats.group("gpu.cta_scheduler").counter("ctas_issued", "cta", "CTAs issued to SMs")),
      kernels_completed_(stats.group("gpu.cta_scheduler").counter("kernels_completed", "kernel", "kernels completed")) {
  for (Sm* sm : sms_) {
    sm->on_cta_done([this](uint32_t index, ptx::KernelRun& run, uint64_t kernel_id, uint64_t cta) {
      if (tracer_ != nullptr) tracer_->cta_end(index, kernel_id, cta, sc_core::sc_time_stamp());
      cta_done(index, run, kernel_id);
    });
  }
  SC_HAS_PROCESS(CtaScheduler);
  SC_THREAD(thread);
}

CtaScheduler::~CtaScheduler() = default;

void CtaScheduler::submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done) {
  Kernel k;
  k.run = &run;
  k.id = kernel_id;
  k.cta = footprint(run);
  k.shared_capacity = params_.shared_capacity(run.config().shared_carveout_percent, k.cta.shared_bytes);
  k.done = std::move(done);
  if (!run.ok() || run.cta_count() == 0) {
    if (k.done) k.done();
    return;
  }
  if (occupancy(params_, k.cta, k.shared_capacity).ctas_per_sm == 0) {
    throw std::invalid_argument("CtaScheduler: a CTA of " + run.kernel().name + " does not fit on an SM (" +
                                to_string(occupancy(params_, k.cta, k.shared_capacity).limit) + ")");
  }
  kernels_.push_back(std::move(k));
  wake_.notify(sc_core::SC_ZERO_TIME);
}

bool CtaScheduler::fits(const SmUsage& use, const Kernel& k) const {
  const CtaFootprint& cta = k.cta;
  if (use.ctas != 0 && use.shared_capacity != k.shared_capacity) return false;  // reconfigured only when empty
  const uint32_t warps = warps_of(cta);
  return use.ctas + 1 <= params_.max_ctas && use.threads + cta.threads <= params_.max_threads &&
         use.warps + warps <= params_.max_threads / 32 &&
         use.registers + uint64_t{warp_registers(cta)} * warps <= params_.registers &&
         use.shared + cta.shared_bytes <= k.shared_capacity;
}

void CtaScheduler::thread() {
  while (true) {
    bool issued = false;
    const uint32_t n = static_cast<uint32_t>(sms_.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t s = (next_sm_ + i) % n;
      for (Kernel& k : kernels_) {
        if (k.next_cta >= k.run->cta_count() || !k.run->ok() || !fits(usage_[s], k)) continue;
        SmUsage& use = usage_[s];
        if (use.shared_capacity != k.shared_capacity) {
          use.shared_capacity = k.shared_capacity;
          sms_[s]->configure_shared(k.shared_capacity);
        }
        ++use.ctas;
        use.threads += k.cta.threads;
        use.warps += warps_of(k.cta);
        use.registers += warp_registers(k.cta) * warps_of(k.cta);
        use.shared += k.cta.shared_bytes;
        if (tracer_ != nullptr) tracer_->cta_begin(s, k.id, k.next_cta, sc_core::sc_time_stamp());
        sms_[s]->launch_cta(*k.run, k.id, k.next_cta++);
        ++ctas_issued_;
        issued = true;
        break;  // one CTA per SM per cycle
      }
    }
    next_sm_ = n ? (next_sm_ + 1) % n : 0;
    if (issued) {
      wait(clock_.delay_until(sc_core::sc_time_stamp(), 1));
    } else {
      wait(wake_);
      // Act on the first edge at or after the event.
      const sc_core::sc_time edge = clock_.next_edge(sc_core::sc_time_stamp());
      if (edge > sc_core::sc_time_stamp()) wait(edge - sc_core::sc_time_stamp());
    }
  }
}

void CtaScheduler::cta_done(uint32_t sm, ptx::KernelRun& run, uint64_t kernel_id) {
  for (size_t i = 0; i < kernels_.size(); ++i) {
    Kernel& k = kernels_[i];
    if (k.run != &run || k.id != kernel_id) continue;
    SmUsage& use = usage_[sm];
    --use.ctas;
    use.threads -= k.cta.threads;
    use.warps -= warps_of(k.cta);
    use.registers -= warp_registers(k.cta) * warps_of(k.cta);
    use.shared -= k.cta.shared_bytes;
    ++k.completed;
    const bool finished = k.completed == run.cta_count() || (!run.ok() && k.completed == k.next_cta);
    if (finished) {
      std::function<void()> done = std::move(k.done);
      kernels_.erase(kernels_.begin() + static_cast<std::ptrdiff_t>(i));
      ++kernels_completed_;
      if (done) done();
    }
    wake_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
}

}  // namespace gpuvp::gpu
