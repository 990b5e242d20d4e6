// TraceInjector: an SM replaced by its elastic trace (platform/elastic_trace). It has the SM's
// initiator socket and speaks its protocol, so it binds where an SM binds (an SmCluster input)
// and feeds the real crossbar, L2 and HBM.
//
//   mem (simple_initiator_socket, AT, 4 phases): one request per captured request, line address,
//       length and sector mask as captured, GpuExtension with this injector's SM index, the
//       replaying warp's handle as warp id, the CTA and kernel; one BEGIN_REQ outstanding until
//       END_REQ, at most one request per core cycle (as the SM); BEGIN_RESP completed at once.
//
// Elastic timing, per warp, in core cycles: a request with dependencies is ready `gap` cycles
// after the last of their responses arrived (replayed, not captured, arrival times); one without,
// `gap` cycles after the warp's previous request was ready (its CTA's start for the first); never
// before the warp's previous request; and a request the captured L1's MSHRs held back no sooner
// than `mshr_gap` after the mshr_after-th response of the kernel on this injector to a request
// holding an MSHR (whichever warp's: the MSHR it took was freed then); in task mode its gap gets
// the captured wait back instead; and a request whose warp passed a barrier no sooner than
// `barrier_gap` after the barrier's release as replayed: the latest of its warps' arrivals, each
// its captured distance after that warp's replayed response or readiness before it. Ready requests of all warps go out in (ready cycle,
// captured order) order when the port is free: the SM's first-in first-out queue. A CTA ends `end_gap` cycles after its last issue or held response (the ones
// that held it at capture); the injector reports the end cycle and the CTA's slot is free.
// Requests captured after their CTA ended (stores the LSU still held) go out afterwards.
//
// Address offsetting (weak scaling): start_cta's `offset` is added to every request whose
// Request::shared is false (lines the trace writes), so a replica works on its own copy of the
// data it writes while read-only lines stay shared.
//
// The L1's MSHRs as a pool (constructor's `mshrs`): at the captured configuration the SM never
// had more misses in flight than it has MSHRs, so the pool changes nothing there; a slower memory
// or fewer MSHRs on replay make requests wait for one, as on the SM.
//
// L1 redo (enable_l1; gpuvp replay --l1 redo, with elastic::interleave_l1_hits): the injector
// keeps an L1 of the replayed configuration (models/gpu/sm/l1_tags.h, sized per kernel by
// configure_l1) and looks up every load that passed through the captured L1 — those that
// missed there and the hits and merges, now requests of their own — when it comes due: all
// wanted sectors valid: done hit_latency cycles later, no request; the missing ones pending in
// a miss of this injector: done with that miss's response (at most `merges` per miss);
// otherwise a request for the missing sectors, filling the L1 with its response. Stores write
// through (valid sectors of a present line); loads that bypassed the L1 neither hit nor fill.
//
// Statistics (group `stats_path`): requests, sector_requests, write_requests, ctas, mshr_full;
// with the L1 redone also l1_hits, l1_merges, l1_misses (lookups).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/gpu/sm/l1_tags.h"
#include "models/tlm/clock_domain.h"
#include "models/tlm/delayed_responses.h"
#include "models/tlm/payload_pool.h"
#include "platform/elastic_trace/elastic_trace.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

class TraceInjector : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TraceInjector> mem;

  // (tag given to start_cta, core cycle at which the CTA ended)
  using CtaDone = std::function<void(uint64_t tag, uint64_t end_cycle)>;

  // `mshrs`: the replayed L1's MSHRs (gpu.sm.l1.mshrs; 0: no limit). A request that holds one
  // (elastic::holds_mshr) leaves only while fewer than `mshrs` such requests await their
  // responses; the requests behind it wait too, as behind the SM's LSU head.
  TraceInjector(sc_core::sc_module_name name, uint32_t sm_index, const ClockDomain& clock, stats::Registry& stats,
                const std::string& stats_path, uint32_t mshrs = 0);
  ~TraceInjector() override;
  TraceInjector(const TraceInjector&) = delete;
  TraceInjector& operator=(const TraceInjector&) = delete;

  void on_cta_done(CtaDone callback) { done_ = std::move(callback); }
  // Several injectors stepped by one process in index order, as the SM stepper steps the SMs
  // (so same-cycle requests reach a shared cluster port in SM order): the owner's `schedule`
  // hears when this injector wants to act and calls step() at that cycle's edge. Without a
  // scheduler the injector wakes its own process. Set before the simulation starts.
  using Schedule = std::function<void(uint32_t index, uint64_t cycle)>;
  void set_scheduler(Schedule schedule) { schedule_ = std::move(schedule); }
  // Acts at the current core-clock edge: sends the next ready request if the port is free.
  void step();
  // Replays `cta` (outlives its replay) from core cycle `begin` (not before the current one).
  // Called from a SystemC process. A CTA without requests ends at begin + end_gap.
  // `captured_sm`: this injector replays the captured SM's CTAs (not task mode), so the
  // requests' MSHR dependencies count this injector's responses.
  void start_cta(const elastic::CtaTrace& cta, uint64_t kernel_id, uint64_t begin, uint64_t offset, uint64_t tag,
                 bool captured_sm = false);
  // Redo the L1 (see above); call before the simulation starts.
  void enable_l1(uint32_t ways, uint32_t hit_latency, uint32_t merges);
  // The L1's size for the CTAs started from now on (the kernel's carve-out leaves it): a new size
  // empties it, as on the SM.
  void configure_l1(uint64_t bytes);
  // CTAs started and not yet ended.
  uint32_t resident() const { return resident_; }
  uint32_t index() const { return index_; }

 private:
  struct Warp;
  struct Cta;
  struct Ready {
    uint64_t cycle;
    uint64_t order;
    uint32_t warp;
    bool operator>(const Ready& o) const { return cycle != o.cycle ? cycle > o.cycle : order > o.order; }
  };

  struct Fill {  // an L1 miss in flight (L1 redo)
    const tlm::tlm_generic_payload* gp;
    uint64_t line;
    uint8_t mask;
    std::vector<std::pair<uint32_t, uint32_t>> waiters;  // (warp, request) merged into it
  };

  void evaluate(uint32_t warp);  // queue the warp's next request if its dependencies are met
  // The ready queue's head is a load the L1 answers without a request (L1 redo): takes it, true.
  // A miss returns false with the sectors it must request in `missing_sectors`.
  bool answer_from_l1(uint64_t cycle, uint8_t& missing_sectors);
  // Pops the ready queue's head (due now) as its warp's issue; returns its warp.
  uint32_t take_ready();
  // Request `index` of `warp` is answered at `cycle`.
  void complete(uint32_t warp, uint32_t index, uint64_t cycle);
  uint64_t address_of(const Warp& warp, const elastic::Request& r) const;
  void count_mshr_response(uint64_t kernel_id, uint64_t cycle);
  void wake_barrier_waiters(uint32_t warp);  // an event of `warp` that others' barriers wait for
  // Replayed release of barrier `index` of CTA `cta`: the latest arrival; kNever while a warp's
  // anchoring event is still to come (`waiter` then waits in that warp's list).
  uint64_t barrier_release(uint32_t cta, uint32_t index, uint32_t waiter);
  void request_sent(uint32_t warp_handle);
  void check_cta_end(uint32_t cta);
  void release_if_done(uint32_t warp);  // frees an ended CTA's warp once it has nothing left
  void tick();  // SC_METHOD on wake_: step()
  void wake_at(uint64_t cycle);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void response(tlm::tlm_generic_payload& gp, uint64_t cycle);

  uint32_t index_;
  const ClockDomain& clock_;
  PayloadPool pool_;
  CtaDone done_;
  Schedule schedule_;
  std::vector<Warp> warps_;
  std::vector<uint32_t> free_warps_;
  std::vector<Cta> ctas_;
  std::vector<uint32_t> free_ctas_;
  // Responses of the kernel being replayed (kernel_of_) to requests holding an MSHR, by cycle;
  // warps whose next request waits for the n-th of them, as (n, warp), soonest first.
  uint64_t kernel_of_ = ~uint64_t{0};
  std::vector<uint64_t> mshr_freed_;
  std::priority_queue<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>, std::greater<>>
      mshr_waiters_;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready_;
  uint32_t resident_ = 0;
  uint32_t mshrs_ = 0;      // 0: no limit
  uint32_t mshrs_busy_ = 0;  // requests holding an MSHR that await their response
  bool in_flight_ = false;  // a BEGIN_REQ awaits END_REQ
  const tlm::tlm_generic_payload* in_flight_gp_ = nullptr;
  uint64_t send_allowed_ = 0;
  uint64_t wake_cycle_ = ~uint64_t{0};  // the pending wake, if any
  sc_core::sc_event wake_;
  stats::Counter& requests_;
  stats::Counter& sector_requests_;
  stats::Counter& write_requests_;
  stats::Counter& ctas_started_;
  stats::Counter& mshr_full_;
  stats::Registry& stats_;
  std::string stats_path_;
  // L1 redo
  bool l1_on_ = false;
  L1Tags l1_;
  uint32_t l1_ways_ = 1, l1_hit_latency_ = 0, l1_merges_ = 1;
  std::vector<Fill> fills_;
  stats::Counter* l1_hits_ = nullptr;
  stats::Counter* l1_merge_count_ = nullptr;
  stats::Counter* l1_misses_ = nullptr;
  DelayedResponses delayed_;  // BEGIN_RESP with an annotated delay (the crossbar's cluster latency)
};

}  // namespace gpuvp::gpu
