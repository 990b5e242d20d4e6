// The device heap behind in-kernel malloc/free/new/delete: a fixed range of device memory
// (cudaLimitMallocHeapSize, 8 MiB by default), carved first-fit in 16-byte granules. Blocks are
// kept outside the heap's memory (no in-band headers), so a kernel writing past its block cannot
// corrupt the allocator; deterministic: the same sequence of calls gives the same addresses.
#pragma once

#include <cstdint>
#include <map>

namespace gpuvp::ptx {

class DeviceHeap {
 public:
  static constexpr uint64_t kGranule = 16;  // CUDA's malloc returns 16-byte aligned blocks

  DeviceHeap() = default;
  DeviceHeap(uint64_t base, uint64_t bytes) { reset(base, bytes); }
  // Serves [base, base + bytes) from now on; every earlier block is forgotten.
  void reset(uint64_t base, uint64_t bytes);

  bool established() const { return bytes_ != 0; }
  uint64_t base() const { return base_; }
  uint64_t bytes() const { return bytes_; }

  // The lowest free address that is `alignment`-aligned (a power of two; at least kGranule) with
  // `bytes` free after it; 0 when none (or bytes == 0, or the heap is not established).
  uint64_t allocate(uint64_t bytes, uint64_t alignment = kGranule);
  // Frees the block starting at `address`; false when no block starts there.
  bool release(uint64_t address);

  uint64_t live_blocks() const { return live_.size(); }
  uint64_t live_bytes() const { return live_bytes_; }

 private:
  uint64_t base_ = 0;
  uint64_t bytes_ = 0;
  std::map<uint64_t, uint64_t> free_;  // start -> bytes, coalesced
  std::map<uint64_t, uint64_t> live_;  // start -> bytes
  uint64_t live_bytes_ = 0;
};

}  // namespace gpuvp::ptx
