#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "platform/stats/progress.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace gpuvp::gpu {

namespace {
device::CtaDemand demand_of(const CtaFootprint& cta) { return {cta.threads, cta.registers_per_thread, cta.shared_bytes}; }
uint32_t warp_registers(const CtaFootprint& cta) { return device::warp_registers(demand_of(cta)); }
uint32_t warps_of(const CtaFootprint& cta) { return device::warps_of(demand_of(cta)); }
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
  return device::occupancy(device::SmCapacity{sm.max_ctas, sm.max_threads, sm.registers, shared_capacity}, demand_of(cta));
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
  const ptx::KernelResources& told = run.resources();
  if (told.source == ptx::ResourceSource::kEstimate) {
    f.registers_per_thread = estimate_registers_per_thread(run);
    f.shared_bytes = run.shared_bytes_per_cta();
  } else {
    f.registers_per_thread = told.registers_per_thread;
    f.shared_bytes = told.static_shared_bytes + run.config().dynamic_shared_bytes;
    f.local_bytes_per_thread = told.local_bytes_per_thread;
  }
  return f;
}

struct CtaScheduler::LaunchStats {
  stats::Histogram& registers;
  stats::Histogram& shared;
  stats::Histogram& local;
  stats::Histogram& ctas_per_sm;
  stats::Histogram& sass_arch;
  std::array<stats::Counter*, 3> sources;
  std::array<stats::Counter*, 5> limits;

  explicit LaunchStats(stats::Group& g)
      : registers(g.histogram("registers_per_thread", "register",
                              "registers per thread occupancy counts (told from the SASS, or estimated)",
                              stats::Buckets::linear(0, 32, 8))),
        shared(g.histogram("shared_bytes_per_cta", "B", "shared memory per CTA, static + dynamic",
                           stats::Buckets::log2(18))),
        local(g.histogram("local_bytes_per_thread", "B", "local memory per thread (stack frame, spills) told",
                          stats::Buckets::log2(20))),
        ctas_per_sm(g.histogram("ctas_per_sm", "cta", "resident CTAs per SM the kernel's footprint allows",
                                stats::Buckets::log2(7))),
        sass_arch(g.histogram("sass_arch", "sm", "architecture of the cubin the resources came from (0: estimated)",
                              stats::Buckets::linear(0, 10, 13))),
        sources{&g.counter("resources_cubin_exact", "launch", "launches sized by the cubin of the device's architecture"),
                &g.counter("resources_cubin_nearest", "launch",
                           "launches sized by a cubin of another minor version of the device's major"),
                &g.counter("resources_estimated", "launch",
                           "launches without told resources: registers estimated from the PTX")},
        limits{&g.counter("occupancy_limited_by_ctas", "launch", "launches whose CTAs per SM the CTA limit sets"),
               &g.counter("occupancy_limited_by_threads", "launch", "launches whose CTAs per SM the thread limit sets"),
               &g.counter("occupancy_limited_by_warps", "launch", "launches whose CTAs per SM the warp limit sets"),
               &g.counter("occupancy_limited_by_registers", "launch",
                          "launches whose CTAs per SM the register file sets"),
               &g.counter("occupancy_limited_by_shared_memory", "launch",
                          "launches whose CTAs per SM shared memory sets")} {}

  void record(const ptx::KernelResources& told, const CtaFootprint& cta, const Occupancy& occupancy) {
    registers.sample(cta.registers_per_thread);
    shared.sample(cta.shared_bytes);
    local.sample(cta.local_bytes_per_thread);
    ctas_per_sm.sample(occupancy.ctas_per_sm);
    sass_arch.sample(told.source == ptx::ResourceSource::kEstimate ? 0 : told.sass_arch);
    ++*sources[told.source == ptx::ResourceSource::kCubinExact    ? 0
               : told.source == ptx::ResourceSource::kCubinNearest ? 1
                                                                  : 2];
    ++*limits[static_cast<size_t>(occupancy.limit)];
  }
};

LaunchLatencies LaunchLatencies::in_cycles(const LaunchParams& params, const ClockDomain& clock) {
  // The first edge at or after the latency, counted from edge 0 (exact: the domain's own edges).
  auto cycles = [&](uint64_t ps) { return clock.next_cycle(sc_core::sc_time::from_value(ps)); };
  return {cycles(params.launch_latency_ps), cycles(params.cta_dispatch_latency_ps),
          cycles(params.completion_latency_ps), cycles(params.graph_launch_latency_ps)};
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
      kernels_completed_(stats.group("gpu.cta_scheduler").counter("kernels_completed", "kernel", "kernels completed")),
      launch_stats_(std::make_unique<LaunchStats>(stats.group("gpu.cta_scheduler"))) {
  for (Sm* sm : sms_) {
    sm->on_cta_done([this](uint32_t index, ptx::KernelRun& run, uint64_t kernel_id, uint64_t cta) {
      if (tracer_ != nullptr) tracer_->cta_end(index, kernel_id, cta, sc_core::sc_time_stamp());
      cta_done(index, run, kernel_id);
    });
  }
  SC_HAS_PROCESS(CtaScheduler);
  SC_THREAD(thread);
  SC_METHOD(complete_due);
  sensitive << completion_due_;
  dont_initialize();
}

CtaScheduler::~CtaScheduler() = default;

void CtaScheduler::submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done, bool graph_node) {
  Kernel k;
  k.run = &run;
  k.id = kernel_id;
  k.cta = footprint(run);
  k.shared_capacity = params_.shared_capacity(run.config().shared_carveout_percent, k.cta.shared_bytes);
  k.done = std::move(done);
  k.first_dispatch_cycle =
      clock_.next_cycle(sc_core::sc_time_stamp()) + (graph_node ? latencies_.graph_launch : latencies_.launch);
  if (!run.ok() || run.cta_count() == 0) {
    if (k.done) k.done();
    return;
  }
  const Occupancy fit = occupancy(params_, k.cta, k.shared_capacity);
  if (fit.ctas_per_sm == 0) {
    throw std::invalid_argument("CtaScheduler: a CTA of " + run.kernel().name + " does not fit on an SM (" +
                                to_string(fit.limit) + ": " + std::to_string(k.cta.threads) + " threads x " +
                                std::to_string(k.cta.registers_per_thread) + " registers, " +
                                std::to_string(k.cta.shared_bytes) + " B shared)");
  }
  launch_stats_->record(run.resources(), k.cta, fit);
  if (tracer_ != nullptr) tracer_->kernel_shared_capacity(kernel_id, k.shared_capacity);
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
    const uint64_t cycle = clock_.cycle_at(sc_core::sc_time_stamp());  // on an edge
    while (!dispatches_.empty() && dispatches_.front().cycle <= cycle) {
      const Dispatch d = dispatches_.front();
      dispatches_.pop_front();
      deliver(d);
    }
    bool issued = false;
    uint64_t next_launch = ~0ull;  // earliest edge a queued kernel may start dispatching
    const uint32_t n = static_cast<uint32_t>(sms_.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t s = (next_sm_ + i) % n;
      for (Kernel& k : kernels_) {
        if (k.next_cta >= k.run->cta_count() || !k.run->ok()) continue;
        const bool gang = k.run->config().cooperative;  // younger kernels wait until it is all resident
        if (k.first_dispatch_cycle > cycle) {
          next_launch = std::min(next_launch, k.first_dispatch_cycle);
          if (gang) break;
          continue;
        }
        if (!fits(usage_[s], k)) {
          if (gang) break;
          continue;
        }
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
        const Dispatch d{cycle + latencies_.cta_dispatch, s, k.run, k.id, k.next_cta++};
        if (latencies_.cta_dispatch == 0) {
          deliver(d);
        } else {
          dispatches_.push_back(d);
        }
        ++ctas_issued_;
        issued = true;
        break;  // one CTA per SM per cycle
      }
    }
    next_sm_ = n ? (next_sm_ + 1) % n : 0;
    if (issued) {
      wait(clock_.delay_until(sc_core::sc_time_stamp(), 1));
      continue;
    }
    uint64_t next = next_launch;
    if (!dispatches_.empty()) next = std::min(next, dispatches_.front().cycle);
    if (next != ~0ull) {
      wait(clock_.time_of_cycle(next) - sc_core::sc_time_stamp(), wake_);
    } else {
      wait(wake_);
    }
    // Act on the first edge at or after the event.
    const sc_core::sc_time edge = clock_.next_edge(sc_core::sc_time_stamp());
    if (edge > sc_core::sc_time_stamp()) wait(edge - sc_core::sc_time_stamp());
  }
}

void CtaScheduler::deliver(const Dispatch& d) {
  if (!d.run->ok()) {  // the kernel faulted while this CTA was on its way: it never starts
    cta_done(d.sm, *d.run, d.kernel_id);
    return;
  }
  if (tracer_ != nullptr) tracer_->cta_begin(d.sm, d.kernel_id, d.cta, sc_core::sc_time_stamp());
  sms_[d.sm]->launch_cta(*d.run, d.kernel_id, d.cta);
}

void CtaScheduler::complete_due() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  while (!completions_.empty() && completions_.front().at <= now) {
    std::function<void()> done = std::move(completions_.front().done);
    completions_.pop_front();
    if (done) done();
  }
  if (!completions_.empty()) completion_due_.notify(completions_.front().at - now);
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
    progress::cta_done(kernel_id, sc_core::sc_time_stamp().value());
    const bool finished = k.completed == run.cta_count() || (!run.ok() && k.completed == k.next_cta);
    if (finished) {
      std::function<void()> done = std::move(k.done);
      kernels_.erase(kernels_.begin() + static_cast<std::ptrdiff_t>(i));
      ++kernels_completed_;
      if (latencies_.completion == 0) {
        if (done) done();
      } else {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        const sc_core::sc_time delay = clock_.delay_until(now, latencies_.completion);
        if (completions_.empty()) completion_due_.notify(delay);
        completions_.push_back({now + delay, std::move(done)});
      }
    }
    wake_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
}

}  // namespace gpuvp::gpu
