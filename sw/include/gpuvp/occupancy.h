// How many CTAs of a kernel an SM holds at once: the one rule by which the device's CTA scheduler
// sizes its launch table and refuses cooperative grids that cannot be co-resident, and by which
// libcudart answers cudaOccupancy* and checks cudaLaunchCooperativeKernel before submitting.
// Header-only, no dependencies: both sides of the device interface include it.
#pragma once

#include <cstdint>

namespace gpuvp::device {

// Registers are allocated per warp in units of this many (Volta/Pascal: 256).
inline constexpr uint32_t kRegisterAllocationUnit = 256;

enum class OccupancyLimit : uint8_t { kCtas, kThreads, kWarps, kRegisters, kSharedMemory };

struct Occupancy {
  uint32_t ctas_per_sm = 0;  // 0: the CTA does not fit on an SM at all
  OccupancyLimit limit = OccupancyLimit::kCtas;
};

// An SM's limits.
struct SmCapacity {
  uint32_t max_ctas = 0;
  uint32_t max_threads = 0;        // a multiple of 32; max_threads / 32 warps
  uint64_t registers = 0;          // 32-bit registers
  uint64_t shared_bytes = 0;       // shared memory the kernel's carve-out gives it
};

// What one CTA occupies.
struct CtaDemand {
  uint32_t threads = 0;
  uint32_t registers_per_thread = 0;
  uint64_t shared_bytes = 0;  // static + dynamic
};

inline uint32_t warps_of(const CtaDemand& cta) { return (cta.threads + 31) / 32; }
// Registers one warp of the CTA holds, rounded up to the allocation unit.
inline uint32_t warp_registers(const CtaDemand& cta) {
  const uint32_t per_warp = cta.registers_per_thread * 32;
  return (per_warp + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
}

// The CTAs per SM each limit allows, the smallest winning (the first named on a tie).
inline Occupancy occupancy(const SmCapacity& sm, const CtaDemand& cta) {
  Occupancy best{sm.max_ctas, OccupancyLimit::kCtas};
  auto limit = [&](uint64_t n, OccupancyLimit why) {
    if (n < best.ctas_per_sm) best = Occupancy{static_cast<uint32_t>(n), why};
  };
  const uint32_t warps = warps_of(cta);
  limit(cta.threads ? sm.max_threads / cta.threads : sm.max_ctas, OccupancyLimit::kThreads);
  limit(warps ? (sm.max_threads / 32) / warps : sm.max_ctas, OccupancyLimit::kWarps);
  const uint64_t regs = uint64_t{warp_registers(cta)} * warps;
  if (regs) limit(sm.registers / regs, OccupancyLimit::kRegisters);
  if (cta.shared_bytes) limit(sm.shared_bytes / cta.shared_bytes, OccupancyLimit::kSharedMemory);
  return best;
}

}  // namespace gpuvp::device
