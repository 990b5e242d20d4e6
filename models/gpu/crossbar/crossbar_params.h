// Interconnect between SM clusters and L2 slices (request and reply networks).
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::gpu {

struct CrossbarParams {
  double clock_hz = 0;
  uint32_t flit_bytes = 0;
  double latency_ps = 0;
  double cluster_latency_ps = 0;  // the network between a cluster port and the arbiters, each way
  double link_bandwidth = 0;   // bytes/s per link
  uint32_t links_per_port = 0; // parallel links behind every port
  double total_bandwidth = 0;  // bytes/s, all ports together
  uint32_t header_bytes = 0;   // request/reply header, flits carry header + data
  uint32_t input_buffer = 0;   // packets each input port buffers
  uint32_t wire_packets = 0;   // packets one output link has in flight (sent, not yet arrived)

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&CrossbarParams::clock_hz, "gpu.crossbar.clock", Dimension::Frequency, "1200 MHz", "1 MHz",
               "10 GHz", "crossbar clock");
    k.quantity(&CrossbarParams::flit_bytes, "gpu.crossbar.flit_size", Dimension::Size, "40 B", "1 B", "4 KiB",
               "bytes a link moves per flit");
    k.quantity(&CrossbarParams::latency_ps, "gpu.crossbar.latency", Dimension::Time, "750 ps", "0 ps", "1 us",
               "traversal latency of one hop, excluding serialization");
    k.quantity(&CrossbarParams::cluster_latency_ps, "gpu.crossbar.cluster_latency", Dimension::Time, "0 ps", "0 ps",
               "1 us",
               "the network between an SM cluster's port and the crossbar's arbiters, each way: a request "
               "reaches its input buffer this long after the cluster sent it and its buffer slot comes back "
               "to the cluster this long after the arbiter took it (a credit); a reply arrives this long after "
               "gpu.crossbar.latency. The lookahead of a cut between the SMs and the memory side");
    k.quantity(&CrossbarParams::link_bandwidth, "gpu.crossbar.link_bandwidth", Dimension::Bandwidth,
               "37.5 GB/s", "1 MB/s", "100 TB/s", "bandwidth of one crossbar link");
    k.integer(&CrossbarParams::links_per_port, "gpu.crossbar.links_per_port", 1, 1, 64,
              "links behind every cluster and slice port, moving flits side by side (port bandwidth = "
              "links x link_bandwidth)");
    k.quantity(&CrossbarParams::total_bandwidth, "gpu.crossbar.bandwidth", Dimension::Bandwidth, "4800 GB/s",
               "1 MB/s", "1000 TB/s",
               "aggregate bandwidth of the crossbar (informational: the per-link bandwidth governs the model)");
    k.quantity(&CrossbarParams::header_bytes, "gpu.crossbar.header_size", Dimension::Size, "8 B", "0 B", "256 B",
               "header of every packet (address, command, ids); a packet is header + data, in whole flits");
    k.integer(&CrossbarParams::input_buffer, "gpu.crossbar.input_buffer", 8, 1, 1024,
              "packets one input port buffers (shared by its virtual output queues); full -> END_REQ withheld");
    k.integer(&CrossbarParams::wire_packets, "gpu.crossbar.wire_packets", 4, 1, 4096,
              "packets one output link can have in flight between their last flit and their arrival; a link "
              "keeps sending only while fewer are on its wire, so with a latency longer than this many "
              "packets' serialization the link idles");
  }

  double port_bandwidth() const { return link_bandwidth * links_per_port; }
};

}  // namespace gpuvp::gpu
