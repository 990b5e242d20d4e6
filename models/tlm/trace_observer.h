// What a tracer is told about a simulation: the phases of TLM transactions crossing monitored
// links (TlmMonitor, tlm_monitor.h) and the GPU's kernels and CTAs. Models call it through a
// pointer that is null when tracing is off; platform/trace's TraceRecorder implements it.
// Every call comes from the SystemC kernel's thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

namespace gpuvp {

// A phase as seen on one link. kCompleted: the callee returned TLM_COMPLETED (the transaction
// ended within that call, response included).
enum class TracePhase : std::uint8_t { kBeginReq, kEndReq, kBeginResp, kEndResp, kCompleted };

// An L1 data-cache load lookup that sent no request of its own (elastic trace capture): every
// sector it wanted was valid, or the missing ones merged into a pending miss (an MSHR).
struct L1Lookup {
  std::uint64_t cycle = 0;      // core cycle of the lookup
  std::uint64_t kernel_id = 0;
  std::uint64_t cta = 0;        // linear CTA index
  std::uint32_t warp_slot = 0;
  std::uint64_t line = 0;       // 128 B line address (virtual)
  std::uint8_t mask = 0;        // sectors the warp wanted
  bool merged = false;          // some sectors waited for a pending miss
};

// A CTA barrier released (elastic trace capture): every warp that arrived, with its arrival
// cycle; the last to arrive released it (at its arrival). `seq` numbers the SM's releases
// (GpuExtension::barrier_seq names the last one a warp passed before an access).
struct BarrierRelease {
  std::uint64_t cycle = 0;
  std::uint64_t kernel_id = 0;
  std::uint64_t cta = 0;  // linear CTA index
  std::uint64_t seq = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> arrivals;  // (warp slot, arrival cycle)
};

// A unified-memory operation of the host side (elastic trace capture replays them): the
// command processor's calls into the UVM system (models/uvm/uvm_system.h).
struct UvmOperation {
  enum class Kind : std::uint8_t { kMap, kUnmap, kPrefetchToDevice, kPrefetchToHost, kHostRead, kHostWrite, kAdvise };
  static constexpr std::uint8_t kKinds = 7;
  Kind kind = Kind::kMap;
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;     // kUnmap: 0 (the allocation at base)
  std::uint32_t advice = 0;    // kAdvise: device::MemAdvice and its location
  std::uint32_t location = 0;
};

class TraceObserver {
 public:
  static constexpr std::uint32_t kNotTraced = 0xffffffffu;

  virtual ~TraceObserver() = default;

  // During elaboration, before a monitor is put on the link initiator -> target (socket
  // hierarchical names); `kind` names what the link carries ("sm", "crossbar", "l2", "dram",
  // "pcie"). Returns the id passed with the link's events, or kNotTraced when no transaction of
  // this link can pass the filters (then no monitor is inserted at all).
  virtual std::uint32_t add_link(const std::string& initiator, const std::string& target, const std::string& kind) = 0;
  // `phase` of `gp` crossed link `link`; it takes effect at `at` (now plus the annotated delay).
  virtual void phase(std::uint32_t link, tlm::tlm_generic_payload& gp, TracePhase phase, const sc_core::sc_time& at) = 0;

  // A kernel began/ended on the timing model.
  virtual void kernel_begin(std::uint64_t kernel_id, const std::string& name, const sc_core::sc_time& at) = 0;
  virtual void kernel_end(std::uint64_t kernel_id, const sc_core::sc_time& at) = 0;
  // A CTA (linear index `cta` in kernel `kernel_id`) became resident on / left SM `sm`.
  virtual void cta_begin(std::uint32_t sm, std::uint64_t kernel_id, std::uint64_t cta, const sc_core::sc_time& at) = 0;
  virtual void cta_end(std::uint32_t sm, std::uint64_t kernel_id, std::uint64_t cta, const sc_core::sc_time& at) = 0;

  // Unified memory's far faults, reported by the GMMU whenever one of these changed:
  // `outstanding` far-fault MSHR entries held now; `raised` far faults so far (the uvm.gmmu
  // far_faults counter) and `migrated_pages` pages migrated host->device so far (uvm.gmmu
  // migrated_bytes / page size), both running totals. A no-op unless a tracer wants them.
  virtual void far_faults(std::uint64_t /*outstanding*/, std::uint64_t /*raised*/, std::uint64_t /*migrated_pages*/,
                          const sc_core::sc_time& /*at*/) {}

  // L1 lookups (elastic trace capture): SMs report them only to an observer that wants them,
  // from the SystemC thread, at or before the end of the lookup's kernel.
  virtual bool wants_l1_lookups() const { return false; }
  virtual void l1_lookup(std::uint32_t /*sm*/, const L1Lookup& /*lookup*/) {}
  // Barrier releases, to an observer that wants L1 lookups (the capture), the same way: before
  // any access of a released warp is sent.
  virtual void barrier_release(std::uint32_t /*sm*/, const BarrierRelease& /*release*/) {}
  // The shared-memory capacity an SM is configured with for a kernel (its carve-out of the
  // unified L1/shared storage; the L1 gets the rest), when the CTA scheduler admits the kernel.
  virtual void kernel_shared_capacity(std::uint64_t /*kernel_id*/, std::uint64_t /*bytes*/) {}
  // A unified-memory operation begins at `at` (before any time it takes).
  virtual void uvm_operation(const UvmOperation& /*operation*/, const sc_core::sc_time& /*at*/) {}
};

}  // namespace gpuvp
