// The memory side assembled as the GPU top level will assemble it: cluster ports -> crossbar ->
// L2 slices -> HBM, with one traffic generator per cluster port. Shared by the system tests and
// the simulation-speed benchmark.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/gpu/crossbar/crossbar.h"
#include "models/memory/hbm/hbm_controller.h"
#include "models/memory/l2/l2_slice.h"
#include "tests/memory/params.h"
#include "tests/memory/traffic.h"

namespace gpuvp::memory::testing {

struct MemorySystem {
  MemoryParams p;
  stats::Registry stats;
  std::unique_ptr<AddressMap> map;
  std::unique_ptr<gpu::Crossbar> crossbar;
  std::unique_ptr<L2SliceGroup> l2_group;
  std::vector<std::unique_ptr<L2Slice>> slices;
  std::unique_ptr<HbmController> hbm;
  std::vector<std::unique_ptr<TrafficGenerator>> generators;

  // Port g streams `per_port` requests: lines g, g + ports, g + 2 * ports, ... (a grid-stride
  // loop over one array, as a streaming kernel's CTAs read it), `outstanding` in flight.
  MemorySystem(const MemoryParams& params, uint32_t ports, uint64_t per_port, uint32_t outstanding,
               tlm::tlm_command command = tlm::TLM_READ_COMMAND)
      : p(params) {
    map = std::make_unique<AddressMap>(p.l2, p.hbm);
    crossbar = std::make_unique<gpu::Crossbar>("crossbar", p.crossbar, *map, ports, stats, "gpu.crossbar");
    hbm = std::make_unique<HbmController>("hbm", p.hbm, *map, stats, "memory.hbm");
    l2_group = std::make_unique<L2SliceGroup>(map->slices());
    for (uint32_t s = 0; s < map->slices(); ++s) {
      slices.push_back(std::make_unique<L2Slice>(("l2_" + std::to_string(s)).c_str(), p.l2, *map, s, stats,
                                                 "memory.l2[" + std::to_string(s) + "]", l2_group.get()));
      crossbar->slice.bind(slices.back()->in);
      slices.back()->dram.bind(hbm->socket);
    }
    for (uint32_t g = 0; g < ports; ++g) {
      TrafficGenerator::Stream stream;
      stream.base = uint64_t{g} * p.l2.line_bytes;
      stream.stride = uint64_t{ports} * p.l2.line_bytes;
      stream.count = per_port;
      stream.command = command;
      stream.length = p.l2.line_bytes;
      stream.kind = command == tlm::TLM_WRITE_COMMAND ? AccessKind::Store : AccessKind::Load;
      generators.push_back(
          std::make_unique<TrafficGenerator>(("port_" + std::to_string(g)).c_str(), stream, outstanding));
      generators.back()->socket.bind(crossbar->cluster);
    }
  }
  bool done() const {
    for (const auto& g : generators)
      if (!g->done()) return false;
    return true;
  }
  uint64_t completed() const {
    uint64_t n = 0;
    for (const auto& g : generators) n += g->completed();
    return n;
  }
  uint64_t first_issue_ps() const {
    uint64_t t = ~uint64_t{0};
    for (const auto& g : generators) t = std::min(t, g->first_issue_ps());
    return t;
  }
  uint64_t last_completion_ps() const {
    uint64_t t = 0;
    for (const auto& g : generators) t = std::max(t, g->last_completion_ps());
    return t;
  }
};

}  // namespace gpuvp::memory::testing
