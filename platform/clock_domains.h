// The platform's clock domains, each with its period from the configuration.
#pragma once

#include "models/tlm/clock_domain.h"
#include "platform/platform_params.h"

namespace gpuvp {

struct ClockDomains {
  ClockDomain core;      // SMs: gpu.sm.clock
  ClockDomain crossbar;  // gpu.crossbar.clock
  ClockDomain dram;      // HBM interface: memory.hbm.clock

  // Needs the SystemC time resolution set (the platform uses 1 ps).
  static ClockDomains from(const PlatformParams& params);
};

}  // namespace gpuvp
