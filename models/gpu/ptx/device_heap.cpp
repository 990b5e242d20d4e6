#include "models/gpu/ptx/device_heap.h"

#include <iterator>

namespace gpuvp::ptx {

void DeviceHeap::reset(uint64_t base, uint64_t bytes) {
  base_ = (base + kGranule - 1) / kGranule * kGranule;
  bytes_ = bytes > base_ - base ? (bytes - (base_ - base)) / kGranule * kGranule : 0;
  free_.clear();
  live_.clear();
  live_bytes_ = 0;
  if (bytes_ != 0) free_[base_] = bytes_;
}

uint64_t DeviceHeap::allocate(uint64_t bytes, uint64_t alignment) {
  if (bytes == 0 || bytes > bytes_ || alignment == 0 || (alignment & (alignment - 1)) != 0) return 0;
  if (alignment < kGranule) alignment = kGranule;
  const uint64_t size = (bytes + kGranule - 1) / kGranule * kGranule;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = it->first;
    const uint64_t length = it->second;
    const uint64_t aligned = (start + alignment - 1) & ~(alignment - 1);
    const uint64_t pad = aligned - start;
    if (pad > length || length - pad < size) continue;
    const uint64_t tail = length - pad - size;
    free_.erase(it);
    if (pad != 0) free_[start] = pad;
    if (tail != 0) free_[aligned + size] = tail;
    live_[aligned] = size;
    live_bytes_ += size;
    return aligned;
  }
  return 0;
}

bool DeviceHeap::release(uint64_t address) {
  const auto it = live_.find(address);
  if (it == live_.end()) return false;
  uint64_t start = it->first;
  uint64_t size = it->second;
  live_bytes_ -= size;
  live_.erase(it);
  // Coalesce with the free neighbours on both sides.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      size += previous->second;
      free_.erase(previous);
    }
  }
  free_[start] = size;
  return true;
}

}  // namespace gpuvp::ptx
