// Streaming multiprocessor parameters: how many SMs, their clock, execution lanes per SM and the
// occupancy limits the CTA scheduler sizes its launch table by.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::gpu {

struct SmParams {
  uint32_t count = 0;
  double clock_hz = 0;
  uint32_t subcores = 0;     // processing blocks, each with its own warp scheduler
  uint32_t fp32_lanes = 0;   // per SM
  uint32_t fp64_lanes = 0;
  uint32_t int32_lanes = 0;
  uint32_t sfu_lanes = 0;
  uint32_t max_threads = 0;  // resident threads per SM
  uint32_t max_ctas = 0;     // resident CTAs per SM
  uint32_t registers = 0;    // 32-bit registers per SM
  uint64_t shared_memory_bytes = 0;  // most shared memory a CTA set may use per SM

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.integer(&SmParams::count, "gpu.sm.count", 84, 1, 1024, "streaming multiprocessors on the GPU");
    k.quantity(&SmParams::clock_hz, "gpu.sm.clock", Dimension::Frequency, "1312 MHz", "1 MHz", "10 GHz",
               "SM core clock");
    k.integer(&SmParams::subcores, "gpu.sm.subcores", 4, 1, 16,
              "processing blocks per SM, each with a warp scheduler and a quarter of the lanes");
    k.integer(&SmParams::fp32_lanes, "gpu.sm.fp32_lanes", 64, 1, 1024, "FP32 lanes per SM (one FMA each per cycle)");
    k.integer(&SmParams::fp64_lanes, "gpu.sm.fp64_lanes", 32, 0, 1024, "FP64 lanes per SM (one FMA each per cycle)");
    k.integer(&SmParams::int32_lanes, "gpu.sm.int32_lanes", 64, 1, 1024, "INT32 lanes per SM");
    k.integer(&SmParams::sfu_lanes, "gpu.sm.sfu_lanes", 16, 1, 1024,
              "special-function lanes per SM (sin, cos, rcp, rsqrt, lg2, ex2)");
    k.integer(&SmParams::max_threads, "gpu.sm.max_threads", 2048, 32, 65536, "resident threads per SM");
    k.integer(&SmParams::max_ctas, "gpu.sm.max_ctas", 32, 1, 1024, "resident CTAs (thread blocks) per SM");
    k.integer(&SmParams::registers, "gpu.sm.registers", 65536, 1024, 1 << 22, "32-bit registers per SM");
    k.quantity(&SmParams::shared_memory_bytes, "gpu.sm.shared_memory", Dimension::Size, "96 KiB", "0 B",
               "16 MiB", "shared memory per SM available to resident CTAs");
  }

  // Peak rates count a fused multiply-add as two floating-point operations.
  double peak_fp32_flops() const { return 2.0 * count * fp32_lanes * clock_hz; }
  double peak_fp64_flops() const { return 2.0 * count * fp64_lanes * clock_hz; }
  uint64_t max_resident_threads() const { return uint64_t{count} * max_threads; }
};

}  // namespace gpuvp::gpu
