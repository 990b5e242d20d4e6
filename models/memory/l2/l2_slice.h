// One L2 slice: sectored, set-associative, LRU, write-back with write-allocate at sector
// granularity, MSHRs that merge misses to one line, atomics and reductions executed here.
// Timing only: the functional model owns values, so no data is stored.
//
//   in   (simple_target_socket):    requests from the crossbar (AT, 4 phases)
//   dram (simple_initiator_socket): fills and writebacks to HBM (AT, 4 phases)
//
// Protocol. BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ) while the input queue
// (memory.l2.queue_depth) has room, else END_REQ is sent when an entry frees. Responses go out
// as BEGIN_RESP; the initiator may complete at once or send END_RESP later. Towards DRAM the
// slice keeps one BEGIN_REQ outstanding until END_REQ and completes every BEGIN_RESP at once.
//
// Pipeline (L2 clock, memory.l2.clock). Requests leave the input queue in order, at the first
// L2 edge at or after their arrival and after the previous one's occupancy: a request of n
// sectors occupies ceil(n x sector_size / data_width) cycles (atomics at least A). With H = hit_latency, M = miss_latency, F = fill_latency,
// A = atomic_cycles (cycles of the L2 clock), a request handled at edge e:
//   load hit (all its sectors valid)  response at e + H
//   store                             response at e + H; sectors become valid and dirty
//                                     (write-allocate per sector: no fetch, no DRAM traffic)
//   atomic/reduction hit              response at e + H + A; the slice takes no other request
//                                     for A cycles; sectors become dirty
//   load/atomic miss                  DRAM read of the missing sectors at e + M; each waiting
//                                     request is answered F = fill_latency cycles after the
//                                     first L2 edge at or after the fill that completes its
//                                     sectors (+ A for atomics)
//   miss to a line with a fill pending: merged into its MSHR (one DRAM read per sector)
// Allocation evicts the LRU way without a pending fill; its dirty sectors go to DRAM as one
// writeback (sector_mask = dirty sectors) at e + M. The pipeline stalls (and the input queue
// fills, then END_REQ is withheld: back-pressure) when no MSHR is free, the MSHR's merge slots
// are full, every way of the set waits on a fill, or the DRAM queue is full.
// Sector mask of a request: its GpuExtension::sector_mask when set, else the sectors its
// address and length cover. A slice with nothing queued schedules no events. The slices of one
// memory system share one wake queue, their L2SliceGroup's (models/memory/wake_queue.h):
// same-instant wakes run in slice order, and per slice pipeline, then responses, then DRAM.
//
// Statistics (group `stats_path`, e.g. "memory.l2[3]"): accesses, loads, stores, atomics,
// sector_accesses, sector_hits, sector_misses, mshr_allocations, mshr_merges, stalls,
// writebacks, writeback_sectors, dram_reads, histogram mshr_occupancy (MSHRs busy, sampled at
// each allocation), ratio sector_hit_rate.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/memory/address_map.h"
#include "models/memory/l2/l2_params.h"
#include "models/memory/timed_queue.h"
#include "models/memory/wake_queue.h"
#include "models/tlm/clock_domain.h"
#include "models/tlm/payload_pool.h"
#include "platform/stats/registry.h"

namespace gpuvp::memory {

class L2Slice;

// The one wake queue that the slices of one memory system share (its own process, or the memory
// side's WakeDomain): whoever builds the slices owns it (before them, during elaboration) and
// hands it to each. A slice built without one runs its own.
class L2SliceGroup {
 public:
  // `wakes`: the memory side's shared wake process (wake_queue.h), or none: the group's own.
  explicit L2SliceGroup(uint32_t slices, WakeDomain* wakes = nullptr);
  L2SliceGroup(const L2SliceGroup&) = delete;
  L2SliceGroup& operator=(const L2SliceGroup&) = delete;

 private:
  friend class L2Slice;
  static constexpr uint32_t kWakeProcess = 0, kWakeRespond = 1, kWakeDram = 2, kWakeKinds = 3;
  std::vector<L2Slice*> slices_;  // [slice index]; keys are slice * kWakeKinds + kind
  WakeQueue queue_;
};

class L2Slice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L2Slice> in;
  tlm_utils::simple_initiator_socket<L2Slice> dram;

  // `map` (which must outlive the slice) tells the slice its lines' local index and rebuilds
  // a victim's address; `index` is this slice's number in the map; `group` (outliving the
  // slice; null: a process of its own) runs its wakes.
  L2Slice(sc_core::sc_module_name name, const L2Params& params, const AddressMap& map, uint32_t index,
          stats::Registry& stats, const std::string& stats_path, L2SliceGroup* group = nullptr);
  ~L2Slice() override;
  L2Slice(const L2Slice&) = delete;
  L2Slice& operator=(const L2Slice&) = delete;

  const L2Params& params() const { return params_; }
  const ClockDomain& clock() const { return clock_; }

 private:
  struct Way {
    uint64_t tag = 0;
    uint64_t lru = 0;  // last-use stamp; smallest is the victim
    int32_t mshr = -1;
    uint8_t valid = 0, dirty = 0;  // sector masks
    bool allocated = false;
  };
  struct Target {
    tlm::tlm_generic_payload* gp;
    uint8_t mask;
    bool atomic;
  };
  struct Mshr {
    uint64_t set = 0;
    uint32_t way = 0;
    uint32_t outstanding = 0;  // DRAM reads in flight
    uint8_t requested = 0;     // sectors fetched or being fetched
    uint32_t targets = 0;
  };
  struct DramItem {
    uint64_t time_ps;
    tlm::tlm_generic_payload* gp;
  };
  enum class Outcome { Done, Stall };
  friend class L2SliceGroup;
  static constexpr uint32_t kWakeProcess = L2SliceGroup::kWakeProcess, kWakeRespond = L2SliceGroup::kWakeRespond,
                            kWakeDram = L2SliceGroup::kWakeDram, kWakeKinds = L2SliceGroup::kWakeKinds;
  void on_wake(uint32_t kind);
  void wake_at(uint32_t kind, uint64_t time_ps);  // at least the current time

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void process();
  Outcome handle(tlm::tlm_generic_payload& gp, uint64_t now, uint64_t& busy_cycles);
  int32_t victim(uint64_t set) const;
  void evict(uint64_t set, Way& w, uint64_t send_ps);
  void dram_request(tlm::tlm_command cmd, uint64_t line_addr, uint8_t mask, uint64_t send_ps);
  void fill(tlm::tlm_generic_payload& gp);
  void respond_at(tlm::tlm_generic_payload& gp, uint64_t time_ps);
  void send_responses();
  void send_dram();
  void schedule_process();
  void resume();  // a stalling resource freed
  uint8_t sector_mask(const tlm::tlm_generic_payload& gp, const GpuExtension* ext) const;  // ext: gp's, or nullptr

  L2Params params_;
  const AddressMap& map_;
  uint32_t index_;
  ClockDomain clock_;
  uint64_t sets_;
  uint32_t ways_per_set_;
  uint64_t line_bytes_;

  std::vector<Way> ways_;        // [set * associativity + way]
  std::vector<Mshr> mshrs_;
  std::vector<Target> targets_;  // [mshr * mshr_targets + k]
  std::vector<int32_t> free_mshrs_;
  uint64_t lru_clock_ = 0;

  Ring<tlm::tlm_generic_payload*> queue_;
  tlm::tlm_generic_payload* waiting_ = nullptr;  // BEGIN_REQ held back (queue full)
  uint64_t pipe_free_ = 0;                       // first L2 cycle the pipeline is free
  bool stalled_ = false;

  TimedHeap<tlm::tlm_generic_payload*> responses_;
  bool responding_ = false;

  Ring<DramItem> dram_queue_;
  tlm::tlm_generic_payload* dram_in_flight_ = nullptr;  // BEGIN_REQ sent, END_REQ awaited
  PayloadPool pool_;
  std::unique_ptr<L2SliceGroup> own_group_;  // when built without a group
  L2SliceGroup* group_;                      // runs this slice's wakes

  stats::Counter &accesses_, &loads_, &stores_, &atomics_, &sector_accesses_, &sector_hits_, &sector_misses_,
      &mshr_allocations_, &mshr_merges_, &stalls_, &writebacks_, &writeback_sectors_, &dram_reads_;
  stats::Histogram& mshr_occupancy_;
};

}  // namespace gpuvp::memory
