// Streaming multiprocessor parameters: how many SMs, their clock, execution lanes per SM, the
// occupancy limits the CTA scheduler sizes its launch table by, and the timing of the SM
// pipeline (warp scheduler, functional-unit latencies, L1 data cache, shared memory, LSU).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/config/params.h"
#include "platform/parallel/thread_pool.h"

namespace gpuvp::gpu {

enum class WarpSchedulerPolicy : uint8_t { kGto, kLrr };

struct SmParams {
  uint32_t count = 0;
  double clock_hz = 0;
  uint32_t subcores = 0;     // processing blocks, each with its own warp scheduler
  uint32_t cluster_size = 0; // SMs sharing one crossbar port
  uint32_t fp32_lanes = 0;   // per SM
  uint32_t fp64_lanes = 0;
  uint32_t int32_lanes = 0;
  uint32_t sfu_lanes = 0;
  uint32_t max_threads = 0;  // resident threads per SM
  uint32_t max_ctas = 0;     // resident CTAs per SM
  uint32_t registers = 0;    // 32-bit registers per SM
  uint64_t shared_memory_bytes = 0;  // most shared memory a CTA set may use per SM
  // Unified L1/shared (Volta): shared capacities a kernel may choose (its carve-out), the L1
  // taking the rest of `unified_l1_shared_bytes`; 0 = separate L1 and shared memory.
  uint64_t unified_l1_shared_bytes = 0;
  std::string shared_carveouts;  // KiB, ascending, comma-separated

  // Timing of the SM pipeline (core-clock cycles).
  WarpSchedulerPolicy scheduler = WarpSchedulerPolicy::kGto;
  uint32_t ldst_lanes = 0;      // per SM; a warp's memory instruction occupies ldst 32/(lanes/subcores) cycles
  uint32_t fp32_latency = 0;    // dependent-issue latency
  uint32_t fp64_latency = 0;
  uint32_t int32_latency = 0;
  uint32_t sfu_latency = 0;
  uint32_t tensor_latency = 0;        // wmma.mma dependent-issue latency
  uint32_t tensor_fma_per_cycle = 0;  // per sub-core
  uint32_t shared_latency = 0;  // shared-memory load, no bank conflict
  uint32_t shared_banks = 0;    // 4-byte banks
  uint64_t l1_bytes = 0;
  uint32_t l1_ways = 0;
  uint32_t l1_hit_latency = 0;
  uint32_t l1_mshrs = 0;        // outstanding missed lines
  uint32_t l1_mshr_merges = 0;  // loads that may wait on one MSHR
  uint32_t lsu_queue = 0;       // memory instructions waiting for the L1; full: issue stalls
  uint64_t const_bytes = 0;     // constant cache (kernel parameters = constant bank 0, .const); 0: perfect
  uint32_t const_line = 0;
  uint32_t const_ways = 0;
  uint32_t const_hit_latency = 0;
  uint64_t icache_bytes = 0;    // instruction cache (0: perfect, no fetch stalls)
  uint32_t icache_line = 0;
  uint32_t icache_ways = 0;
  uint32_t icache_prefetch = 0;  // lines requested ahead of the one a warp enters
  bool idle_skip = true;        // jump over cycles in which nothing can happen
  // Host threads stepping the SMs of a GpuCore (issue 6; results never depend on it).
  uint32_t threads = 1;
  parallel::Distribution distribution = parallel::Distribution::kStatic;
  uint32_t window = 1;  // core cycles an SM runs between synchronizations (1: every cycle)
  bool window_profile = false;  // print host time in windows vs at boundaries (stderr, at exit)
  bool overlap = true;  // windowed: the memory side simulates a window while the SMs run the next
  uint32_t parallel_min_work = 40000;  // host ns of SM work a phase needs to be shared (0: always)

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.integer(&SmParams::count, "gpu.sm.count", 84, 1, 1024, "streaming multiprocessors on the GPU");
    k.quantity(&SmParams::clock_hz, "gpu.sm.clock", Dimension::Frequency, "1312 MHz", "1 MHz", "10 GHz",
               "SM core clock");
    k.integer(&SmParams::subcores, "gpu.sm.subcores", 4, 1, 16,
              "processing blocks per SM, each with a warp scheduler and a quarter of the lanes");
    k.integer(&SmParams::cluster_size, "gpu.sm.cluster_size", 2, 1, 64, "SMs per cluster (sharing one crossbar port)");
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
    k.quantity(&SmParams::unified_l1_shared_bytes, "gpu.sm.unified_l1_shared", Dimension::Size, "128 KiB", "0 B",
               "16 MiB", "L1 data cache + shared memory capacity split per kernel (0 B: separate, the L1 is l1.size)");
    k.text(&SmParams::shared_carveouts, "gpu.sm.shared_carveouts", "0,8,16,32,64,96",
           "shared-memory capacities (KiB) of the unified L1/shared a kernel's carve-out chooses from "
           "(CUDA C programming guide, compute capability 7.x: 0, 8, 16, 32, 64 or 96 KB)");
    k.choice(&SmParams::scheduler, "gpu.sm.scheduler", "gto",
             {{"gto", WarpSchedulerPolicy::kGto}, {"lrr", WarpSchedulerPolicy::kLrr}},
             "warp scheduler per sub-core: greedy-then-oldest or loose round-robin");
    k.integer(&SmParams::ldst_lanes, "gpu.sm.ldst_lanes", 32, 1, 1024, "load/store units per SM");
    k.integer(&SmParams::fp32_latency, "gpu.sm.fp32_latency", 4, 1, 1000, "FP32 dependent-issue latency (cycles)");
    k.integer(&SmParams::fp64_latency, "gpu.sm.fp64_latency", 8, 1, 1000, "FP64 dependent-issue latency (cycles)");
    k.integer(&SmParams::int32_latency, "gpu.sm.int32_latency", 4, 1, 1000, "INT32 dependent-issue latency (cycles)");
    k.integer(&SmParams::sfu_latency, "gpu.sm.sfu_latency", 14, 1, 1000, "SFU dependent-issue latency (cycles)");
    k.integer(&SmParams::tensor_latency, "gpu.sm.tensor_latency", 64, 1, 10000,
              "wmma.mma dependent-issue latency (cycles; GPGPU-Sim/Accel-Sim QV100 PTX mode: ptx_opcode_latency_tesnor 64)");
    k.integer(&SmParams::tensor_fma_per_cycle, "gpu.sm.tensor_fma_per_cycle", 128, 1, 65536,
              "tensor-core multiply-adds per cycle per sub-core: a wmma.mma of M x N x K occupies its sub-core's tensor "
              "units M*N*K / this many cycles (Tesla V100 whitepaper: 2 tensor cores per sub-core x 64 FMA per clock)");
    k.integer(&SmParams::shared_latency, "gpu.sm.shared_latency", 19, 1, 1000,
              "shared-memory load latency without bank conflicts (cycles)");
    k.integer(&SmParams::shared_banks, "gpu.sm.shared_banks", 32, 1, 64, "shared-memory banks (4 bytes wide)");
    k.quantity(&SmParams::l1_bytes, "gpu.sm.l1.size", Dimension::Size, "32 KiB", "1 KiB", "16 MiB",
               "L1 data cache capacity (128 B lines, 32 B sectors)");
    k.integer(&SmParams::l1_ways, "gpu.sm.l1.ways", 4, 1, 64, "L1 data cache associativity");
    k.integer(&SmParams::l1_hit_latency, "gpu.sm.l1.hit_latency", 28, 1, 1000, "L1 hit latency (cycles)");
    k.integer(&SmParams::l1_mshrs, "gpu.sm.l1.mshrs", 64, 1, 4096, "L1 miss-status holding registers (lines)");
    k.integer(&SmParams::l1_mshr_merges, "gpu.sm.l1.mshr_merges", 8, 1, 64, "loads merged into one MSHR");
    k.integer(&SmParams::lsu_queue, "gpu.sm.lsu_queue", 8, 1, 1024,
              "memory instructions queued at the L1; when full, memory instructions stall at issue");
    // Volta's constant cache (the "L1.5" shared with instructions) as GPGPU-Sim's QV100
    // configuration sizes it (gpgpu_const_cache:l1 N:128:64:8: 128 sets x 64 B x 8 ways).
    k.quantity(&SmParams::const_bytes, "gpu.sm.const_cache.size", Dimension::Size, "0 B", "0 B", "16 MiB",
               "per-SM constant cache for ld.const and kernel parameters (GPGPU-Sim QV100: 64 KiB); 0 B: perfect "
               "(the default: with it on, a unified-memory program hangs on a stray END_REQ, see models/gpu/sm/README.md)");
    k.integer(&SmParams::const_line, "gpu.sm.const_cache.line", 64, 32, 128,
              "constant cache line in bytes, a power of two (GPGPU-Sim QV100: 64); misses fetch it from L2");
    k.integer(&SmParams::const_ways, "gpu.sm.const_cache.ways", 8, 1, 64, "constant cache associativity (GPGPU-Sim QV100: 8)");
    k.integer(&SmParams::const_hit_latency, "gpu.sm.const_cache.latency", 28, 1, 1000,
              "constant cache hit latency (cycles); no V100 figure found: the L1 hit latency (RTX 3070: 14, mushihao/cuda)");
    // Volta's L1 instruction cache as GPGPU-Sim's QV100 configuration sizes it
    // (gpgpu_cache:il1 N:64:128:16: 64 sets x 128 B x 16 ways).
    k.quantity(&SmParams::icache_bytes, "gpu.sm.icache.size", Dimension::Size, "0 B", "0 B", "16 MiB",
               "per-SM instruction cache (GPGPU-Sim QV100: 128 KiB); 0 B: perfect, no fetch stalls");
    k.integer(&SmParams::icache_line, "gpu.sm.icache.line", 128, 32, 128,
              "instruction cache line in bytes, a power of two (GPGPU-Sim QV100: 128 = 8 instructions)");
    k.integer(&SmParams::icache_ways, "gpu.sm.icache.ways", 16, 1, 64, "instruction cache associativity (GPGPU-Sim QV100: 16)");
    k.integer(&SmParams::icache_prefetch, "gpu.sm.icache.prefetch", 8, 0, 16,
              "lines the instruction fetch keeps requested ahead of the line a warp enters (gpuvp's own choice: 8)");
    k.flag(&SmParams::idle_skip, "gpu.sm.idle_skip", true,
           "skip cycles in which no warp can issue (never changes a reported number)");
    k.integer(&SmParams::threads, "sim.threads", 1, 1, 256,
              "host threads stepping the SMs in parallel each core cycle (never changes a reported number)");
    k.choice(&SmParams::distribution, "sim.sm_distribution", "static",
             {{"static", parallel::Distribution::kStatic}, {"dynamic", parallel::Distribution::kDynamic}},
             "how busy SMs are shared among the stepping threads: contiguous blocks or taken one by one");
    k.integer(&SmParams::window, "sim.window", 1, 1, 4096,
              "core cycles each SM runs alone between synchronizations (1: cycle by cycle; more: responses, "
              "launches and other SMs' stores take effect at window boundaries); at most the lookahead, "
              "memory.l2.hit_latency in core cycles");
    k.flag(&SmParams::window_profile, "sim.window_profile", false,
           "at exit, print to stderr the host seconds spent with SMs running windows and at window boundaries "
           "(host timing for the parallel benchmark, not a statistic)");
    k.flag(&SmParams::overlap, "sim.overlap", true,
           "windowed: the memory side simulates what one window sent while the SMs run the next window on "
           "other host threads (false: one after the other; never changes a reported number)");
    k.integer(&SmParams::parallel_min_work, "sim.parallel_min_work", 40000, 0, 100000000,
              "host nanoseconds of SM work a window (or cycle) must have for the stepping threads to share it; "
              "smaller ones run on one thread, saving the pool's wake-up (0: always share; estimated from a "
              "timed single-thread phase every 64; never changes a reported number)");
  }

  // The windowed stepping's lookahead: an L2 hit of `l2_hit_cycles` at `l2_clock_hz`, in whole
  // core cycles (at least 1).
  uint64_t lookahead_cycles(uint64_t l2_hit_cycles, double l2_clock_hz) const {
    const double core = l2_clock_hz > 0 ? static_cast<double>(l2_hit_cycles) * clock_hz / l2_clock_hz : 1.0;
    return std::max<uint64_t>(1, static_cast<uint64_t>(core));
  }
  // Peak rates count a fused multiply-add as two floating-point operations.
  double peak_fp32_flops() const { return 2.0 * count * fp32_lanes * clock_hz; }
  double peak_fp64_flops() const { return 2.0 * count * fp64_lanes * clock_hz; }
  uint64_t max_resident_threads() const { return uint64_t{count} * max_threads; }
  // gpu.sm.shared_carveouts in bytes; empty when the text is not a list of whole KiB numbers.
  std::vector<uint64_t> carveout_bytes() const {
    std::vector<uint64_t> out;
    uint64_t value = 0;
    bool digits = false;
    for (size_t i = 0; i <= shared_carveouts.size(); ++i) {
      const char ch = i < shared_carveouts.size() ? shared_carveouts[i] : ',';
      if (ch >= '0' && ch <= '9') {
        value = value * 10 + static_cast<uint64_t>(ch - '0');
        digits = true;
      } else if (ch == ',' && digits) {
        out.push_back(value * 1024);
        value = 0;
        digits = false;
      } else if (ch != ' ') {
        return {};
      }
    }
    return out;
  }
  // The shared-memory capacity a kernel gets: with no preference (percent < 0) or no unified
  // L1/shared, shared_memory_bytes; else the smallest carve-out of at least percent % of
  // shared_memory_bytes and of one CTA's `cta_shared` bytes (the preference is a hint: "the
  // driver can choose a different ratio if required to execute the function", CUDA runtime API).
  uint64_t shared_capacity(int32_t percent, uint64_t cta_shared) const {
    if (percent < 0 || unified_l1_shared_bytes == 0) return shared_memory_bytes;
    const uint64_t wanted = std::max<uint64_t>((shared_memory_bytes * static_cast<uint64_t>(percent) + 99) / 100, cta_shared);
    for (const uint64_t bytes : carveout_bytes()) {
      if (bytes >= wanted && bytes <= shared_memory_bytes) return bytes;
    }
    return shared_memory_bytes;
  }
  // L1 data capacity beside a shared-memory capacity.
  uint64_t l1_capacity(uint64_t shared_capacity_bytes) const {
    if (unified_l1_shared_bytes == 0 || shared_capacity_bytes >= unified_l1_shared_bytes) return l1_bytes;
    return unified_l1_shared_bytes - shared_capacity_bytes;
  }
};

}  // namespace gpuvp::gpu
