// A small knob catalogue for config tests, independent of the platform's real one, so the tests
// say exactly which knobs exist.
#pragma once

#include <cstdint>
#include <string>

#include "platform/config/params.h"

namespace gpuvp::config::testing {

enum class Policy { Gto, Lrr };

struct TestParams {
  uint32_t sm_count = 0;
  double sm_clock_hz = 0;
  uint64_t slice_bytes = 0;
  double latency_ps = 0;
  double bandwidth = 0;
  uint32_t bus_bits = 0;
  double hit_ratio = 0;
  bool trace = false;
  Policy policy = Policy::Gto;
  std::string name;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.integer(&TestParams::sm_count, "gpu.sm.count", 84, 1, 1024, "streaming multiprocessors");
    k.quantity(&TestParams::sm_clock_hz, "gpu.sm.clock", Dimension::Frequency, "1312 MHz", "1 MHz", "10 GHz",
               "core clock");
    k.quantity(&TestParams::slice_bytes, "memory.l2.slice_size", Dimension::Size, "192 KiB", "1 KiB", "1 GiB",
               "L2 slice size");
    k.quantity(&TestParams::latency_ps, "pcie.latency", Dimension::Time, "23840 ps", "0 ps", "1 ms", "latency");
    k.quantity(&TestParams::bandwidth, "pcie.bandwidth", Dimension::Bandwidth, "16 GB/s", "1 MB/s", "10 TB/s",
               "bandwidth");
    k.quantity(&TestParams::bus_bits, "memory.hbm.channel_width", Dimension::Bits, "128 bit", "8 bit", "4096 bit",
               "channel width");
    k.real(&TestParams::hit_ratio, "memory.l2.expected_hit_ratio", 0.5, 0.0, 1.0, "a ratio");
    k.flag(&TestParams::trace, "sim.trace", false, "trace everything");
    k.choice(&TestParams::policy, "gpu.sm.scheduler", "gto", {{"gto", Policy::Gto}, {"lrr", Policy::Lrr}},
             "warp scheduler");
    k.text(&TestParams::name, "gpu.name", "test gpu", "device name");
  }
};

inline KnobRegistry make_test_registry() {
  KnobRegistry registry;
  declare_knobs<TestParams>(registry);
  return registry;
}

}  // namespace gpuvp::config::testing
