// The shared region every peer maps: a memfd of power-of-two size laid out as device.h says
// (header, channels, DMA window). The platform writes the header before it accepts clients and
// advances the heartbeat while alive. Accessors for the fields both sides write use acquire /
// release atomics: the other side is another process.
#pragma once

#include <cstdint>

#include "gpuvp/device.h"

namespace gpuvp::bridge {

template <class T>
inline T load_acquire(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}
template <class T>
inline void store_release(T& field, T value) {
  __atomic_store_n(&field, value, __ATOMIC_RELEASE);
}

class SharedRegion {
 public:
  // Creates the memfd of `bytes` (a power of two, large enough for the header, the channels and
  // a 1 MiB window slice per channel) and fills the header (state Starting).
  // Throws std::invalid_argument / std::system_error.
  SharedRegion(uint64_t bytes, const device::DeviceInfo& device, uint64_t query_quantum_ps = 0);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  int fd() const { return fd_; }
  uint64_t bytes() const { return bytes_; }
  uint8_t* base() const { return base_; }
  device::RegionHeader& header() const { return *reinterpret_cast<device::RegionHeader*>(base_); }
  device::Channel& channel(uint32_t index) const;

  uint64_t window_offset() const { return window_offset_; }
  uint64_t slice_bytes() const { return slice_bytes_; }
  uint64_t slice_begin(uint32_t channel) const { return window_offset_ + uint64_t{channel} * slice_bytes_; }
  // True when [address, address + length) lies inside `channel`'s window slice (length 0: the
  // address itself must lie inside).
  bool in_slice(uint32_t channel, uint64_t address, uint64_t length) const;

  void set_state(device::PlatformState state);
  void beat();  // heartbeat + 1

 private:
  int fd_ = -1;
  uint64_t bytes_ = 0;
  uint8_t* base_ = nullptr;
  uint64_t window_offset_ = 0;
  uint64_t slice_bytes_ = 0;
};

}  // namespace gpuvp::bridge
