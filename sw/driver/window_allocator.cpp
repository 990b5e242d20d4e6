#include "sw/driver/window_allocator.h"

#include <iterator>

namespace gpuvp::driver {

WindowAllocator::WindowAllocator(uint64_t bytes) : bytes_(bytes) {
  if (bytes_ > 0) free_[0] = bytes_;
}

std::optional<uint64_t> WindowAllocator::allocate(uint64_t bytes, uint64_t align) {
  if (bytes == 0) bytes = 1;
  if (align < 16) align = 16;
  if ((align & (align - 1)) != 0) return std::nullopt;
  bytes = (bytes + 15) & ~uint64_t{15};
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = it->first;
    const uint64_t size = it->second;
    const uint64_t aligned = (start + align - 1) & ~(align - 1);
    if (aligned - start > size || size - (aligned - start) < bytes) continue;
    free_.erase(it);
    if (aligned > start) free_[start] = aligned - start;
    const uint64_t end = aligned + bytes;
    if (end < start + size) free_[end] = start + size - end;
    used_blocks_[aligned] = bytes;
    used_ += bytes;
    return aligned;
  }
  return std::nullopt;
}

bool WindowAllocator::release(uint64_t offset) {
  const auto block = used_blocks_.find(offset);
  if (block == used_blocks_.end()) return false;
  uint64_t start = block->first;
  uint64_t size = block->second;
  used_ -= size;
  used_blocks_.erase(block);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = size;
  return true;
}

std::optional<std::pair<uint64_t, uint64_t>> WindowAllocator::find(uint64_t offset) const {
  auto it = used_blocks_.upper_bound(offset);
  if (it == used_blocks_.begin()) return std::nullopt;
  --it;
  if (offset >= it->first + it->second) return std::nullopt;
  return std::make_pair(it->first, it->second);
}

}  // namespace gpuvp::driver
