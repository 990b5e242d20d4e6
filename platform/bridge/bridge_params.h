// Knobs of the platform bridge: the ivshmem server and the shared region programs map, and the
// host's view of simulated time.
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
    k.quantity(&BridgeParams::region_bytes, "platform.bridge.region_size", Dimension::Size, "4 GiB", "32 MiB",
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

// How the host's questions meet simulated time (device.h, HostWaiting's bound d).
struct HostParams {
  double query_quantum_ps = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&HostParams::query_quantum_ps, "host.query_quantum", Dimension::Time, "1 us", "1 ns", "1 s",
               "simulated time a query that finds work unfinished (cudaStreamQuery, cudaEventQuery) lets pass at "
               "most -- less when the work completes first -- so that a program polling without ever blocking "
               "still moves its GPU work forward; published in the region header");
  }
};

}  // namespace gpuvp::bridge
