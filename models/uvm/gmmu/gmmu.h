// The GMMU as a TLM-2.0 module: the shared L2 TLB, the page-table walker and the far-fault
// engine (fault_service.h) of unified virtual memory (seed 003 §B.2, §C.1).
//
//   translate (multi_passthrough_target_socket, one binding per L1 TLB, in TLB order):
//       Translate requests (uvm_message.h), AT: END_REQ at once, BEGIN_RESP after the L2 TLB
//       lookup (hit) or lookup + page walk (miss): Translated when the page is resident,
//       NackReplayable when it far-faulted (the fault sits in an MSHR; when the MSHRs are full
//       the request waits here, unanswered, until an entry frees: back-pressure).
//   notify (multi_passthrough_initiator_socket, same order): Replay when a faulted page landed;
//       Invalidate / FlushAll shootdowns on eviction (and FlushAll on every landing when
//       uvm.shootdown = whole, seed 003 §C.3).
//   pcie (simple_initiator_socket -> PcieLink.device_in): migrations (reads of host memory)
//       and write-backs (writes to host memory), timed by the link.
//
// The driver handles one batch at a time: a batch starts when a fault is queued and the
// previous batch's fault-handling latency has passed; faults arriving meanwhile form the next
// batch. The walker is multi-threaded (walks overlap), as in UVMSmart.
//
// Statistics: group `path` (l2_tlb_accesses, l2_tlb_hits, l2_tlb_hit_rate, page_walks,
// nacks, replays, shootdowns) and the fault engine's counters in the same group.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/tlm/clock_domain.h"
#include "models/tlm/trace_observer.h"
#include "models/uvm/gmmu/fault_service.h"
#include "models/uvm/gmmu/uvm_message.h"
#include "models/uvm/residency/page_table.h"
#include "models/uvm/tlb/tlb_array.h"
#include "models/uvm/uvm_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::uvm {

class Gmmu : public sc_core::sc_module, private MigrationPort {
 public:
  tlm_utils::multi_passthrough_target_socket<Gmmu> translate;
  tlm_utils::multi_passthrough_initiator_socket<Gmmu> notify;
  tlm_utils::simple_initiator_socket<Gmmu> pcie;

  // `table` is shared with the L1 TLBs and the host side; `device_pages` frames hold managed
  // pages. `clock`, `table` and `stats` must outlive the module. `tracer` (may be null) is told
  // the far-fault activity (TraceObserver::far_faults) whenever it changes.
  Gmmu(sc_core::sc_module_name name, const UvmParams& params, uint64_t device_pages, uint64_t seed,
       const ClockDomain& clock, PageTable& table, stats::Registry& stats, const std::string& path,
       TraceObserver* tracer = nullptr);
  Gmmu(const Gmmu&) = delete;
  Gmmu& operator=(const Gmmu&) = delete;

  // A device access of `bytes` to a managed page once translated: LRU/LFU bookkeeping, dirty
  // bit, accuracy for resident pages; for a page mapped remotely in host memory (advice) the
  // access crosses the PCIe link and the result is its latency in ps (0 for resident pages).
  uint64_t access(uint64_t page, bool write, uint32_t bytes = 0);
  // cudaMemPrefetchAsync: to the device (migrate) or to the host (write back, invalidate).
  // Call from an SC_THREAD: waits until the transfers are done.
  void prefetch(PageRange range, bool to_device);
  // The host reads or writes `range` (FaultService::host_access). Call from an SC_THREAD: waits
  // for pages still landing, then for the write-backs.
  void host_access(PageRange range, bool write);
  // cudaMemAdvise (FaultService::advise). Throws std::invalid_argument for a bad advice/location.
  void advise(PageRange range, uint32_t advice, uint32_t location) { faults_.advise(range, advice, location); }
  // The range is about to be unmapped (cudaFree): its translations go from every TLB. No wait.
  void drop(PageRange range) { invalidated(range); }
  // Time the GMMU has pending work (landings) or ~0; for tests and idle reporting.
  uint64_t next_event_ps() const;

 private:
  struct Job {
    enum class Kind { Respond, Walked } kind;
    int tlb;
    tlm::tlm_generic_payload* gp;
  };
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void thread();
  void at(uint64_t time_ps, Job job);
  void walked(int tlb, tlm::tlm_generic_payload& gp);
  void respond(int tlb, tlm::tlm_generic_payload& gp, UvmMessageKind kind);
  void send(int tlb, UvmMessageKind kind, PageRange range);
  void land();
  uint64_t now_ps() const { return sc_core::sc_time_stamp().value(); }
  uint64_t cycles_ps(uint64_t cycles) const;
  void report_faults();  // tells the tracer the far-fault activity when it changed

  // MigrationPort
  uint64_t migrate_in(PageRange range, uint64_t ready_ps) override;
  uint64_t write_back(PageRange range, uint64_t ready_ps) override;
  void invalidated(PageRange range) override;
  uint64_t dma(tlm::tlm_command command, PageRange range, uint64_t ready_ps);

  UvmParams params_;
  const ClockDomain& clock_;
  PageTable& table_;
  stats::Group& group_;
  TlbArray l2_;
  FaultService faults_;
  std::multimap<uint64_t, Job> jobs_;  // by due time, then arrival (stable)
  std::vector<std::pair<int, tlm::tlm_generic_payload*>> refused_;  // MSHRs were full
  uint64_t driver_free_ps_ = 0;   // the driver finished handling its last batch
  bool batch_scheduled_ = false;
  uint64_t batch_at_ps_ = 0;
  sc_core::sc_event wake_;
  // Waits (SC_THREAD) until no page of `range` is still migrating to the device.
  void wait_landed(PageRange range);
  std::vector<uint8_t> scratch_;  // DMA data buffer (the functional copy lives in the runtime)
  std::vector<uint8_t> remote_scratch_;  // remote accesses' data buffer
  uint64_t access_clock_ = 0;

  stats::Counter& l2_accesses_;
  stats::Counter& l2_hits_;
  stats::Counter& walks_;
  stats::Counter& nacks_;
  stats::Counter& replays_;
  stats::Counter& shootdowns_;
  TraceObserver* tracer_;
  const stats::Counter* far_faults_ = nullptr;      // the fault engine's, for the tracer
  const stats::Counter* migrated_bytes_ = nullptr;
  uint64_t reported_[3] = {0, 0, 0};                // outstanding, raised, migrated pages
};

}  // namespace gpuvp::uvm
