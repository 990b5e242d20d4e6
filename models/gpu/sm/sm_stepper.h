// One clocked process stepping every SM of a GpuCore (issue 6), instead of one SC_THREAD per
// SM with a timed wait per busy cycle.
//
// Per core-clock edge c at which some SM can act (exact idle skipping: an SM is stepped at
// the cycle its last tick named, or on the edge after an outside event woke it):
//   1. parallel phase: Sm::step_parallel(c) of every SM due at c, on a ThreadPool of
//      `sim.threads` host threads (`sim.sm_distribution`: static blocks or dynamic); each SM
//      touches only its own state and stages global stores, instruction counts and faults;
//   2. serial phase, in SM-index order, in this SystemC process: Sm::step_serial(c) commits
//      the SM's stage, issues what needed the serial phase (atomics, printf), sends requests
//      through its `mem` socket and retires CTAs (CTA scheduler callbacks).
// 1 thread runs the same two phases in order, so any thread count gives byte-identical
// statistics. SMs not due at c are not visited; with no SM due before a known cycle the
// process sleeps until then (or until a wake), and the pool's workers sleep between phases.
// Kernels with a memory observer (tracing) keep their steps on the SystemC thread.
// A phase whose SM work is estimated below `sim.parallel_min_work` host ns (from a phase timed on
// one thread every 64), or whose sharing would save less than the pool's phases are measured to
// cost on this host, also runs on the SystemC thread alone.
//
// Windowed (sim.window = W > 1; platform/parallel/README.md): the SMs are partitions that run
// alone for a window of W core cycles, each on some pool thread, with their global stores staged
// (an SM reads its own), requests and completed CTAs kept with their cycle stamp. Phase p: the
// SMs run window p + 1 on the pool while this SystemC process delivers what window p sent, at
// its stamps in (cycle, SM, sequence) order, advancing SystemC time (and the memory side with
// it) from pW to (p + 1)W: requests into `mem` (one BEGIN_REQ outstanding per SM), CTA
// completions to the scheduler. Then the boundary, on the SystemC thread: stages commit in SM
// order; an SM that stopped before an atomic/printf finishes the window here, in SM order,
// unstaged; responses and CTA launches that arrived in the phase go to the SMs. So anything the
// memory side or the CTA scheduler sends during phase p takes effect in window p + 2 at the
// earliest (arrival_cycle). Whatever must not happen while SMs run (a host-side change of device
// memory, statistics read at a kernel's end) first calls quiesce(), which finishes the running
// window; that changes nothing the SMs compute, which never sees the phase's effects. With
// `sim.overlap = false`, or one thread, the window runs first and the phase after it: the same
// simulation. Statistics are byte-identical for any thread count. W = 1 keeps the two phases
// per cycle above.
//
// Ranks (set_rank_exchange; gpuvp run --mpi): several processes each run the whole platform
// and step only the SMs they own; at each boundary they exchange those SMs' windows, which every
// rank commits and delivers in SM order (platform/parallel/README.md, last section).
//
// No sockets: the SMs keep theirs (GpuCore binds them to the clusters).
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <systemc>

#include "models/gpu/sm/sm.h"
#include "platform/parallel/rank_exchange.h"
#include "platform/parallel/thread_pool.h"
#include "platform/parallel/time_partition.h"

namespace gpuvp::gpu {

class SmStepper : public sc_core::sc_module {
 public:
  // sms[i]->index() must be i. Takes over their stepping (Sm::set_stepper).
  SmStepper(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock, std::vector<Sm*> sms);
  ~SmStepper() override;
  SmStepper(const SmStepper&) = delete;
  SmStepper& operator=(const SmStepper&) = delete;

  // SM `sm` can act at core cycle `cycle` (a launch, a response, END_REQ); windowed, not before
  // arrival_cycle(cycle).
  void wake(uint32_t sm, uint64_t cycle);
  // Windowed: the first cycle at which something arriving from the memory side now, for `cycle`,
  // can take effect (the SMs may be running the next window already); `cycle` otherwise.
  uint64_t arrival_cycle(uint64_t cycle) const;
  // Finishes the window the SMs may be running on other threads (no-op when none is).
  void quiesce() {
    if (window_running_) {
      ++early_joins_;
      join_window();
    }
  }
  // Windowed: SM `sm` has responses in its inbox, for the next boundary.
  void note_arrival(uint32_t sm) {
    arrived_.push_back(sm);
    if (!in_cycle_) wake_.notify(sc_core::SC_ZERO_TIME);
  }
  // Windowed, at a boundary: SM `sm` can act at `cycle`, a cycle arrival_cycle gave before.
  void schedule(uint32_t sm, uint64_t cycle);
  uint32_t threads() const { return pool_.threads(); }
  // Cycles (windows, when windowed) in which the parallel phase ran on the pool.
  uint64_t parallel_phases() const { return pool_.parallel_phases(); }
  // SM `sm`'s deferred request in flight was accepted: its deliveries waiting for it may go on.
  void deferred_ready(uint32_t sm) {
    next_send_[sm] = sms_[sm]->next_deferred();
    deferred_ready_.notify(sc_core::SC_ZERO_TIME);
  }
  // Host time spent in windows (SMs running) and at boundaries (commits, serial remainders,
  // deliveries with the memory side running), for the benchmark; not a statistic.
  double window_seconds() const { return window_seconds_; }
  double boundary_seconds() const { return boundary_seconds_; }
  uint64_t windows() const { return windows_; }
  // Windows the SystemC thread had to finish before their phase's end (quiesce).
  uint64_t windows_joined_early() const { return early_joins_; }

  // SM partitions in several ranks (platform/parallel/rank_exchange.h; call before the
  // simulation starts). Every rank simulates the whole platform and steps only the SMs it owns;
  // at each boundary the ranks exchange what their SMs' windows did (stages, requests, completed
  // CTAs, due cycles), which every rank commits and delivers in SM order, so the memory side
  // and the CTA scheduler see the same traffic everywhere. Needs the windowed model (throws
  // std::invalid_argument otherwise). One rank (or nullptr): every SM is stepped here.
  void set_rank_exchange(parallel::RankExchange* exchange);
  // A model that simulates behind SystemC time (parallel::TimePartition, e.g. the HBM controllers
  // with memory.hbm.partition): windowed with the phases beside the windows, each phase first
  // exchanges its messages and then has a pool thread simulate it up to the phase's start, beside
  // the SMs' window; between phases that follow each other it stays attached, otherwise it drives
  // itself. Its lookahead must exceed two windows. Call before the simulation starts.
  void add_partition(parallel::TimePartition* partition);
  // Collective over the ranks: every SM's statistics from the rank that steps it (the
  // registry's before-read hook calls it, at the same points on every rank).
  void gather_statistics();

 private:
  void thread();
  void step_cycle(uint64_t c);
  // Windowed: the phase in which something is due (an SM in the next window, or a delivery).
  uint64_t next_phase() const;
  void run_phase(uint64_t phase);
  void boundary(uint64_t end);
  void join_window();
  void detach_partitions();  // they drive themselves until the next phase with a window
  void advance_partition(size_t k);  // partitions_[k] up to partition_until_ (timed when profiling)
  void deliver_accepted();  // SC_METHOD on deferred_ready_
  static double cpu_seconds(clockid_t clock);
  // body(k) for every k in [0, n): on the pool, or on this thread alone when the phase
  // is estimated to be too small to pay for waking the pool (who runs an SM never changes what
  // it computes, so results are the same either way).
  void run_due(size_t n, const std::function<void(size_t)>& body);
  // Ranks: the boundary's exchange of the due SMs' windows, and their commits in SM order.
  void exchange_windows(uint64_t end);
  void put_window(uint32_t i);  // SM i's deadlock reports, requests, completed CTAs, next due cycle
  void get_window(uint32_t i, parallel::Message& in);
  void expect_sm(parallel::Message& in, uint32_t i) const;
  // SM i stopped before a serial-only instruction: the rest of its window, unstaged.
  void finish_unstaged(uint32_t i, uint64_t end);
  // One process: commits in SM order, then the SMs stopped before a serial-only instruction
  // finish the window unstaged.
  void commit_and_finish(uint64_t end);
  // SM `i` from cycle `c` to the window's end (kNever: idle or waiting); `staged`: stop at a
  // serial-only instruction (returns that cycle with suspended_[i] set).
  uint64_t run_sm(uint32_t i, uint64_t c, uint64_t end, bool staged);
  uint64_t step_sm(uint32_t i, uint64_t c, uint64_t end, bool staged);  // run_sm's cycles

  const SmParams& params_;
  const ClockDomain& clock_;
  std::vector<Sm*> sms_;
  std::vector<uint64_t> next_;  // per SM: next cycle it is due (kNever: waits for a wake)
  uint64_t earliest_ = ~uint64_t{0};  // the minimum of next_
  std::vector<uint8_t> fresh_;  // per SM: went idle; no skipped cycles to account on waking
  std::vector<uint8_t> suspended_;  // per SM: its window stopped before a serial-only instruction
  uint32_t window_ = 1;
  bool windowed_ = false;  // window_ > 1: step_window, else step_cycle
  bool window_profile_ = false;
  bool overlap_ = true;          // windowed: phases run beside the SMs' window (sim.overlap)
  bool window_running_ = false;  // the pool runs a window started by run_phase, not joined yet
  sc_core::sc_event deferred_ready_;
  double window_seconds_ = 0, boundary_seconds_ = 0, window_cpu_seconds_ = 0, partition_cpu_seconds_ = 0;
  std::vector<double> sm_cpu_seconds_;  // windowed profile: thread CPU each SM's windows took
  uint64_t windows_ = 0;
  uint64_t early_joins_ = 0;  // windows joined before their phase's end (quiesce)
  std::vector<uint32_t> due_;   // SMs of the cycle being stepped, in index order
  std::vector<uint32_t> delivering_;  // windowed: SMs with a non-empty delivery queue, in index order
  // Windowed: per SM, its next_deferred() as of the stepper's last change to its delivery queue
  // or the last release of its request in flight (flat, so the phase's scans touch no SM).
  std::vector<uint64_t> next_send_;
  std::vector<uint32_t> arrived_;     // windowed: SMs with responses in their inbox
  std::vector<std::pair<uint64_t, uint32_t>> sends_;  // a phase's (stamp, SM) heap
  std::vector<uint32_t> stepped_;  // windowed: the due SMs this rank steps, in index order
  std::function<void(size_t)> window_body_;  // runs stepped_[k] to window_end_
  std::vector<parallel::TimePartition*> partitions_;
  bool partitions_attached_ = false;
  uint64_t partition_until_ = 0;              // the pooled phase's start (ps): where they advance to
  std::function<void(size_t)> phase_body_;   // partitions_[k], then window_body_(k - partitions)
  parallel::RankExchange* exchange_ = nullptr;  // several ranks (else nullptr)
  std::vector<uint8_t> owned_;                  // per SM: stepped by this rank
  parallel::Message outgoing_;                  // this rank's part of an exchange
  std::vector<parallel::Message> incoming_;     // every rank's, by rank
  parallel::Message serial_log_;                // an SM's unstaged finish, from its owner
  uint64_t window_end_ = 0;
  parallel::ThreadPool pool_;
  uint64_t phases_run_ = 0;     // calls of run_due: every 64th runs on one thread, timed
  double sm_phase_ns_ = 0;      // host ns per due SM, from the last timed single-thread phase
  double pool_cost_ns_ = 0;     // host ns a pool phase costs beyond its share of the work (average)
  bool in_cycle_ = false;       // stepping: wakes need no event
  sc_core::sc_event wake_;
};

}  // namespace gpuvp::gpu
