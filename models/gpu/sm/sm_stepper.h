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
//
// No sockets: the SMs keep theirs (GpuCore binds them to the clusters).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "models/gpu/sm/sm.h"
#include "platform/parallel/thread_pool.h"

namespace gpuvp::gpu {

class SmStepper : public sc_core::sc_module {
 public:
  // sms[i]->index() must be i. Takes over their stepping (Sm::set_stepper).
  SmStepper(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock, std::vector<Sm*> sms);
  ~SmStepper() override;
  SmStepper(const SmStepper&) = delete;
  SmStepper& operator=(const SmStepper&) = delete;

  // SM `sm` can act at core cycle `cycle` (a launch, a response, END_REQ).
  void wake(uint32_t sm, uint64_t cycle);
  uint32_t threads() const { return pool_.threads(); }
  // Cycles in which the parallel phase ran on the pool (for tests and the benchmark).
  uint64_t parallel_phases() const { return pool_.parallel_phases(); }

 private:
  void thread();
  void step_cycle(uint64_t c);

  const SmParams& params_;
  const ClockDomain& clock_;
  std::vector<Sm*> sms_;
  std::vector<uint64_t> next_;  // per SM: next cycle it is due (kNever: waits for a wake)
  uint64_t earliest_ = ~uint64_t{0};  // the minimum of next_
  std::vector<bool> fresh_;     // per SM: went idle; no skipped cycles to account on waking
  std::vector<uint32_t> due_;   // SMs of the cycle being stepped, in index order
  parallel::ThreadPool pool_;
  bool in_cycle_ = false;       // stepping: wakes need no event
  sc_core::sc_event wake_;
};

}  // namespace gpuvp::gpu
