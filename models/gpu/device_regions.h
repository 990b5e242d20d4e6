// Device address regions the GPU reserves for itself: local memory (per-thread stacks, spills,
// local arrays), constant bank 0 (kernel parameters per launch) and the code of loaded kernels.
// They lie below DeviceMemory::kHeapBase, where the device's allocator never hands out
// addresses, so they cannot collide with user allocations. The timing model sends real
// requests to these addresses (L1, crossbar, L2, HBM); the functional model keeps the values
// in its own buffers, so the regions are never mapped in DeviceMemory.
#pragma once

#include <cstdint>
#include <string_view>

#include "models/gpu/ptx/memory.h"

namespace gpuvp::gpu::regions {

// Instructions: 16 bytes per decoded PTX instruction (the size of a Volta SASS instruction),
// each kernel's call tree in a 64 KiB slot chosen by a hash of its name (two kernels may share
// a slot, and code beyond 64 KiB runs into the next slot: aliasing that only shares cache lines).
inline constexpr uint64_t kCodeBase = 0x0000'0001'0000'0000ULL;
inline constexpr uint64_t kCodeBytes = 0x0000'0000'1000'0000ULL;  // 256 MiB
inline constexpr uint64_t kKernelCodeBytes = 64 * 1024;
inline constexpr uint32_t kInstructionBytes = 16;

// Start of kernel `name`'s code slot, as an offset in the code region: FNV-1a of the name, so
// every launch of a kernel fetches the same addresses.
inline uint64_t kernel_code_offset(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char ch : name) hash = (hash ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return hash % (kCodeBytes / kKernelCodeBytes) * kKernelCodeBytes;
}

// Constant bank 0: one 4 KiB slot per launch (kernel parameters are at most 4 KiB), slots
// reused round-robin by kernel id.
inline constexpr uint64_t kConstBank0Base = kCodeBase + kCodeBytes;
inline constexpr uint64_t kConstBank0SlotBytes = 4096;
inline constexpr uint64_t kConstBank0Slots = 4096;

// Constant bank 0 of launch `kernel_id`.
inline uint64_t const_bank0_slot(uint64_t kernel_id) {
  return kConstBank0Base + (kernel_id % kConstBank0Slots) * kConstBank0SlotBytes;
}

// Local memory: each resident warp slot of each SM owns 32 threads x `local_bytes_per_thread`
// bytes, interleaved so that consecutive 4-byte words of a thread's window are 128 bytes apart
// and the 32 lanes' same word is one 128-byte line ("local memory is organized such that
// consecutive 32-bit words are accessed by consecutive thread IDs", NVIDIA Nsight's local
// memory statistics documentation): a warp reading the same local offset coalesces fully.
inline constexpr uint64_t kLocalBase = 0x0000'0002'0000'0000ULL;
inline constexpr uint64_t kLocalEnd = ptx::DeviceMemory::kHeapBase;
static_assert(kConstBank0Base + kConstBank0Slots * kConstBank0SlotBytes <= kLocalBase, "regions overlap");
static_assert(kLocalBase < kLocalEnd, "the local region must lie below the heap");

// Bytes of local window per thread in the region for `threads` resident threads on the GPU:
// the functional model's limit (64 KiB) or, for very large GPUs, the largest power of two that
// fits (offsets beyond it then wrap within the thread's window: an approximation stated in the
// SM README).
inline uint64_t local_bytes_per_thread(uint64_t threads) {
  uint64_t bytes = 64 * 1024;
  while (bytes > 16 && threads * bytes > kLocalEnd - kLocalBase) bytes /= 2;
  return bytes;
}

}  // namespace gpuvp::gpu::regions
