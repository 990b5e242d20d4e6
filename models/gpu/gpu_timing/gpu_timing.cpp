#include "models/gpu/gpu_timing/gpu_timing.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "models/gpu/copy_engine/copy_engine.h"
#include "models/gpu/crossbar/crossbar.h"
#include "models/gpu/device_regions.h"
#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/sm/sm_cluster.h"
#include "models/memory/address_map.h"
#include "models/memory/hbm/hbm_controller.h"
#include "models/memory/l2/l2_slice.h"
#include "models/tlm/tlm_monitor.h"
#include "models/uvm/uvm_system.h"
#include "platform/stats/progress.h"

namespace gpuvp::gpu {
namespace {

// Sum of one counter over every instance group "<prefix>[i]<suffix>", i = 0 .. count-1.
// Called once per kernel, so the string building is off the per-cycle path.
std::vector<const stats::Counter*> collect(const stats::Registry& stats, const std::string& prefix, uint32_t count,
                                           const std::string& name) {
  std::vector<const stats::Counter*> out;
  for (uint32_t i = 0; i < count; ++i) {
    const stats::Group* g = stats.find_group(prefix + "[" + std::to_string(i) + "]");
    const stats::Counter* c = g != nullptr ? g->find_counter(name) : nullptr;
    if (c != nullptr) out.push_back(c);
  }
  return out;
}

uint64_t sum(const std::vector<const stats::Counter*>& counters) {
  uint64_t total = 0;
  for (const stats::Counter* c : counters) total += c->value();
  return total;
}

// A whole-GPU quantity mirrored into the "gpu" group: at each kernel end the growth of the
// summed instance counters since the last kernel end is added, so kernel scopes see the
// kernel's share and the run scope the total.
struct Mirror {
  std::vector<const stats::Counter*> sources;
  stats::Counter* target = nullptr;
  uint64_t seen = 0;
  void update() {
    const uint64_t now = sum(sources);
    *target += now - seen;
    seen = now;
  }
};

}  // namespace

struct GpuTiming::Impl {
  ClockDomains clocks;
  memory::AddressMap map;
  TraceObserver* tracer;
  std::vector<std::unique_ptr<TlmMonitor>> monitors;  // one per traced link (none when tracing is off)
  std::unique_ptr<uvm::UvmSystem> uvm_system;  // before `core`: its binder puts a TLB on each SM's path
  GpuCore core;
  CopyEngine copy_engine;
  memory::WakeDomain memory_wakes;  // crossbar, HBM and L2 slices wake in one process, in that order
  Crossbar crossbar;  // a port per SM cluster, then the copy engine's
  memory::HbmController hbm;
  memory::L2SliceGroup l2_group;  // the slices' one wake queue
  std::vector<std::unique_ptr<memory::L2Slice>> slices;
  sc_core::sc_event finished;
  stats::Group& group;
  stats::Counter& kernels;
  stats::Counter& cycles;
  stats::Counter& time_ps;
  std::vector<Mirror> mirrors;
  uint32_t sms;
  std::unordered_set<uint64_t> loaded_code;  // first code address of kernels already written (membership only)

  Impl(const PlatformParams& p, const ClockDomains& c, stats::Registry& stats, TraceObserver* trace)
      : clocks(c),
        map(p.l2, p.hbm),
        tracer(trace),
        uvm_system(std::make_unique<uvm::UvmSystem>("uvm", p.uvm, p.pcie, p.hbm.capacity_bytes, p.sim.seed,
                                                    clocks.core, stats, trace)),
        core("core", p.sm, clocks.core, stats, trace,
             [this](Sm& sm, uint32_t i, SmCluster& cluster) {
               uvm::L1Tlb& tlb = uvm_system->add_tlb(i);
               bind_traced(sm.mem, tlb.in, tracer, monitors, "sm");  // the SM's own link, as without UVM
               tlb.out.bind(cluster.in);
             }),
        copy_engine("copy_engine", stats, "gpu.copy_engine"),
        memory_wakes("memory_wake"),
        crossbar("crossbar", p.crossbar, map, core.cluster_count() + 1, stats, "gpu.crossbar", &memory_wakes),
        hbm("hbm", p.hbm, map, stats, "memory.hbm", &memory_wakes),
        l2_group(map.slices(), &memory_wakes),
        group(stats.group("gpu")),
        kernels(group.counter("kernels", "kernel", "kernels run on the timing model")),
        cycles(group.counter("cycles", "cycle",
                             "core cycles of kernels: launch accepted -> completion (launch latency, CTAs, completion "
                             "latency)")),
        time_ps(group.counter("time_ps", "ps", "simulated time of kernels on the timing model")),
        sms(p.sm.count) {
    core.scheduler().set_launch_latencies(LaunchLatencies::in_cycles(p.launch, clocks.core));
    for (uint32_t s = 0; s < map.slices(); ++s) {
      slices.push_back(std::make_unique<memory::L2Slice>(("l2_" + std::to_string(s)).c_str(), p.l2, map, s, stats,
                                                         "memory.l2[" + std::to_string(s) + "]", &l2_group));
      bind_traced(crossbar.slice, slices.back()->in, tracer, monitors, "l2");
      bind_traced(slices.back()->dram, hbm.socket, tracer, monitors, "dram");
    }
    for (uint32_t i = 0; i < core.cluster_count(); ++i) {
      bind_traced(core.cluster(i).out, crossbar.cluster, tracer, monitors, "crossbar");
    }
    bind_traced(copy_engine.out, crossbar.cluster, tracer, monitors, "crossbar");
    core.stepper().add_partition(hbm.partition());

    const uint32_t sm_total = p.sm.count;
    const uint32_t channels = map.channels();
    auto mirror = [&](const char* name, const char* unit, const char* doc, const std::string& prefix, uint32_t count,
                      const char* source) -> stats::Counter& {
      Mirror m;
      m.sources = collect(stats, prefix, count, source);
      m.target = &group.counter(name, unit, doc);
      m.seen = sum(m.sources);
      mirrors.push_back(std::move(m));
      return *mirrors.back().target;
    };
    stats::Counter& warp = mirror("warp_instructions", "warp-instr", "warp instructions issued", "gpu.sm", sm_total,
                                  "warp_instructions");
    stats::Counter& thread = mirror("thread_instructions", "thread-instr", "thread instructions (active lanes)",
                                    "gpu.sm", sm_total, "thread_instructions");
    stats::Counter& l1_hits = mirror("l1_sector_hits", "sector", "L1 load sectors found valid", "gpu.sm", sm_total,
                                     "l1_sector_hits");
    stats::Counter& l1_accesses = mirror("l1_sector_accesses", "sector", "L1 load sectors looked up", "gpu.sm",
                                         sm_total, "l1_sector_accesses");
    stats::Counter& l2_hits = mirror("l2_sector_hits", "sector", "L2 sectors found valid", "memory.l2",
                                     map.slices(), "sector_hits");
    stats::Counter& l2_accesses = mirror("l2_sector_accesses", "sector", "L2 sectors requested", "memory.l2",
                                         map.slices(), "sector_accesses");
    stats::Counter& dram_bytes = mirror("dram_bytes", "B", "bytes read and written at HBM", "memory.hbm.channel",
                                        channels, "read_bytes");
    // dram_bytes counts reads and writes: add the write side to the same target.
    mirrors.back().sources.clear();
    for (const char* side : {"read_bytes", "write_bytes"}) {
      for (const stats::Counter* s : collect(stats, "memory.hbm.channel", channels, side)) {
        mirrors.back().sources.push_back(s);
      }
    }
    mirrors.back().seen = sum(mirrors.back().sources);
    stats::Counter& row_hits = mirror("dram_row_hits", "request", "HBM requests whose row was open",
                                      "memory.hbm.channel", channels, "row_hits");
    stats::Counter& dram_requests = mirror("dram_requests", "request", "HBM read and write requests",
                                           "memory.hbm.channel", channels, "requests");
    group.ratio("ipc", "warp instructions per core cycle (whole GPU)", warp, cycles);
    group.ratio("thread_ipc", "thread instructions per core cycle (whole GPU)", thread, cycles);
    group.ratio("l1_hit_rate", "L1 load sectors found valid, all SMs", l1_hits, l1_accesses);
    group.ratio("l2_hit_rate", "L2 sectors found valid, all slices", l2_hits, l2_accesses);
    group.ratio("dram_bandwidth", "HBM bytes per second of kernel time (B/s)", dram_bytes, time_ps, 1e12);
    group.ratio("row_buffer_hit_rate", "HBM requests that hit an open row", row_hits, dram_requests);
  }
};

GpuTiming::GpuTiming(sc_core::sc_module_name name, const PlatformParams& params, const ClockDomains& clocks,
                     stats::Registry& stats, TraceObserver* tracer)
    : sc_module(name), impl_(std::make_unique<Impl>(params, clocks, stats, tracer)), registry_(stats) {
  // Windowed SMs count on other host threads while a window runs: the registry's kernel scopes
  // and reports read every counter, so they finish the window first.
  // With ranks, they also gather the SMs' statistics from the ranks that step them.
  registry_.set_before_read([this] {
    quiesce();
    impl_->core.stepper().gather_statistics();
  });
}

void GpuTiming::set_rank_exchange(parallel::RankExchange* exchange) { impl_->core.stepper().set_rank_exchange(exchange); }

GpuTiming::~GpuTiming() { registry_.set_before_read(nullptr); }

uint32_t GpuTiming::sm_count() const { return impl_->sms; }

uvm::UvmSystem& GpuTiming::uvm() { return *impl_->uvm_system; }

void GpuTiming::quiesce() {
  impl_->core.stepper().quiesce();
  // The HBM partition simulates behind SystemC time: up to now, so that its statistics are.
  if (parallel::TimePartition* hbm = impl_->hbm.partition()) hbm->catch_up();
}

KernelTiming GpuTiming::run(ptx::KernelRun& run, uint64_t kernel_id, bool graph_node) {
  Impl& m = *impl_;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  bool done = false;
  if (m.tracer != nullptr) m.tracer->kernel_begin(kernel_id, run.kernel().name, start);
  progress::kernel_begin(kernel_id, run.kernel().name, run.cta_count());
  // What the launch writes through L2 while the launch latency passes: the kernel's parameters
  // (constant bank 0) and, on its first launch, its code (the module load's upload), so an SM's
  // first constant or instruction miss finds them in L2 as on hardware.
  m.copy_engine.write(regions::const_bank0_slot(kernel_id), run.kernel().param_bytes, kernel_id);
  const ptx::KernelRun::CodeRange code = run.entry_code();
  const uint64_t first = (regions::kernel_code_offset(run.kernel().name) + code.offset) & (regions::kCodeBytes - 1);
  if (m.loaded_code.insert(first).second) {
    const uint64_t bytes = std::min<uint64_t>(code.bytes, regions::kCodeBytes);
    const uint64_t before_wrap = std::min<uint64_t>(bytes, regions::kCodeBytes - first);
    m.copy_engine.write(regions::kCodeBase + first, before_wrap, kernel_id);
    m.copy_engine.write(regions::kCodeBase, bytes - before_wrap, kernel_id);  // code past the region's end wraps
  }
  // The scheduler calls `done` from its own process; the event hands control back here.
  m.core.submit(run, kernel_id, [&] {
    done = true;
    m.finished.notify(sc_core::SC_ZERO_TIME);
  }, graph_node);
  // Progress on long kernels: every kProgressCycles of simulated time the waiter looks at the
  // wall clock and, past kProgressWall since the last line, prints simulated cycles and kernels
  // done to stderr. The wake-ups change no model state, so statistics stay identical.
  constexpr uint64_t kProgressCycles = 1u << 20;
  constexpr auto kProgressWall = std::chrono::seconds(10);
  const sc_core::sc_time progress_step = m.clocks.core.period() * static_cast<double>(kProgressCycles);
  auto last_line = std::chrono::steady_clock::now();
  while (!done) {
    sc_core::wait(progress_step, m.finished);
    if (done) break;
    progress::sim_time(sc_core::sc_time_stamp().value());
    const auto now = std::chrono::steady_clock::now();
    // The terminal's progress line (platform/stats/progress.h), when drawn, says all of this.
    if (now - last_line >= kProgressWall && !progress::active()) {
      last_line = now;
      std::fprintf(stderr, "gpuvp: kernel %llu: %llu cycles simulated so far; %llu kernels done\n",
                   static_cast<unsigned long long>(kernel_id),
                   static_cast<unsigned long long>(m.clocks.core.cycle_at(sc_core::sc_time_stamp()) -
                                                   m.clocks.core.cycle_at(start)),
                   static_cast<unsigned long long>(m.kernels.value()));
    }
  }
  // Stores are posted (a CTA retires while its stores travel), but not before they are
  // translated: stores that far-faulted on managed memory complete the kernel when they leave
  // the L1 TLBs (never taken without managed memory).
  while (m.uvm_system->holding_requests()) sc_core::wait(m.uvm_system->drained());
  while (!m.copy_engine.idle()) sc_core::wait(m.copy_engine.drained());
  quiesce();  // the kernel's statistics are read now
  m.core.stepper().gather_statistics();  // ranks: the SMs' from the ranks that step them
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  if (m.tracer != nullptr) m.tracer->kernel_end(kernel_id, end);
  progress::kernel_end(kernel_id, end.value());
  KernelTiming t;
  t.ps = end.value() - start.value();
  // Whole core cycles the kernel spanned (edges crossed), independent of the time resolution.
  t.cycles = m.clocks.core.cycle_at(end) - m.clocks.core.cycle_at(start);
  ++m.kernels;
  m.cycles += t.cycles;
  m.time_ps += t.ps;
  for (Mirror& mirror : m.mirrors) mirror.update();
  return t;
}

}  // namespace gpuvp::gpu
