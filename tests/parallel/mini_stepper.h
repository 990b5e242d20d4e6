// The SmStepper's protocol on the PTX functional model alone (no SystemC), for the staging
// tests and the ThreadSanitizer run: "SMs" own CTAs; each round, in a parallel phase on a
// ThreadPool, every SM steps each of its CTAs' ready warps whose next instruction is not
// serial-only, staging into its own ptx::StepStage; then, in SM order, each SM commits its
// stage and steps its serial-only instructions directly. Results must equal Executor::launch
// for a race-free kernel, for any thread count and distribution.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gpu/ptx/kernel_run.h"
#include "platform/parallel/thread_pool.h"

namespace gpuvp::test {

struct MiniSm {
  std::vector<uint32_t> slots;  // KernelRun CTA slots
  ptx::StepStage stage;
  std::vector<std::pair<uint32_t, uint32_t>> serial;  // (slot, warp) due in the serial phase
  uint64_t steps = 0;
};

// The parallel phase of one SM: each ready warp of its CTAs steps once, staged, unless its next
// instruction is serial-only (kept in sm.serial for the serial phase).
inline void step_staged(ptx::KernelRun& run, MiniSm& sm) {
  sm.serial.clear();
  for (const uint32_t slot : sm.slots) {
    for (uint32_t w = 0; w < run.warps_per_cta(); ++w) {
      if (!run.warp_ready(slot, w)) continue;
      if (run.next(slot, w).serial) {
        sm.serial.emplace_back(slot, w);
        continue;
      }
      ptx::StepResult result;
      run.step(slot, w, &result, &sm.stage);
      ++sm.steps;
    }
  }
}

// The serial phase of one SM: its stage commits, its serial-only warps step directly. Returns
// whether anything moved.
inline bool finish_serial(ptx::KernelRun& run, MiniSm& sm) {
  bool progress = false;
  if (!sm.stage.empty()) {
    run.commit(sm.stage);
    progress = true;
  }
  for (const auto& [slot, w] : sm.serial) {
    if (!run.warp_ready(slot, w)) continue;
    ptx::StepResult result;
    run.step(slot, w, &result);
    progress = true;
  }
  return progress;
}

// Runs every CTA of `run` on `sm_count` SMs (CTA i on SM i % sm_count). Returns false on a fault.
inline bool run_mini_stepper(ptx::KernelRun& run, uint32_t sm_count, uint32_t threads, parallel::Distribution distribution) {
  std::vector<MiniSm> sms(sm_count);
  for (uint64_t cta = 0; cta < run.cta_count(); ++cta) sms[cta % sm_count].slots.push_back(run.start_cta(cta));
  parallel::ThreadPool pool(threads);
  bool progress = true;
  while (progress && run.ok()) {
    pool.run(sms.size(), distribution, [&](size_t i) { step_staged(run, sms[i]); });
    progress = false;
    for (MiniSm& sm : sms) progress = finish_serial(run, sm) || progress;
  }
  return run.ok();
}

}  // namespace gpuvp::test
