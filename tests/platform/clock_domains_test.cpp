#include <gtest/gtest.h>

#include "platform/clock_domains.h"
#include "platform/config/config.h"
#include "tests/support/testbench.h"

namespace gpuvp {
namespace {

TEST(ClockDomains, PeriodsComeFromTheConfiguration) {
  testbench::Simulation sim;  // fresh context at 1 ps resolution
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  const auto clocks = ClockDomains::from(PlatformParams::load(loader.load("v100", {"memory.hbm.clock=1 GHz"})));
  EXPECT_EQ(clocks.core.frequency_hz(), 1312000000u);
  EXPECT_EQ(clocks.crossbar.frequency_hz(), 1200000000u);
  EXPECT_EQ(clocks.dram.frequency_hz(), 1000000000u);
  EXPECT_EQ(clocks.dram.period(), sc_core::sc_time(1000, sc_core::SC_PS));
  EXPECT_EQ(clocks.crossbar.time_of_cycle(6), sc_core::sc_time(5000, sc_core::SC_PS));  // 833.3 ps each
  // 1312 MHz does not divide 1 ps evenly; a million cycles still land exactly.
  EXPECT_EQ(clocks.core.time_of_cycle(1000000).value(), 762195121u);
}

}  // namespace
}  // namespace gpuvp
