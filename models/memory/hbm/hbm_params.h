// HBM organization and interface speed. Timing parameters join when the DRAM model does.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::memory {

struct HbmParams {
  uint32_t stacks = 0;
  uint32_t channels_per_stack = 0;
  uint32_t channel_width_bits = 0;
  double clock_hz = 0;
  uint64_t capacity_bytes = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.integer(&HbmParams::stacks, "memory.hbm.stacks", 4, 1, 64, "HBM stacks on the package");
    k.integer(&HbmParams::channels_per_stack, "memory.hbm.channels_per_stack", 8, 1, 64,
              "independent channels per stack");
    k.quantity(&HbmParams::channel_width_bits, "memory.hbm.channel_width", Dimension::Bits, "128 bit", "8 bit",
               "4096 bit", "data bus width of one channel");
    k.quantity(&HbmParams::clock_hz, "memory.hbm.clock", Dimension::Frequency, "877 MHz", "10 MHz", "10 GHz",
               "HBM interface clock; data moves on both edges (double data rate)");
    k.quantity(&HbmParams::capacity_bytes, "memory.hbm.capacity", Dimension::Size, "16384 MiB", "1 MiB",
               "16 TiB", "device memory capacity, all stacks together");
  }

  uint64_t bus_width_bits_per_stack() const { return uint64_t{channels_per_stack} * channel_width_bits; }
  double data_rate_per_pin() const { return 2.0 * clock_hz; }  // transfers per second per pin
  // stacks x bus width x data rate, in bytes per second.
  double peak_bandwidth() const {
    return static_cast<double>(stacks) * static_cast<double>(bus_width_bits_per_stack()) / 8.0 *
           data_rate_per_pin();
  }
};

}  // namespace gpuvp::memory
