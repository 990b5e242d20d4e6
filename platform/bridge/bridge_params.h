// Knobs of the platform bridge: the ivshmem server and the shared region programs map.
#pragma once

#include <cstdint>
#include <string>

#include "platform/config/params.h"

namespace gpuvp::bridge {

struct BridgeParams {
  uint64_t region_bytes = 0;
  std::string socket_dir;
  double poll_interval_ps = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&BridgeParams::region_bytes, "platform.bridge.region_size", Dimension::Size, "1 GiB", "32 MiB",
               "64 GiB",
               "shared region (header, channels, DMA window) handed to programs; a power of two, as QEMU's "
               "ivshmem requires; a memfd, so untouched pages cost nothing");
    k.text(&BridgeParams::socket_dir, "platform.bridge.socket_dir", "auto",
           "directory in which the private socket directory is created (auto: $TMPDIR, else /tmp)");
    k.quantity(&BridgeParams::poll_interval_ps, "platform.bridge.poll_interval", Dimension::Time, "10 ms", "1 ms",
               "100 ms",
               "wall-clock period of the heartbeat and of polling the command queues (doorbells are hints)");
  }
};

}  // namespace gpuvp::bridge
