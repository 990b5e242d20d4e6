// The native transport: this process becomes one more peer of the platform's ivshmem server
// (QEMU's docs/specs/ivshmem-spec.rst). It receives the protocol version, its peer id, the
// shared-memory fd and every peer's eventfds over the UNIX socket, maps the region, and keeps
// the platform's command eventfd and its own completion eventfd.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "sw/driver/transport.h"

namespace gpuvp::driver {

struct IvshmemOptions {
  std::string socket_path;
  std::chrono::milliseconds handshake_timeout{5000};
};

// Connects and completes the handshake; checks the region header's magic and version.
// A socket_path of "pci" or "pci:<address>" selects the QEMU guest transport instead
// (guest_transport.h): the same libcudart then runs inside the guest.
// Returns nullptr and sets `error` (one line naming the cause) on failure.
std::unique_ptr<Transport> connect_ivshmem(const IvshmemOptions& options, std::string* error);

}  // namespace gpuvp::driver
