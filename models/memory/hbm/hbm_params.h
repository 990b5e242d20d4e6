// HBM organization, interface speed, address mapping, controller and JEDEC timing parameters.
//
// Knobs memory.hbm.t_rcd, t_rp, ... are JEDEC tRCD, tRP, ... Timing parameters are in cycles of the HBM interface clock (memory.hbm.clock) except tRFC
// and tREFI, which JEDEC states in nanoseconds and which are long enough that rounding them
// to cycles at load time (ceil) loses nothing; HbmTiming below gives everything in cycles.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::memory {

// How a physical address is split into channel, bank group, bank, row and column (address_map.h
// documents the bit order of each).
enum class HbmMapping {
  LineInterleaved,  // consecutive 128 B lines go to consecutive pseudo-channels, then bank groups
  RowInterleaved,   // a whole row (page) of consecutive addresses stays in one bank
};

// Which bank of its pseudo-channel an address lands in, given the mapping's bank fields.
enum class HbmBankHash {
  None,     // the mapping's bank-group and bank fields as they are
  XorFold,  // permuted by a fold of the row index (permutation-based page interleaving)
};

// Every timing parameter in DRAM clock cycles (what the controller computes with).
struct HbmTiming {
  uint32_t rcd, rp, ras, cl, wl, ccd_s, ccd_l, rrd_s, rrd_l, faw, wr, wtr, rtp, burst;
  uint64_t rfc, refi;
};

struct HbmParams {
  uint32_t stacks = 0;
  uint32_t channels_per_stack = 0;
  uint32_t channel_width_bits = 0;
  double clock_hz = 0;
  uint64_t capacity_bytes = 0;
  uint32_t pseudo_channels = 0;
  uint32_t bank_groups = 0;
  uint32_t banks_per_group = 0;
  uint64_t row_bytes = 0;
  uint32_t burst_length = 0;
  uint32_t queue_depth = 0;
  uint32_t write_queue_depth = 0;
  uint32_t write_drain_high = 0;
  uint32_t write_drain_low = 0;
  HbmMapping mapping = HbmMapping::LineInterleaved;
  HbmBankHash bank_hash = HbmBankHash::XorFold;
  uint32_t t_rcd = 0, t_rp = 0, t_ras = 0, t_cl = 0, t_wl = 0, t_ccd_s = 0, t_ccd_l = 0;
  uint32_t t_rrd_s = 0, t_rrd_l = 0, t_faw = 0, t_wr = 0, t_wtr = 0, t_rtp = 0;
  double t_rfc_ps = 0, t_refi_ps = 0;
  double controller_latency_ps = 0;
  bool partition = false;

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
    k.integer(&HbmParams::pseudo_channels, "memory.hbm.pseudo_channels", 2, 1, 4,
              "pseudo-channels per channel (HBM2 pseudo-channel mode: 2, each half the channel width)");
    k.integer(&HbmParams::bank_groups, "memory.hbm.bank_groups", 4, 1, 16, "bank groups per pseudo-channel");
    k.integer(&HbmParams::banks_per_group, "memory.hbm.banks_per_group", 4, 1, 16, "banks per bank group");
    k.quantity(&HbmParams::row_bytes, "memory.hbm.row_size", Dimension::Size, "1 KiB", "128 B", "64 KiB",
               "row (page) size of one pseudo-channel: bytes one ACT opens");
    k.integer(&HbmParams::burst_length, "memory.hbm.burst_length", 4, 2, 16,
              "data beats per column command (a burst moves width/8 x burst_length bytes)");
    k.integer(&HbmParams::queue_depth, "memory.hbm.queue_depth", 64, 1, 1024,
              "read requests the FR-FCFS scheduler of one pseudo-channel holds; full -> END_REQ withheld");
    // Write draining as in GPGPU-Sim's and Accel-Sim's DRAM schedulers (separate write queue and
    // high/low watermarks: 64:56:32 in Accel-Sim's V100 HBM configuration, 32:28:16 GPGPU-Sim's
    // default) and the write-drain modes of Ramulator and USIMM: writes wait while reads are
    // served, then go in a batch, so the data bus turns around once per batch, not per write.
    k.integer(&HbmParams::write_queue_depth, "memory.hbm.write_queue_depth", 64, 1, 1024,
              "write requests one pseudo-channel holds, apart from the reads; full -> END_REQ withheld");
    k.integer(&HbmParams::write_drain_high, "memory.hbm.write_drain_high", 56, 1, 1024,
              "high watermark: queued writes at which a pseudo-channel stops serving reads and drains "
              "writes (at most write_queue_depth)");
    k.integer(&HbmParams::write_drain_low, "memory.hbm.write_drain_low", 32, 0, 1023,
              "low watermark: queued writes at or below which a draining pseudo-channel returns to reads "
              "if one is queued (below write_drain_high)");
    k.choice(&HbmParams::mapping, "memory.hbm.address_map", "line_interleaved",
             {{"line_interleaved", HbmMapping::LineInterleaved}, {"row_interleaved", HbmMapping::RowInterleaved}},
             "address -> pseudo-channel/bank/row/column: 'line_interleaved' spreads consecutive 128 B lines over "
             "pseudo-channels then bank groups; 'row_interleaved' keeps a row of consecutive bytes in one bank");
    k.choice(&HbmParams::bank_hash, "memory.hbm.bank_hash", "xor_fold",
             {{"xor_fold", HbmBankHash::XorFold}, {"none", HbmBankHash::None}},
             "bank of an address within its pseudo-channel: 'xor_fold' rotates the mapping's bank index by a "
             "fold of the row index, so buffers a power-of-two apart (same bank fields, other rows) use other "
             "banks instead of conflicting in one (permutation-based page interleaving, Zhang, Zhu and Zhang, "
             "MICRO 2000); 'none' keeps the mapping's bank fields");
    k.quantity(&HbmParams::t_rcd, "memory.hbm.t_rcd", Dimension::Cycles, "14 cycles", "1 cycles", "255 cycles",
               "ACT to RD/WR, same bank");
    k.quantity(&HbmParams::t_rp, "memory.hbm.t_rp", Dimension::Cycles, "14 cycles", "1 cycles", "255 cycles",
               "PRE to ACT, same bank");
    k.quantity(&HbmParams::t_ras, "memory.hbm.t_ras", Dimension::Cycles, "33 cycles", "1 cycles", "255 cycles",
               "ACT to PRE, same bank");
    k.quantity(&HbmParams::t_cl, "memory.hbm.t_cl", Dimension::Cycles, "14 cycles", "1 cycles", "255 cycles",
               "RD to first data beat (read latency)");
    k.quantity(&HbmParams::t_wl, "memory.hbm.t_wl", Dimension::Cycles, "4 cycles", "0 cycles", "255 cycles",
               "WR to first data beat (write latency)");
    k.quantity(&HbmParams::t_ccd_s, "memory.hbm.t_ccd_s", Dimension::Cycles, "2 cycles", "1 cycles", "255 cycles",
               "column command to column command, different bank groups");
    k.quantity(&HbmParams::t_ccd_l, "memory.hbm.t_ccd_l", Dimension::Cycles, "4 cycles", "1 cycles", "255 cycles",
               "column command to column command, same bank group");
    k.quantity(&HbmParams::t_rrd_s, "memory.hbm.t_rrd_s", Dimension::Cycles, "4 cycles", "1 cycles", "255 cycles",
               "ACT to ACT, different bank groups");
    k.quantity(&HbmParams::t_rrd_l, "memory.hbm.t_rrd_l", Dimension::Cycles, "6 cycles", "1 cycles", "255 cycles",
               "ACT to ACT, same bank group");
    k.quantity(&HbmParams::t_faw, "memory.hbm.t_faw", Dimension::Cycles, "16 cycles", "1 cycles", "1023 cycles",
               "window in which at most four ACTs may issue (per pseudo-channel)");
    k.quantity(&HbmParams::t_wr, "memory.hbm.t_wr", Dimension::Cycles, "14 cycles", "1 cycles", "255 cycles",
               "end of write data to PRE, same bank (write recovery)");
    k.quantity(&HbmParams::t_wtr, "memory.hbm.t_wtr", Dimension::Cycles, "7 cycles", "1 cycles", "255 cycles",
               "end of write data to RD (write-to-read turnaround)");
    k.quantity(&HbmParams::t_rtp, "memory.hbm.t_rtp", Dimension::Cycles, "5 cycles", "1 cycles", "255 cycles",
               "RD to PRE, same bank");
    k.quantity(&HbmParams::t_rfc_ps, "memory.hbm.t_rfc", Dimension::Time, "350 ns", "1 ns", "10 us",
               "all-bank refresh cycle time: the pseudo-channel issues nothing this long");
    k.quantity(&HbmParams::t_refi_ps, "memory.hbm.t_refi", Dimension::Time, "3900 ns", "100 ns", "1 ms",
               "average refresh interval: one all-bank refresh per pseudo-channel every tREFI");
    k.quantity(&HbmParams::controller_latency_ps, "memory.hbm.controller_latency", Dimension::Time, "0 ns", "0 ns",
               "10 us",
               "fixed latency of the controller front end, PHY and return path added to every response "
               "(a pipeline delay: it costs no bank or bus time)");
    k.flag(&HbmParams::partition, "memory.hbm.partition", false,
           "the controllers simulate as a partition of their own, behind SystemC time, on a host thread beside "
           "the SMs' windows (platform/parallel/README.md): every request is accepted at once into a front end "
           "and waits there while its pseudo-channel's queue is full; needs controller_latency + (min(t_cl, t_wl) "
           "+ burst_length/2) HBM cycles above two sim.window");
  }

  // The shortest time from a command the controller issues to the response it makes: what a
  // partition may lag behind the time its responses are due.
  double response_lookahead_ps() const {
    return controller_latency_ps + period_ps() * (std::min(t_cl, t_wl) + burst_length / 2);
  }

  uint32_t total_channels() const { return stacks * channels_per_stack * pseudo_channels; }  // pseudo-channels
  uint32_t banks() const { return bank_groups * banks_per_group; }  // per pseudo-channel
  uint32_t burst_bytes() const { return channel_width_bits / pseudo_channels / 8 * burst_length; }
  double period_ps() const { return 1e12 / clock_hz; }
  // All timing parameters in DRAM cycles (tRFC and tREFI rounded up).
  HbmTiming timing() const {
    const double period = period_ps();
    auto cycles = [period](double ps) { return static_cast<uint64_t>(std::ceil(ps / period - 1e-9)); };
    return HbmTiming{t_rcd, t_rp, t_ras, t_cl, t_wl, t_ccd_s, t_ccd_l, t_rrd_s, t_rrd_l, t_faw, t_wr, t_wtr,
                     t_rtp, burst_length / 2, cycles(t_rfc_ps), cycles(t_refi_ps)};
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
