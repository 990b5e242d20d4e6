// First-fit allocator over a channel's DMA-window slice: pinned and managed host memory,
// memcpy staging, module images, argument and printf buffers, semaphore cells. Offsets are
// relative to the slice; deterministic (lowest fitting address wins).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace gpuvp::driver {

class WindowAllocator {
 public:
  explicit WindowAllocator(uint64_t bytes = 0);

  // `align` is a power of two (at least 16 is used). nullopt when nothing fits.
  std::optional<uint64_t> allocate(uint64_t bytes, uint64_t align = 256);
  // Frees a block returned by allocate; false for an offset that is not a block's start.
  bool release(uint64_t offset);
  // The block containing `offset`, as (start, size), if any.
  std::optional<std::pair<uint64_t, uint64_t>> find(uint64_t offset) const;

  uint64_t capacity() const { return bytes_; }
  uint64_t used() const { return used_; }

 private:
  uint64_t bytes_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_;  // start -> size, coalesced
  std::map<uint64_t, uint64_t> used_blocks_;  // start -> size
};

}  // namespace gpuvp::driver
