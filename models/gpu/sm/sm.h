// One streaming multiprocessor, cycle by cycle on the core clock (execute-at-issue on the PTX
// functional model's warp-stepping API: values are computed when a warp issues).
//
//   mem (simple_initiator_socket, AT, 4 phases): sector requests toward the crossbar. One
//       128 B line per request, address = line address, length 128, GpuExtension with SM,
//       warp slot, CTA, kernel, sector mask and kind (Load / Store / Atomic / Reduction /
//       ConstantLoad for constant cache fills / InstructionFetch for instruction cache fills).
//       One BEGIN_REQ outstanding until END_REQ (back-pressure); BEGIN_RESP is completed at
//       once (TLM_COMPLETED) and takes effect at now + its annotated delay (the crossbar's
//       cluster latency). Payloads come from a PayloadPool.
//
// CTA side (called by the CTA scheduler, same SystemC process context): launch_cta() makes a
// CTA resident; the CtaDone callback fires when all its threads exited and its loads returned.
//
// Per cycle, per sub-core (warp slot % subcores), the warp scheduler (GTO or LRR) issues at
// most one instruction from a warp that is ready: not at a barrier, scoreboard clear for the
// registers it reads and writes, its functional unit free (initiation interval = 32 / lanes
// per sub-core), and for global/local memory ops a free LSU queue entry (constant loads: a
// free constant queue entry). Latencies: FP32, FP64, INT, SFU from the knobs; shared memory:
// shared_latency + (cycles - 1), the LD/ST unit busy for max(II, cycles) cycles, where cycles
// sums the phases' conflict degrees (one phase for accesses of up to 4 bytes per lane, two
// half-warp phases for 8 bytes, four quarter-warp phases for 16 bytes).
// Constant loads (ld.const, kernel parameters = constant bank 0 of the launch at a device
// address in models/gpu/device_regions.h): the warp's distinct addresses are looked up in the
// per-SM constant cache one per cycle (set-associative, LRU); misses go to L2 through `mem`
// (ConstantLoad, MSHRs shared with L1) and fill the cache; the registers are ready at the
// last lookup + const_cache.hit_latency or when the last fill returns.
// Local accesses (spills, local arrays, call frames): each lane's offset in its thread's
// window becomes a device address in the local region (device_regions.h: per SM and warp slot,
// word i of lane l at + 128 i + 4 l, so a warp's same offset is one line) and goes through the
// LSU like a global access: cached in L1; stores write through to L2 and allocate their
// sectors in L1 (GPGPU-Sim's Volta L1 is write-through with write-allocate, too).
// Global accesses: the coalescer groups the active lanes' bytes by 128 B line into sector
// masks; the LSU handles one line per cycle: L1 lookup per sector (sectored, set-associative,
// LRU, allocate on fill, write-through no-allocate for stores; ld.cg/.cv/.volatile loads skip the
// lookup and do not allocate), misses merge into or allocate
// MSHRs (none free: the LSU stalls), requests go out through the translation stage (a seam
// for TLBs/GMMU; identity by default), one per cycle. A load's registers become ready when
// its last sector arrives (or l1_hit_latency after its lookup when all sectors hit).
//
// Idle skipping (gpu.sm.idle_skip): an SM with no resident warps waits on an event; when no
// warp can issue before a known cycle (or only a memory response can change that), the SM
// waits until then and accounts the skipped cycles exactly as if it had ticked them.
//
// Two phases per ticked cycle (issue 6): step_parallel() touches only this SM's state (global
// stores, instruction counts and faults go to a per-kernel ptx::StepStage, loads read memory
// as of the cycle's start; it stops before an instruction with shared side effects, see
// InstructionInfo::serial); step_serial() commits the stage, issues what is left of the cycle
// unstaged, and makes the TLM calls and CTA callbacks. Alone, an SM runs both phases in its
// own SC_THREAD; in a GpuCore an SmStepper drives every SM (sm_stepper.h), the parallel
// phases on a thread pool, the serial phases in SM-index order. Responses, END_REQ and CTA
// launches take effect on the edge after they arrive (a response: after now + its annotated
// delay), in both modes.
//
// Statistics (group "gpu.sm[i]"): cycles (cycles with resident warps), active_cycles (an
// instruction issued), warp_instructions, thread_instructions, ipc, stall_{scoreboard,memory,
// barrier,fu_busy,idle,fetch} (per sub-core cycle without issue, by the reason of the warp first
// in scheduler order), resident_warp_cycles, achieved_occupancy, l1_sector_hits,
// l1_sector_misses, l1_sector_hit_rate, mshr_merges, shared_accesses, shared_phases,
// shared_bank_conflicts (extra cycles over the phases), line_requests, sector_requests,
// store_requests, atomic_requests (data requests; line/sector counts include local memory),
// local_accesses, local_load_sectors, local_store_sectors, const_accesses, const_hits,
// const_misses, const_hit_rate, const_requests (constant fills sent), icache_hits,
// icache_misses, icache_requests (instruction fills sent), l1_reconfigurations (carve-out
// changes), ctas_completed.
//
// Instruction fetch: each warp looks up the instruction cache line of its next instruction
// when it enters the line (16 B per instruction, the kernel's code at a device address); a
// miss requests the line from L2 (InstructionFetch) and the warp stalls (stall_fetch) until
// the fill arrives.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/sm/sm_params.h"
#include "models/tlm/clock_domain.h"
#include "models/tlm/gpu_extension.h"
#include "models/tlm/payload_pool.h"
#include "models/tlm/trace_observer.h"
#include "platform/parallel/rank_exchange.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

class SmStepper;

// The translation stage on the SM's memory path (virtual -> physical line address). The
// unified-memory issue puts the L1 TLB and the GMMU behind this interface.
class AddressTranslation {
 public:
  virtual ~AddressTranslation() = default;
  // Physical address of `virtual_address`; `extra_cycles` = cycles the lookup adds.
  virtual uint64_t translate(uint64_t virtual_address, AccessKind kind, uint32_t& extra_cycles) = 0;
};

class IdentityTranslation final : public AddressTranslation {
 public:
  uint64_t translate(uint64_t virtual_address, AccessKind, uint32_t& extra_cycles) override {
    extra_cycles = 0;
    return virtual_address;
  }
};

class Sm : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Sm> mem;

  // (sm index, kernel run, kernel id, linear CTA index)
  using CtaDone = std::function<void(uint32_t, ptx::KernelRun&, uint64_t, uint64_t)>;

  // translation: nullptr = identity. `clock` and `stats` must outlive the module.
  Sm(sc_core::sc_module_name name, const SmParams& params, uint32_t sm_index, const ClockDomain& clock,
     stats::Registry& stats, AddressTranslation* translation = nullptr);
  ~Sm() override;
  Sm(const Sm&) = delete;
  Sm& operator=(const Sm&) = delete;

  void on_cta_done(CtaDone callback) { cta_done_ = std::move(callback); }
  // Free warp slots now (the scheduler also checks its own occupancy table; windowed, launches
  // the SM has not set up yet are not counted).
  uint32_t free_warp_slots() const;
  // Makes CTA `linear` of `run` resident; throws std::logic_error without enough warp slots.
  // Windowed, the SM's own thread does so at the start of the window holding the CTA's first
  // cycle (the launch waits in its inbox, as a response does).
  void launch_cta(ptx::KernelRun& run, uint64_t kernel_id, uint64_t linear);
  uint32_t resident_ctas() const;
  // Sets the SM's shared-memory capacity (a kernel's carve-out of the unified L1/shared); the L1
  // data cache takes the rest (SmParams::l1_capacity) and starts empty when its size changes.
  // Call with no resident CTA. Windowed, it takes effect with the SM's next launch (as the
  // launch does: at the start of the window holding the CTA's first cycle).
  void configure_shared(uint64_t shared_bytes);
  uint32_t index() const { return index_; }
  // Core-clock edge at which this SM last did (or accounted) work.
  uint64_t last_cycle() const { return cycle_; }

  // Elastic trace capture (call before the simulation starts): when `observer` wants L1 lookups,
  // every L1 load lookup that sends no request of its own is told to it (TraceObserver::l1_lookup).
  void set_trace_observer(TraceObserver* observer);

  // Stepper interface (SmStepper; call before the simulation starts): from then on the SM's
  // own process does nothing and launches/responses call stepper->wake(index, cycle).
  void set_stepper(SmStepper* stepper) { stepper_ = stepper; }
  // Phase 1 of cycle `c`: touches only this SM's state (safe on any host thread).
  void step_parallel(uint64_t c);
  // Phase 2 of cycle `c` (the SystemC process): returns the next cycle at which the SM can act
  // without an outside event (c + 1 when busy; ~0 when only a response or launch can wake it).
  uint64_t step_serial(uint64_t c);
  // Accounts `n` skipped cycles identical to the last ticked one.
  void account_skipped(uint64_t n);
  // No resident warps and no memory traffic in flight.
  bool idle() const;
  // A resident CTA's kernel has a memory observer: its steps must stay on the SystemC thread.
  bool observed() const;

  // Windowed stepping (SmStepper with sim.window > 1, platform/parallel/README.md). Windowed,
  // step_serial() sends nothing and calls back nothing: requests and completed CTAs are kept,
  // stamped with their cycle, until deliver_deferred(); a barrier deadlock is reported by
  // finish_window(). With defer_commit, stages are committed only by commit_stages().
  void set_windowed(bool on);
  void set_defer_commit(bool on);
  bool suspended() const;  // the last step_parallel() stopped before a serial-only instruction
  void commit_stages();
  void finish_window();
  // The earliest cycle stamp of what deliver_deferred() can hand out now (~0: none, or only
  // requests waiting behind one not yet accepted).
  uint64_t next_deferred() const;
  bool deferred_pending() const;
  // In SystemC time: sends the requests stamped <= cycle (one BEGIN_REQ outstanding at a time)
  // and retires the CTAs completed <= cycle (CtaDone callbacks), in stamp order.
  void deliver_deferred(uint64_t cycle);
  // At a boundary (no window running): the last window's requests and completed CTAs join the
  // delivery queue; the responses that arrived since the last boundary are taken over (returns
  // the earliest cycle one takes effect at, ~0: none), to be applied by the SM's next window
  // (apply_arrivals, on its thread), each at the cycle SmStepper::arrival_cycle gave it. A
  // launch is taken over the same way (returned cycle: its first) and set up by the window that
  // holds its first cycle (launches before `end`); next_launch_cycle() is the first of the rest.
  void hand_over();
  uint64_t take_inbox();
  void apply_arrivals(uint64_t end);
  uint64_t next_launch_cycle() const;
  // Elastic trace capture is on (its notes are told from the SM's own lists).
  bool captures() const;

  // SM partitions in several ranks (platform/parallel/rank_exchange.h; windowed only): every
  // rank keeps every SM, the one that owns it steps it. kRemote: another rank steps this SM;
  // here launches only record the CTA's run and slot, responses are released at the boundary,
  // and import_window() puts the owner's window into the delivery queue, so the memory side and
  // the CTA scheduler (replicated) see what they see in one process.
  enum class Partition : uint8_t { kLocal, kOwned, kRemote };
  void set_partition(Partition partition);
  // Owner, at a boundary before commit_stages(): the window's staged stores, counts and faults.
  void export_stages(parallel::Message& out) const;
  // Remote, in SM order where the owner commits: commits them here.
  void import_stages(parallel::Message& in);
  // Owner, at a boundary after finish_window(), before hand_over(): kernel runs failed by a
  // deadlock report, the window's requests (payload fields and GpuExtension) and completed
  // CTAs, and the SM's last cycle. Remote: into this SM's delivery queue.
  void export_window(parallel::Message& out);
  void import_window(parallel::Message& in);
  // Owner, around the unstaged finish of a window that stopped before a serial-only instruction
  // (at a boundary, in SM order): what the SM does outside itself (global stores and atomics with
  // the bytes written, instruction counts, faults, printf lines) is recorded as it happens;
  // export_log() ends the record and writes it. Remote: import_log() commits it, and returns
  // whether a device-runtime call (malloc, free, a child launch) ran, which changes the command
  // processor's state on the owner alone.
  void begin_log();
  void export_log(parallel::Message& out);
  bool import_log(parallel::Message& in);
  // The SM's statistics group (owner), to replace the stale copy of another rank.
  void export_statistics(parallel::Message& out) const;
  void import_statistics(parallel::Message& in);

 private:
  struct Impl;
  void thread();
  void notify_wake(const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME);  // acts the edge after now + delay
  void arrive(tlm::tlm_generic_payload& gp, uint64_t cycle);  // windowed: a response into the inbox
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  uint32_t index_;
  uint64_t cycle_ = 0;
  sc_core::sc_event wake_;  // CTA launched, memory response, END_REQ
  CtaDone cta_done_;
  SmStepper* stepper_ = nullptr;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuvp::gpu
