// Knobs of the GPU front end: the command processor and its DMA (copy) engine.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::gpu {

// Which model runs kernels: the timing top level (models/gpu/gpu_timing: SMs, crossbar, L2,
// HBM; values still from the functional model) or the functional executor alone (fast, with an
// estimated time of one warp instruction per sub-core per cycle).
enum class KernelModel : uint8_t { kTiming, kFunctional };

struct CommandProcessorParams {
  uint64_t dma_transfer_bytes = 0;
  uint64_t instruction_limit = 0;
  KernelModel kernel_model = KernelModel::kTiming;
  uint64_t device_malloc_cycles = 0;
  uint64_t device_launch_latency_ps = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&CommandProcessorParams::dma_transfer_bytes, "gpu.dma.max_transfer", Dimension::Size, "1 MiB",
               "256 B", "64 MiB", "largest single PCIe transaction of the copy engine; copies are split into these");
    k.integer(&CommandProcessorParams::instruction_limit, "sim.instruction_limit", 0, 0,
              (1LL << 53),
              "warp instructions one launch may execute on the functional model before it is stopped as "
              "runaway (0: no limit)");
    k.choice(&CommandProcessorParams::kernel_model, "sim.kernel_model", "timing",
             {{"timing", KernelModel::kTiming}, {"functional", KernelModel::kFunctional}},
             "timing: kernels run on the cycle-level timing model (SMs, crossbar, L2, HBM), values from the "
             "functional model; functional: the PTX executor alone, time estimated");
    // The device runtime (models/gpu/ptx/device_runtime.h): fixed costs, no contention modelled
    // (approximations; gpu.device_runtime's statistics say so).
    k.quantity(&CommandProcessorParams::device_malloc_cycles, "gpu.device_malloc.latency", Dimension::Cycles,
               "2000 cycles", "0 cycles", "10000000 cycles",
               "core cycles a warp is held by an in-kernel malloc/free/new/delete; fixed, no contention: ScatterAlloc "
               "(Steinberger et al., InPar 2012, Fig. 3) measured the CUDA allocator at ~10^3..10^4 cycles per call "
               "with few threads, far more under contention");
    k.quantity(&CommandProcessorParams::device_launch_latency_ps, "gpu.device_launch.latency", Dimension::Time,
               "5 us", "0 ps", "1 ms",
               "dynamic parallelism: a child grid's launch -> its first CTA may be dispatched (replaces gpu.launch.latency "
               "for child grids); order of the device-launch overheads Wang & Yalamanchili (IISWC 2014) measured on "
               "Kepler (a few us); an approximation, no V100 figure is published");
  }
};

}  // namespace gpuvp::gpu
