// A per-SM L1 TLB as a TLM-2.0 module on the SM's memory path (Sm.mem -> L1Tlb -> SmCluster.in).
//
//   in     (simple_target_socket, AT): the SM's line requests.
//   out    (simple_initiator_socket, AT): toward the SM cluster; responses come back through it.
//   gmmu   (simple_initiator_socket, AT): Translate requests to the GMMU (uvm_message.h).
//   notify (simple_target_socket, b_transport): Replay / Invalidate / FlushAll from the GMMU.
//
// Requests outside managed memory pass straight through: the same call, phase and delay reach
// the cluster, so a run without cudaMallocManaged times exactly as without the TLB. A request
// to managed memory is accepted at once (END_REQ) while fewer than `uvm.l1_tlb.pending` are
// held (else the SM waits for END_REQ: back-pressure), looked up after the L1 latency, and
// forwarded on a hit. A miss asks the GMMU (one request per page, later misses to the page
// wait with it); a Nack-replayable leaves the requests waiting until the GMMU's Replay, when
// the TLB translates again (seed 003 §B.2). Requests to other pages keep flowing meanwhile:
// warps that do not fault keep running.
//
// Statistics (group `path`): accesses, hits, misses, hit_rate, translations (requests sent to
// the GMMU), nacks, replays, flushes, invalidations, fault_stall_cycles (core cycles requests
// waited between a Nack and the translation that followed the replay), blocked (requests the
// SM had to hold because the TLB was full).
//
// Remote pages (cudaMemAdvise: preferred location host, accessed by the device): a translated
// request to a page the device maps in host memory waits the PCIe read (or posted write) the
// access hook reports before it goes on (the values themselves live in the functional model).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/tlm/clock_domain.h"
#include "models/uvm/gmmu/uvm_message.h"
#include "models/uvm/residency/page_table.h"
#include "models/uvm/tlb/tlb_array.h"
#include "models/uvm/uvm_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::uvm {

class L1Tlb : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L1Tlb> in;
  tlm_utils::simple_initiator_socket<L1Tlb> out;
  tlm_utils::simple_initiator_socket<L1Tlb> gmmu;
  tlm_utils::simple_target_socket<L1Tlb> notify;

  // Called for every access to a managed page once translated (the GMMU's LRU and dirty bits).
  // Returns the extra latency (ps) of a remote access (a host-resident page the device maps,
  // cudaMemAdvise): the request goes on to memory that much later. 0 for device-resident pages.
  using AccessHook = std::function<uint64_t(uint64_t page, bool write, uint32_t bytes)>;

  L1Tlb(sc_core::sc_module_name name, const UvmParams& params, const ClockDomain& clock, const PageTable& table,
        stats::Registry& stats, const std::string& path, AccessHook on_access = nullptr);
  ~L1Tlb() override;
  L1Tlb(const L1Tlb&) = delete;
  L1Tlb& operator=(const L1Tlb&) = delete;

  // Managed requests inside the TLB (looking up, waiting for a translation, or to forward).
  uint32_t held() const { return held_; }
  // Notified (delta) whenever the TLB's last held request leaves; null: none.
  void set_drained_event(sc_core::sc_event* event) { drained_ = event; }

 private:
  struct Waiting;
  tlm::tlm_sync_enum in_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum out_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum gmmu_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void notify_b(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void accept(tlm::tlm_generic_payload& gp);  // a managed request enters the lookup pipeline
  void step();                                // SC_METHOD: due lookups, then forwarding
  void translated(uint64_t page, tlm::tlm_generic_payload& gp);
  void request_translation(uint64_t page, bool write);
  void forward();
  void left(tlm::tlm_generic_payload& gp);  // a request left the TLB downstream
  bool is_write(tlm::tlm_generic_payload& gp) const;

  UvmParams params_;
  const ClockDomain& clock_;
  const PageTable& table_;
  AccessHook on_access_;
  TlbArray tlb_;
  uint32_t held_ = 0;
  tlm::tlm_generic_payload* blocked_ = nullptr;  // managed request refused while full (END_REQ owed)
  tlm::tlm_generic_payload* owed_end_ = nullptr; // queued pass-through request (END_REQ owed)
  bool down_busy_ = false;                       // a request awaits END_REQ from the cluster
  tlm::tlm_generic_payload* down_gp_ = nullptr;
  bool down_owes_sm_ = false;                    // that END_REQ goes on to the SM
  std::deque<std::pair<uint64_t, tlm::tlm_generic_payload*>> lookups_;  // (due ps, request), in order
  std::deque<tlm::tlm_generic_payload*> ready_;  // translated (or pass-through), to forward
  std::deque<std::pair<uint64_t, tlm::tlm_generic_payload*>> remote_;  // (due ps, request): crossing PCIe
  std::map<uint64_t, std::unique_ptr<Waiting>> waiting_;  // by page: a translation outstanding
  sc_core::sc_event wake_;
  sc_core::sc_event* drained_ = nullptr;

  stats::Counter& accesses_;
  stats::Counter& hits_;
  stats::Counter& misses_;
  stats::Counter& translations_;
  stats::Counter& nacks_;
  stats::Counter& replays_;
  stats::Counter& flushes_;
  stats::Counter& invalidations_;
  stats::Counter& fault_stall_cycles_;
  stats::Counter& blocked_count_;
};

}  // namespace gpuvp::uvm
