// HBM: every pseudo-channel of every stack behind one TLM-2.0 AT target.
//
//   socket (multi_passthrough_target_socket): bind any number of initiators (one per L2 slice
//   in the GPU). A request goes to the pseudo-channel the AddressMap names; its response comes
//   back on the socket it came in on. Timing only: no data is stored.
//
// Protocol (AT, 4 phases). BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ) when the
// pseudo-channel's queue of its direction (memory.hbm.queue_depth reads,
// memory.hbm.write_queue_depth writes) has room; otherwise the target returns
// TLM_ACCEPTED and sends END_REQ when an entry frees: back-pressure, never an unbounded queue.
// BEGIN_RESP goes out when the last data beat has moved; an initiator may return TLM_COMPLETED
// or TLM_ACCEPTED and send END_RESP later (then that socket's next response waits).
//
// Each pseudo-channel is an FR-FCFS controller with an open-row policy and write draining. It
// serves one direction at a time: reads until its write queue holds
// memory.hbm.write_drain_high writes or no read is queued; then writes until at most
// memory.hbm.write_drain_low remain while a read is queued, or none remain (the separate
// write queue and watermarks of GPGPU-Sim's and Accel-Sim's DRAM models, the write-drain modes
// of Ramulator and USIMM): the data bus turns around once per batch, not per write. At each DRAM
// clock edge it issues at most one command: the oldest queued request of the served direction
// whose row is open and whose column command may issue now (first ready); else the oldest
// request of that direction whose ACT or PRE may issue now. A PRE never closes a row that a
// queued request of the served direction still hits. The queues are indexed per bank and
// direction in age order, with counts of the requests that hit the open row, so a scheduling
// pass looks at the oldest row-hit request and the oldest request of each bank, not the whole
// queue. Every JEDEC constraint of
// hbm_params.h is honoured (tRCD, tRP, tRAS, tCL, tWL, tCCD_S/L, tRRD_S/L, tFAW, tWR, tWTR,
// tRTP, data-bus occupancy of burst_length/2 cycles). A request arriving at time t is decoded
// at the first DRAM edge strictly after t (so requests arriving together compete fairly).
// A request of n sectors (GpuExtension::sector_mask, else ceil(length / burst bytes)) takes n
// column commands to consecutive columns of its row. Latencies of an isolated read:
//   row hit       tCL + BL/2                 cycles after the decode edge
//   row closed    tRCD + tCL + BL/2
//   row conflict  tRP + tRCD + tCL + BL/2    (when tRAS/tRTP/tWR already allow the PRE)
// and the response goes out memory.hbm.controller_latency after that (front end, PHY and return
// path as a pure pipeline delay: bank and bus timing, and the bandwidth figures, exclude it).
//
// Refresh: all-bank refresh every tREFI per pseudo-channel (the first at tREFI): open banks are
// precharged (after their tRAS/tRTP/tWR), then the pseudo-channel issues nothing for tRFC.
// An idle pseudo-channel schedules no events: refreshes that fall in an idle stretch are
// accounted when work next arrives, with exactly the timing eager refresh would give; the
// refresh counter therefore counts refreshes up to the last request, not to the end of time.
//
// Partition (memory.hbm.partition): the controller simulates in time of its own, behind SystemC
// time (platform/parallel/time_partition.h): BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ)
// into a front end, stamped; the controller takes it in at that stamp, and a request whose
// pseudo-channel queue is full waits in the front end (oldest first, per pseudo-channel and
// direction) until an entry frees, where the exact model withholds END_REQ. Responses go out at
// their own time, as in the exact model. SmStepper runs advance() on a pool thread beside the
// SMs' windows; between its phases a SystemC process of the controller runs it just behind
// SystemC time. Same responses, at the same times, whoever runs it.
//
// Statistics (group `stats_path`, e.g. "memory.hbm"): requests, bytes, elapsed_ps (time of the
// last completion), latency_ps; ratios bandwidth (bytes/s over elapsed_ps) and
// average_latency_ns. Per pseudo-channel (`stats_path`.channel[c], aggregated as channel[*]):
// reads, writes, requests, read_bytes, write_bytes, row_hits, row_misses (bank closed),
// row_conflicts (other row open), activates, precharges, refreshes, bus_turnarounds (column
// commands of the other direction than the previous one), write_batches (switches to writes),
// watermark_drains (of which the high watermark started), latency histogram in DRAM cycles,
// ratio row_buffer_hit_rate.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "models/memory/address_map.h"
#include "models/memory/hbm/hbm_params.h"
#include "models/memory/timed_queue.h"
#include "models/memory/wake_queue.h"
#include "models/tlm/clock_domain.h"
#include "platform/parallel/time_partition.h"
#include "platform/stats/registry.h"

namespace gpuvp::memory {

class HbmController : public sc_core::sc_module, public parallel::TimePartition {
 public:
  tlm_utils::multi_passthrough_target_socket<HbmController> socket;

  // `map` must outlive the controller; so must `wakes`, the memory side's shared wake process
  // (wake_queue.h), when given (else the controller runs its own).
  HbmController(sc_core::sc_module_name name, const HbmParams& params, const AddressMap& map,
                stats::Registry& stats, const std::string& stats_path, WakeDomain* wakes = nullptr);
  ~HbmController() override;
  HbmController(const HbmController&) = delete;
  HbmController& operator=(const HbmController&) = delete;

  const HbmParams& params() const { return params_; }
  const HbmTiming& timing() const { return t_; }
  const ClockDomain& clock() const { return clock_; }
  // Bytes per second all pseudo-channels move with every data bus busy.
  double peak_bandwidth() const { return params_.peak_bandwidth(); }

  // memory.hbm.partition: this controller as a partition (above); nullptr otherwise.
  parallel::TimePartition* partition() { return params_.partition ? this : nullptr; }
  void exchange() override;
  void advance(uint64_t until_ps) override;
  void attach() override;
  void detach() override;
  void catch_up() override;

 private:
  struct Request;
  struct Bank;
  struct Channel;
  struct ChannelStats;

  void end_of_elaboration() override;
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  bool admit(int id, tlm::tlm_generic_payload& gp);  // false: that channel's queue is full
  void run_channel(uint32_t c);
  void refresh(Channel& ch, uint64_t now);
  void choose_direction(Channel& ch);  // read or write-drain mode, from the queue occupancies
  // Issues the command FR-FCFS picks at cycle `now` (issue = true) or only finds the first cycle
  // at or after `now` that some command may issue (issue = false); `next` gets that cycle.
  bool try_issue(Channel& ch, uint64_t now, uint64_t& next, bool issue);
  void complete(Channel& ch, uint32_t slot, uint64_t done_cycle);
  void wake(Channel& ch, uint64_t cycle);
  void respond();
  void respond_at(int source, tlm::tlm_generic_payload* gp, uint64_t time_ps);  // (partition: at the exchange)
  void queue_response(int source, tlm::tlm_generic_payload* gp, uint64_t time_ps);  // SystemC side
  // SystemC time, or a partition's own time (the stamp of what it simulates).
  uint64_t now_ps() const { return params_.partition ? partition_now_ps_ : current_time().value(); }
  WakeQueue& channel_wakes() { return params_.partition ? *partition_wakes_ : *wakes_; }
  void drive();  // partition, driven by itself: what is due before now
  void arm_drive();

  HbmParams params_;
  HbmTiming t_;
  const AddressMap& map_;
  ClockDomain clock_;
  uint64_t controller_latency_ps_;  // memory.hbm.controller_latency
  std::vector<std::unique_ptr<Channel>> channels_;

  // Per initiator socket: a request waiting for queue room, responses due, response exclusion.
  std::vector<tlm::tlm_generic_payload*> waiting_;
  std::vector<TimedHeap<tlm::tlm_generic_payload*>> responses_;
  std::vector<bool> responding_;
  std::unique_ptr<WakeQueue> wakes_;  // keys: pseudo-channels, then respond_key()
  uint32_t respond_key() const { return static_cast<uint32_t>(channels_.size()); }

  // Partition: stamped requests (SystemC side since the last exchange; the partition's, in stamp
  // order from arrivals_next_), the front end's waiting ones per pseudo-channel x 2 + direction,
  // responses made (for the SystemC side at the next exchange).
  struct Stamped {
    uint64_t time_ps;
    int source;
    tlm::tlm_generic_payload* gp;
  };
  std::vector<Stamped> inbox_, arrivals_, outbox_;
  size_t arrivals_next_ = 0;
  std::vector<std::deque<Stamped>> backlog_;
  uint64_t partition_now_ps_ = 0;
  bool attached_ = false;    // SmStepper drives the partition
  std::unique_ptr<WakeDomain> partition_domain_;
  std::unique_ptr<WakeQueue> partition_wakes_;  // keys: pseudo-channels
  sc_core::sc_event drive_event_;
  uint64_t drive_armed_ = ~uint64_t{0};

  stats::Counter& requests_;
  stats::Counter& bytes_;
  stats::Counter& elapsed_ps_;
  stats::Counter& latency_ps_;
  std::vector<std::unique_ptr<ChannelStats>> channel_stats_;
};

}  // namespace gpuvp::memory
