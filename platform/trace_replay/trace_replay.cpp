#include "platform/trace_replay/trace_replay.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <queue>
#include <sstream>
#include <stdexcept>

#include <systemc>

#include "models/gpu/copy_engine/copy_engine.h"
#include "models/gpu/crossbar/crossbar.h"
#include "models/gpu/sm/sm_cluster.h"
#include "models/gpu/trace_injector/trace_injector.h"
#include "models/memory/address_map.h"
#include "models/memory/hbm/hbm_controller.h"
#include "models/memory/l2/l2_slice.h"
#include "models/tlm/tlm_monitor.h"
#include "models/uvm/uvm_system.h"
#include "platform/clock_domains.h"

namespace gpuvp::replay {
namespace {

constexpr uint64_t kNever = ~uint64_t{0};

// The most CTAs resident at once on one SM during the captured kernel.
uint32_t captured_occupancy(const elastic::KernelTrace& k, uint32_t sms) {
  std::vector<std::vector<std::pair<uint64_t, int>>> events(sms);
  for (const elastic::CtaTrace& cta : k.ctas) {
    events[cta.sm].emplace_back(cta.begin_cycle, 1);
    events[cta.sm].emplace_back(cta.end_cycle, -1);
  }
  int best = 1;
  for (auto& e : events) {
    std::sort(e.begin(), e.end());  // an end and a begin on one cycle: the end first
    int now = 0;
    for (const auto& [cycle, delta] : e) best = std::max(best, now += delta);
  }
  return static_cast<uint32_t>(best);
}

// One process steps the injectors due at each edge in index order, waiting as the SM stepper
// waits (a thread woken at the edge) and created where the timing model creates its SM
// stepper (before the memory side), so that same-edge requests meet the clusters and the memory
// side's processes in the order the SMs' requests did.
class InjectorStepper : public sc_core::sc_module {
 public:
  InjectorStepper(sc_core::sc_module_name name, const ClockDomain& clock,
                  std::vector<std::unique_ptr<gpu::TraceInjector>>& injectors)
      : sc_module(name), clock_(clock), injectors_(injectors) {
    for (auto& injector : injectors_) {
      injector->set_scheduler([this](uint32_t index, uint64_t cycle) { schedule(index, cycle); });
    }
    SC_HAS_PROCESS(InjectorStepper);
    SC_THREAD(thread);
  }

 private:
  // Injector `index` wants to act at the edge of `cycle`.
  void schedule(uint32_t index, uint64_t cycle) {
    wakes_.emplace(cycle, index);
    if (!in_step_) wake_.notify(sc_core::SC_ZERO_TIME);
  }

  void thread() {
    while (true) {
      if (wakes_.empty()) {
        sc_core::wait(wake_);
        continue;
      }
      const sc_core::sc_time at = clock_.time_of_cycle(wakes_.top().first);
      if (at > sc_core::sc_time_stamp()) {
        sc_core::wait(at - sc_core::sc_time_stamp(), wake_);
        if (sc_core::sc_time_stamp() < at) continue;  // woken before the edge: something may be due earlier
      }
      const uint64_t c = clock_.cycle_at(sc_core::sc_time_stamp());
      in_step_ = true;
      while (!wakes_.empty() && wakes_.top().first <= c) {
        due_.clear();
        while (!wakes_.empty() && wakes_.top().first <= c) {
          due_.push_back(wakes_.top().second);
          wakes_.pop();
        }
        std::sort(due_.begin(), due_.end());
        due_.erase(std::unique(due_.begin(), due_.end()), due_.end());
        for (uint32_t i : due_) injectors_[i]->step();
      }
      in_step_ = false;
    }
  }

  const ClockDomain& clock_;
  std::vector<std::unique_ptr<gpu::TraceInjector>>& injectors_;
  std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>,
                      std::greater<std::pair<uint64_t, uint32_t>>>
      wakes_;  // (cycle, injector)
  std::vector<uint32_t> due_;
  bool in_step_ = false;
  sc_core::sc_event wake_;
};

class ReplayTop : public sc_core::sc_module {
 public:
  ReplayTop(sc_core::sc_module_name name, elastic::Trace& trace, const PlatformParams& p, const ReplayOptions& o,
            stats::Registry& stats, TraceObserver* tracer, std::vector<std::vector<std::vector<uint32_t>>> static_queues)
      : sc_module(name),
        static_queues_(std::move(static_queues)),
        trace_(trace),
        options_(o),
        sm_params_(p.sm),
        stats_(stats),
        tracer_(tracer),
        clocks_(ClockDomains::from(p)),
        map_(p.l2, p.hbm),
        uvm_(std::make_unique<uvm::UvmSystem>("uvm", p.uvm, p.pcie, p.hbm.capacity_bytes, p.sim.seed, clocks_.core,
                                              stats, tracer)),
        memory_wakes_("memory_wake"),
        group_(stats.group("gpu")),
        kernels_(group_.counter("kernels", "kernel", "kernels replayed")),
        cycles_(group_.counter("cycles", "cycle", "core cycles of replayed kernels: begin -> end")),
        time_ps_(group_.counter("time_ps", "ps", "simulated time of replayed kernels")),
        captured_cycles_(stats.group("replay").counter("captured_cycles", "cycle",
                                                       "core cycles of the same kernels at capture")) {
    const uint32_t captured = trace.header.sm_count;
    sms_ = o.mode == ReplayOptions::Mode::kTask ? (o.task_sms != 0 ? o.task_sms : p.sm.count) : captured * o.replicas;
    if (sms_ == 0) throw std::invalid_argument("replay: no SMs to replay on");
    for (uint32_t i = 0; i < sms_; ++i) {
      injectors_.push_back(std::make_unique<gpu::TraceInjector>(("sm_" + std::to_string(i)).c_str(), i, clocks_.core,
                                                                stats, "gpu.injector[" + std::to_string(i) + "]",
                                                                p.sm.l1_mshrs));
      if (o.l1_redo) injectors_.back()->enable_l1(p.sm.l1_ways, p.sm.l1_hit_latency, p.sm.l1_mshr_merges);
      injectors_.back()->on_cta_done([this](uint64_t tag, uint64_t end) { cta_done(tag, end); });
    }
    const uint32_t cluster = std::max<uint32_t>(1, p.sm.cluster_size);
    for (uint32_t first = 0; first < sms_; first += cluster) {
      const uint32_t size = std::min(cluster, sms_ - first);
      clusters_.push_back(
          std::make_unique<gpu::SmCluster>(("cluster_" + std::to_string(clusters_.size())).c_str(), first, size));
      for (uint32_t i = first; i < first + size; ++i) {  // through its L1 TLB, as an SM
        uvm::L1Tlb& tlb = uvm_->add_tlb(i);
        bind_traced(injectors_[i]->mem, tlb.in, tracer, monitors_, "sm");
        tlb.out.bind(clusters_.back()->in);
      }
    }
    // The rest in the timing model's order: stepper, copy engine, crossbar, HBM, L2 slices.
    stepper_ = std::make_unique<InjectorStepper>("stepper", clocks_.core, injectors_);
    copy_engine_ = std::make_unique<gpu::CopyEngine>("copy_engine", stats, "gpu.copy_engine");
    crossbar_ = std::make_unique<gpu::Crossbar>("crossbar", p.crossbar, map_, static_cast<uint32_t>(clusters_.size()) + 1,
                                                stats, "gpu.crossbar", &memory_wakes_);
    hbm_ = std::make_unique<memory::HbmController>("hbm", p.hbm, map_, stats, "memory.hbm", &memory_wakes_);
    l2_group_ = std::make_unique<memory::L2SliceGroup>(map_.slices(), &memory_wakes_);
    for (uint32_t s = 0; s < map_.slices(); ++s) {
      slices_.push_back(std::make_unique<memory::L2Slice>(("l2_" + std::to_string(s)).c_str(), p.l2, map_, s, stats,
                                                          "memory.l2[" + std::to_string(s) + "]", l2_group_.get()));
      bind_traced(crossbar_->slice, slices_.back()->in, tracer, monitors_, "l2");
      bind_traced(slices_.back()->dram, hbm_->socket, tracer, monitors_, "dram");
    }
    for (auto& c : clusters_) bind_traced(c->out, crossbar_->cluster, tracer, monitors_, "crossbar");
    bind_traced(copy_engine_->out, crossbar_->cluster, tracer, monitors_, "crossbar");
    SC_HAS_PROCESS(ReplayTop);
    SC_THREAD(arbiter);
  }

  ReplayResult result;

 private:
  struct Placement {
    uint32_t cta = 0;      // index in the kernel
    uint32_t replica = 0;
    uint32_t sm = 0;
  };

  void start(uint32_t tag, uint64_t at) {
    const Placement& pl = placement_[tag];
    const elastic::CtaTrace& cta = kernel_->ctas[pl.cta];
    const uint64_t now = clocks_.core.cycle_at(sc_core::sc_time_stamp());
    const uint64_t begin = std::max(at, now);
    begin_cycle_[tag] = begin;
    ++resident_[pl.sm];
    if (tracer_ != nullptr) tracer_->cta_begin(pl.sm, kernel_->id, cta.cta, clocks_.core.time_of_cycle(begin));
    // In task mode an SM replays other CTAs than it ran: the MSHR dependencies do not apply.
    injectors_[pl.sm]->start_cta(cta, kernel_->id, begin, uint64_t{pl.replica} * options_.offset_stride, tag,
                                 options_.mode == ReplayOptions::Mode::kSync);
  }

  void cta_done(uint64_t tag64, uint64_t end) {
    const auto tag = static_cast<uint32_t>(tag64);
    const Placement& pl = placement_[tag];
    end_cycle_[tag] = end;
    --resident_[pl.sm];
    if (tracer_ != nullptr) tracer_->cta_end(pl.sm, kernel_->id, kernel_->ctas[pl.cta].cta, clocks_.core.time_of_cycle(end));
    latest_end_ = std::max(latest_end_, end);
    if (options_.mode == ReplayOptions::Mode::kSync) {
      const uint32_t base = pl.replica * static_cast<uint32_t>(kernel_->ctas.size());
      for (uint32_t j : dependents_[pl.cta]) start(base + j, end + kernel_->ctas[j].begin_gap);
    } else {
      next_task(pl.sm, end);
    }
    if (--remaining_ == 0) all_done_.notify(sc_core::SC_ZERO_TIME);
  }

  // Task mode: SM `sm` has a free slot from cycle `at`.
  void next_task(uint32_t sm, uint64_t at) {
    std::vector<uint32_t>& queue = queues_[options_.task_map.empty() ? 0 : sm];
    size_t& head = heads_[options_.task_map.empty() ? 0 : sm];
    if (head == queue.size() || resident_[sm] >= slots_) return;
    const uint32_t tag = queue[head++];
    placement_[tag].sm = sm;
    const elastic::CtaTrace& cta = kernel_->ctas[tag];
    start(tag, at + (cta.begin_after != elastic::kNone ? cta.begin_gap : 1));
  }

  void run_kernel(uint32_t index) {
    const elastic::KernelTrace& k = trace_.kernels[index];
    kernel_ = &k;
    const uint64_t kb = clocks_.core.cycle_at(sc_core::sc_time_stamp());
    const uint32_t n = static_cast<uint32_t>(k.ctas.size());
    const uint32_t captured = trace_.header.sm_count;
    stats_.begin_kernel(k.id, k.name);
    if (tracer_ != nullptr) tracer_->kernel_begin(k.id, k.name, sc_core::sc_time_stamp());
    for (const elastic::CopyWrite& w : k.copies) {
      if (w.sector_mask == 0) continue;
      const unsigned first = static_cast<unsigned>(__builtin_ctz(w.sector_mask));
      const unsigned last = 31u - static_cast<unsigned>(__builtin_clz(w.sector_mask));
      copy_engine_->write(w.address + first * kSectorBytes, (last - first + 1) * kSectorBytes, k.id);
    }
    latest_end_ = kb;
    for (auto& injector : injectors_) injector->configure_l1(sm_params_.l1_capacity(k.shared_capacity));
    std::fill(resident_.begin(), resident_.end(), 0u);
    resident_.resize(sms_, 0);
    if (options_.mode == ReplayOptions::Mode::kSync) {
      placement_.assign(size_t{n} * options_.replicas, Placement{});
      dependents_.assign(n, {});
      for (uint32_t i = 0; i < n; ++i) {
        if (k.ctas[i].begin_after != elastic::kNone) dependents_[k.ctas[i].begin_after].push_back(i);
      }
      for (uint32_t r = 0; r < options_.replicas; ++r) {
        for (uint32_t i = 0; i < n; ++i) placement_[r * n + i] = Placement{i, r, k.ctas[i].sm + r * captured};
      }
      remaining_ = n * options_.replicas;
      begin_cycle_.assign(remaining_, kNever);
      end_cycle_.assign(remaining_, kNever);
      if (remaining_ == 0) all_done_.notify(sc_core::SC_ZERO_TIME);
      for (uint32_t r = 0; r < options_.replicas; ++r) {
        for (uint32_t i = 0; i < n; ++i) {
          if (k.ctas[i].begin_after == elastic::kNone) start(r * n + i, kb + k.ctas[i].begin_gap);
        }
      }
    } else {
      placement_.assign(n, Placement{});
      for (uint32_t i = 0; i < n; ++i) placement_[i].cta = i;
      slots_ = options_.cta_slots != 0 ? options_.cta_slots : captured_occupancy(k, captured);
      remaining_ = n;
      begin_cycle_.assign(n, kNever);
      end_cycle_.assign(n, kNever);
      if (options_.task_map.empty()) {
        queues_.assign(1, {});
        heads_.assign(1, 0);
        for (uint32_t i = 0; i < n; ++i) queues_[0].push_back(i);
      } else {
        queues_ = static_queues_[index];
        heads_.assign(sms_, 0);
      }
      if (remaining_ == 0) all_done_.notify(sc_core::SC_ZERO_TIME);
      // The first wave: slot by slot over the SMs, one CTA per cycle after the launch latency.
      uint64_t launch = kNever;
      for (const elastic::CtaTrace& cta : k.ctas) {
        if (cta.begin_after == elastic::kNone) launch = std::min<uint64_t>(launch, cta.begin_gap);
      }
      if (launch == kNever) launch = 0;
      uint64_t at = kb + launch;
      for (uint32_t slot = 0; slot < slots_; ++slot) {
        for (uint32_t sm = 0; sm < sms_; ++sm) {
          std::vector<uint32_t>& queue = queues_[options_.task_map.empty() ? 0 : sm];
          size_t& head = heads_[options_.task_map.empty() ? 0 : sm];
          if (head == queue.size()) continue;
          const uint32_t tag = queue[head++];
          placement_[tag].sm = sm;
          start(tag, at++);
        }
      }
    }
    while (remaining_ != 0) sc_core::wait(all_done_);
    const uint64_t end_cycle = latest_end_ + k.end_gap;
    const sc_core::sc_time end_time = clocks_.core.time_of_cycle(end_cycle);
    if (end_time > sc_core::sc_time_stamp()) sc_core::wait(end_time - sc_core::sc_time_stamp());
    while (uvm_->holding_requests()) sc_core::wait(uvm_->drained());  // stores held by far faults
    while (!copy_engine_->idle()) sc_core::wait(copy_engine_->drained());
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (tracer_ != nullptr) tracer_->kernel_end(k.id, now);
    KernelResult r;
    r.id = k.id;
    r.name = k.name;
    r.captured_cycles = k.cycles;
    r.cycles = clocks_.core.cycle_at(now) - kb;
    r.ps = now.value() - begin_ps_;
    ++kernels_;
    cycles_ += r.cycles;
    time_ps_ += r.ps;
    captured_cycles_ += k.cycles;
    stats_.end_kernel(k.id);
    result.kernels.push_back(r);
  }

  void perform(const UvmOperation& op) {
    using Kind = UvmOperation::Kind;
    switch (op.kind) {
      case Kind::kMap: uvm_->map_managed(op.base, op.bytes); break;
      case Kind::kUnmap: uvm_->unmap_managed(op.base); break;
      case Kind::kPrefetchToDevice: uvm_->prefetch(op.base, op.bytes, true); break;
      case Kind::kPrefetchToHost: uvm_->prefetch(op.base, op.bytes, false); break;
      case Kind::kHostRead: uvm_->host_access(op.base, op.bytes, false); break;
      case Kind::kHostWrite: uvm_->host_access(op.base, op.bytes, true); break;
      case Kind::kAdvise: uvm_->advise(op.base, op.bytes, op.advice, op.location); break;
    }
  }

  void arbiter() {
    uint64_t previous_end_ps = 0;  // captured
    for (uint32_t i = 0; i < trace_.kernels.size(); ++i) {
      const elastic::KernelTrace& k = trace_.kernels[i];
      // The first kernel begins when it began at capture; the next ones the captured host gap
      // after the previous one ended here.
      const uint64_t gap = i == 0 ? k.begin_ps : (k.begin_ps > previous_end_ps ? k.begin_ps - previous_end_ps : 0);
      const uint64_t begin = sc_core::sc_time_stamp().value() + gap;
      // The host's unified-memory operations, each its captured time before the kernel's begin
      // (at once when that has passed); prefetches and host accesses take their own time.
      for (const elastic::UvmRecord& u : k.uvm) {
        const uint64_t at = begin - std::min(begin, u.before_ps);
        if (at > sc_core::sc_time_stamp().value()) sc_core::wait(sc_core::sc_time::from_value(at - sc_core::sc_time_stamp().value()));
        perform(u.operation);
      }
      if (begin > sc_core::sc_time_stamp().value()) sc_core::wait(sc_core::sc_time::from_value(begin - sc_core::sc_time_stamp().value()));
      begin_ps_ = sc_core::sc_time_stamp().value();
      run_kernel(i);
      previous_end_ps = k.end_ps;
    }
    result.simulated_ps = sc_core::sc_time_stamp().value();
    sc_core::sc_stop();
  }

  std::vector<std::vector<std::vector<uint32_t>>> static_queues_;  // task map: [kernel][sm] -> CTA indices
  elastic::Trace& trace_;
  ReplayOptions options_;
  gpu::SmParams sm_params_;  // the replay configuration's (L1 sizes per kernel)
  stats::Registry& stats_;
  TraceObserver* tracer_;
  ClockDomains clocks_;
  memory::AddressMap map_;
  std::unique_ptr<uvm::UvmSystem> uvm_;  // the injectors' L1 TLBs, the GMMU, the PCIe link (built first, as there)
  // As in the timing model: crossbar, HBM, L2 slices wake in one process, joined in that order.
  // Declared before them: they leave it when destroyed.
  memory::WakeDomain memory_wakes_;
  std::vector<std::unique_ptr<TlmMonitor>> monitors_;
  std::vector<std::unique_ptr<gpu::TraceInjector>> injectors_;
  std::vector<std::unique_ptr<gpu::SmCluster>> clusters_;
  std::unique_ptr<InjectorStepper> stepper_;
  std::unique_ptr<gpu::CopyEngine> copy_engine_;
  std::unique_ptr<gpu::Crossbar> crossbar_;
  std::unique_ptr<memory::HbmController> hbm_;
  std::unique_ptr<memory::L2SliceGroup> l2_group_;
  std::vector<std::unique_ptr<memory::L2Slice>> slices_;
  stats::Group& group_;
  stats::Counter& kernels_;
  stats::Counter& cycles_;
  stats::Counter& time_ps_;
  stats::Counter& captured_cycles_;
  uint32_t sms_ = 0;

  // The kernel being replayed.
  const elastic::KernelTrace* kernel_ = nullptr;
  uint64_t begin_ps_ = 0;
  std::vector<Placement> placement_;              // per tag
  std::vector<std::vector<uint32_t>> dependents_;  // sync: CTAs that start after CTA i ends
  std::vector<uint64_t> begin_cycle_, end_cycle_;  // per tag
  std::vector<uint32_t> resident_;                 // per SM
  std::vector<std::vector<uint32_t>> queues_;      // task: per SM (static) or one (dynamic)
  std::vector<size_t> heads_;
  uint32_t slots_ = 1;
  uint32_t remaining_ = 0;
  uint64_t latest_end_ = 0;
  sc_core::sc_event all_done_;

 public:
  uint32_t sms() const { return sms_; }
  uint64_t requests() const {
    uint64_t total = 0;
    for (const auto& kernel : trace_.kernels) {
      for (const auto& cta : kernel.ctas) {
        for (const auto& w : cta.warps) total += w.requests.size();
      }
    }
    return total * (options_.mode == ReplayOptions::Mode::kSync ? options_.replicas : 1);
  }
};

// The static task map resolved per kernel: [kernel][sm] -> CTA indices in map order. Throws
// std::invalid_argument for a CTA the kernel lacks, an SM beyond `sms`, or a CTA left unassigned.
std::vector<std::vector<std::vector<uint32_t>>> resolve_task_map(const elastic::Trace& trace,
                                                               const std::vector<TaskAssignment>& map, uint32_t sms) {
  std::vector<std::vector<std::vector<uint32_t>>> queues(trace.kernels.size());
  for (uint32_t index = 0; index < trace.kernels.size(); ++index) {
    const elastic::KernelTrace& k = trace.kernels[index];
    const uint32_t n = static_cast<uint32_t>(k.ctas.size());
    std::vector<uint32_t> by_cta_order(n);
    for (uint32_t i = 0; i < n; ++i) by_cta_order[i] = i;
    std::sort(by_cta_order.begin(), by_cta_order.end(),
              [&](uint32_t a, uint32_t b) { return k.ctas[a].cta < k.ctas[b].cta; });
    auto find = [&](uint64_t cta) -> uint32_t {
      const auto it = std::lower_bound(by_cta_order.begin(), by_cta_order.end(), cta,
                                       [&](uint32_t i, uint64_t c) { return k.ctas[i].cta < c; });
      return it != by_cta_order.end() && k.ctas[*it].cta == cta ? *it : n;
    };
    queues[index].assign(sms, {});
    std::vector<bool> mapped(n, false);
    for (const TaskAssignment& a : map) {
      if (a.kernel != TaskAssignment::kAllKernels && a.kernel != index) continue;
      const uint32_t found = find(a.cta);
      if (found == n) {
        if (a.kernel == TaskAssignment::kAllKernels) continue;  // a map for all kernels may name more CTAs
        throw std::invalid_argument("task map: kernel " + std::to_string(index) + " (" + k.name + ") has no CTA " +
                                    std::to_string(a.cta));
      }
      if (a.sm >= sms) {
        throw std::invalid_argument("task map: CTA " + std::to_string(a.cta) + " on SM " + std::to_string(a.sm) +
                                    " but the replay has " + std::to_string(sms) + " SMs (--task-sms)");
      }
      if (mapped[found]) continue;  // the first assignment of a CTA wins
      mapped[found] = true;
      queues[index][a.sm].push_back(found);
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (!mapped[i]) {
        throw std::invalid_argument("task map: CTA " + std::to_string(k.ctas[i].cta) + " of kernel " +
                                    std::to_string(index) + " (" + k.name + ") is not assigned to an SM");
      }
    }
  }
  return queues;
}

}  // namespace

std::vector<TaskAssignment> read_task_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("task map " + path + ": cannot open");
  std::vector<TaskAssignment> map;
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string kernel, cta, sm, extra;
    if (!(words >> kernel)) continue;
    auto bad = [&](const std::string& why) {
      return std::invalid_argument("task map " + path + ":" + std::to_string(number) + ": " + why +
                                   " (want: KERNEL CTA SM, KERNEL an index or '*')");
    };
    if (!(words >> cta >> sm) || (words >> extra)) throw bad("expected three fields");
    TaskAssignment a;
    try {
      size_t used = 0;
      if (kernel != "*") {
        a.kernel = static_cast<uint32_t>(std::stoul(kernel, &used));
        if (used != kernel.size()) throw bad("kernel '" + kernel + "' is not a number");
      }
      a.cta = std::stoull(cta, &used);
      if (used != cta.size()) throw bad("CTA '" + cta + "' is not a number");
      a.sm = static_cast<uint32_t>(std::stoul(sm, &used));
      if (used != sm.size()) throw bad("SM '" + sm + "' is not a number");
    } catch (const std::logic_error& e) {
      if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr && std::string(e.what()).rfind("task map", 0) == 0) {
        throw;
      }
      throw bad("not a number");
    }
    map.push_back(a);
  }
  if (map.empty()) throw std::invalid_argument("task map " + path + ": no assignments");
  return map;
}

ReplayResult run_replay(elastic::Trace& trace, const PlatformParams& params, const ReplayOptions& options,
                        stats::Registry& stats, TraceObserver* tracer) {
  if (options.replicas == 0) throw std::invalid_argument("replay: --replicate must be at least 1");
  if (options.mode == ReplayOptions::Mode::kTask && options.replicas != 1) {
    throw std::invalid_argument("replay: task mode and replication do not combine");
  }
  if (options.l1_redo) elastic::interleave_l1_hits(trace, options.captured_l1_hit_latency);
  elastic::mark_shared_lines(trace);
  stats.set_time_source([] { return sc_core::sc_time_stamp().value(); });
  std::vector<std::vector<std::vector<uint32_t>>> static_queues;
  if (options.mode == ReplayOptions::Mode::kTask && !options.task_map.empty()) {
    static_queues = resolve_task_map(trace, options.task_map, options.task_sms != 0 ? options.task_sms : params.sm.count);
  }
  ReplayTop top("replay", trace, params, options, stats, tracer, std::move(static_queues));
  // The arbiter stops the simulation after the last kernel (HBM refresh would run on); SystemC
  // announces sc_stop on stdout, which is the replay's report.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_start();
  stats.set_time_source({});
  ReplayResult result = top.result;
  result.sms = top.sms();
  result.requests = top.requests();
  return result;
}

}  // namespace gpuvp::replay
