// How the driver reaches the device: a mapped shared region plus doorbells in both directions.
// The native transport is an ivshmem peer of the platform (ivshmem_client.h); a QEMU guest's
// transport (BAR0 doorbells, BAR2 region) implements the same interface.
#pragma once

#include <chrono>
#include <cstdint>

namespace gpuvp::driver {

enum class WaitResult { Signaled, TimedOut, PlatformGone };

class Transport {
 public:
  virtual ~Transport() = default;

  // The shared region, mapped read/write, and its size.
  virtual uint8_t* region() const = 0;
  virtual uint64_t region_bytes() const = 0;
  // This client's peer id (the platform checks it against the channel's owner).
  virtual uint32_t peer_id() const = 0;

  // Rings the platform's command doorbell. False when the platform is known to be gone.
  virtual bool ring_platform() = 0;
  // Blocks until the platform rings this client's completion doorbell, the timeout passes, or
  // the platform disappears. Doorbells are hints: callers also poll the region.
  virtual WaitResult wait_for_doorbell(std::chrono::milliseconds timeout) = 0;
  // False once the transport has seen the platform leave (socket closed, peer gone).
  virtual bool platform_connected() = 0;
};

}  // namespace gpuvp::driver
