// Crossbar -> L2 -> HBM together: streaming bandwidth against the peak the configuration
// implies (measured in simulated time), back-pressure reaching the cluster ports, determinism.
#include <gtest/gtest.h>

#include "tests/memory/memory_system.h"
#include "tests/support/testbench.h"

namespace gpuvp::memory {
namespace {

using testing::MemorySystem;

// Runs until every generator finished (or the limit passes).
void run_to_completion(testbench::Simulation& sim, MemorySystem& m) {
  sim.run([&] {
    while (!m.done()) sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));
  }, sc_core::sc_time(10, sc_core::SC_MS));
}

TEST(MemorySystem, StreamingReadsReachMostOfThePeakBandwidth) {
  testbench::Simulation sim;
  const auto p = testing::load_params();
  const uint32_t ports = 42;  // V100: 84 SMs, two per cluster port
  MemorySystem m(p, ports, 1500, 64);
  run_to_completion(sim, m);
  ASSERT_TRUE(m.done());
  const double seconds = static_cast<double>(m.last_completion_ps() - m.first_issue_ps()) * 1e-12;
  const double achieved = static_cast<double>(m.completed()) * p.l2.line_bytes / seconds;
  // The peak: every HBM data bus busy (refresh, which takes tRFC / tREFI = 9 % of the time
  // on the V100 preset, is not subtracted), or the crossbar's reply links carrying 128 B lines
  // in whole flits, whichever is lower.
  const double hbm_peak = m.hbm->peak_bandwidth();
  const double xbar_peak = ports * p.crossbar.link_bandwidth * p.l2.line_bytes /
                           (m.crossbar->flits(p.l2.line_bytes) * static_cast<double>(p.crossbar.flit_bytes));
  const double peak = std::min(hbm_peak, xbar_peak);
  RecordProperty("achieved_GBps", std::to_string(achieved / 1e9));
  RecordProperty("peak_GBps", std::to_string(peak / 1e9));
  std::printf("streaming reads: %.1f GB/s of %.1f GB/s peak (%.1f %%)\n", achieved / 1e9, peak / 1e9,
              100 * achieved / peak);
  EXPECT_GE(achieved, 0.85 * peak);
  EXPECT_LE(achieved, 1.0001 * m.hbm->peak_bandwidth());
  // Every line missed once in L2 and was read from DRAM once.
  EXPECT_EQ(m.stats.find_group("memory.hbm")->find_counter("requests")->value(), m.completed());
}

TEST(MemorySystem, BackPressureReachesTheClusterPortsAndEverythingCompletes) {
  testbench::Simulation sim;
  const auto p = testing::load_params({"memory.l2.mshrs=1", "memory.l2.queue_depth=1", "gpu.crossbar.input_buffer=2"});
  MemorySystem m(p, 2, 300, 32);
  run_to_completion(sim, m);
  ASSERT_TRUE(m.done());
  EXPECT_GT(m.stats.find_group("gpu.crossbar")->find_counter("request_withheld")->value(), 0u);
  EXPECT_EQ(m.completed(), 600u);
}

std::string run_once() {
  testbench::Simulation sim;
  const auto p = testing::load_params();
  MemorySystem m(p, 8, 400, 16);
  run_to_completion(sim, m);
  return m.stats.json();
}

TEST(MemorySystem, IdenticalRunsGiveIdenticalStatistics) {
  const std::string a = run_once();
  const std::string b = run_once();
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("row_buffer_hit_rate"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::memory
