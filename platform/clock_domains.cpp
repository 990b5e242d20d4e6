#include "platform/clock_domains.h"

#include <cmath>

namespace gpuvp {
namespace {

// Frequency knobs hold Hz as doubles; a clock ticks a whole number of times per second.
uint64_t whole_hz(double hz) { return static_cast<uint64_t>(std::llround(hz)); }

}  // namespace

ClockDomains ClockDomains::from(const PlatformParams& params) {
  return ClockDomains{ClockDomain("core", whole_hz(params.sm.clock_hz)),
                      ClockDomain("crossbar", whole_hz(params.crossbar.clock_hz)),
                      ClockDomain("dram", whole_hz(params.hbm.clock_hz))};
}

}  // namespace gpuvp
