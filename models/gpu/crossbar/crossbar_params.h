// Interconnect between SM clusters and L2 slices (request and reply networks).
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::gpu {

struct CrossbarParams {
  double clock_hz = 0;
  uint32_t flit_bytes = 0;
  double latency_ps = 0;
  double link_bandwidth = 0;   // bytes/s per port
  double total_bandwidth = 0;  // bytes/s, all ports together

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&CrossbarParams::clock_hz, "gpu.crossbar.clock", Dimension::Frequency, "1200 MHz", "1 MHz",
               "10 GHz", "crossbar clock");
    k.quantity(&CrossbarParams::flit_bytes, "gpu.crossbar.flit_size", Dimension::Size, "40 B", "1 B", "4 KiB",
               "bytes a link moves per flit");
    k.quantity(&CrossbarParams::latency_ps, "gpu.crossbar.latency", Dimension::Time, "750 ps", "0 ps", "1 us",
               "traversal latency of one hop, excluding serialization");
    k.quantity(&CrossbarParams::link_bandwidth, "gpu.crossbar.link_bandwidth", Dimension::Bandwidth,
               "37.5 GB/s", "1 MB/s", "100 TB/s", "bandwidth of one crossbar port");
    k.quantity(&CrossbarParams::total_bandwidth, "gpu.crossbar.bandwidth", Dimension::Bandwidth, "4800 GB/s",
               "1 MB/s", "1000 TB/s", "aggregate bandwidth of the crossbar");
  }
};

}  // namespace gpuvp::gpu
