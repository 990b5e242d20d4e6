// L2 cache: one slice per memory sub-partition, addresses hashed across slices.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::memory {

// Which L2 slice serves an address (address_map.h documents both).
enum class SliceHash {
  XorFold,  // line index plus an XOR-fold of its upper bits, modulo slices: strides spread
  Modulo,   // line index modulo slices: simple, but power-of-two strides hit one slice
};

struct L2Params {
  uint32_t slices = 0;
  uint64_t slice_bytes = 0;
  uint32_t line_bytes = 0;
  uint32_t sector_bytes = 0;
  uint32_t associativity = 0;
  double clock_hz = 0;
  uint32_t hit_latency = 0;   // L2 cycles
  uint32_t miss_latency = 0;  // L2 cycles
  uint32_t fill_latency = 0;  // L2 cycles
  uint32_t atomic_cycles = 0;
  uint32_t data_width = 0;    // bytes per L2 cycle
  uint32_t mshrs = 0;
  uint32_t mshr_targets = 0;
  uint32_t queue_depth = 0;
  uint32_t dram_queue_depth = 0;
  SliceHash slice_hash = SliceHash::XorFold;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.integer(&L2Params::slices, "memory.l2.slices", 32, 1, 1024, "L2 slices (one per memory sub-partition)");
    k.quantity(&L2Params::slice_bytes, "memory.l2.slice_size", Dimension::Size, "192 KiB", "1 KiB", "1 GiB",
               "capacity of one L2 slice");
    k.quantity(&L2Params::line_bytes, "memory.l2.line_size", Dimension::Size, "128 B", "32 B", "4 KiB",
               "L2 line (tag) size");
    k.quantity(&L2Params::sector_bytes, "memory.l2.sector_size", Dimension::Size, "32 B", "4 B", "4 KiB",
               "L2 sector: the unit of fill and of valid/dirty state");
    k.integer(&L2Params::associativity, "memory.l2.associativity", 16, 1, 64, "ways per set (LRU replacement)");
    k.quantity(&L2Params::clock_hz, "memory.l2.clock", Dimension::Frequency, "1312 MHz", "1 MHz", "10 GHz",
               "clock of the L2 slices (tag pipeline and latencies count these cycles)");
    k.quantity(&L2Params::hit_latency, "memory.l2.hit_latency", Dimension::Cycles, "140 cycles", "1 cycles",
               "10000 cycles", "request accepted -> response sent, for a hit");
    k.quantity(&L2Params::miss_latency, "memory.l2.miss_latency", Dimension::Cycles, "20 cycles", "1 cycles",
               "10000 cycles",
               "request accepted -> DRAM request sent, for a miss");
    k.quantity(&L2Params::fill_latency, "memory.l2.fill_latency", Dimension::Cycles, "120 cycles", "0 cycles",
               "10000 cycles",
               "DRAM fill arrived -> response sent to the requests it completes (the data-array and output "
               "stages a hit also passes)");
    k.quantity(&L2Params::atomic_cycles, "memory.l2.atomic_cycles", Dimension::Cycles, "4 cycles", "1 cycles",
               "1000 cycles", "cycles an atomic or reduction occupies the slice's pipeline");
    k.quantity(&L2Params::data_width, "memory.l2.data_width", Dimension::Size, "64 B", "4 B", "4 KiB",
               "bytes the slice's data array moves per L2 cycle: a request of n sectors holds the pipeline "
               "ceil(n x sector_size / data_width) cycles");
    k.integer(&L2Params::mshrs, "memory.l2.mshrs", 64, 1, 4096,
              "miss status holding registers per slice (lines with a fill outstanding); full -> back-pressure");
    k.integer(&L2Params::mshr_targets, "memory.l2.mshr_targets", 8, 1, 256,
              "requests one MSHR merges (waiting on the same line); full -> back-pressure");
    k.integer(&L2Params::queue_depth, "memory.l2.queue_depth", 16, 1, 4096,
              "requests the slice's input queue holds; full -> END_REQ withheld");
    k.integer(&L2Params::dram_queue_depth, "memory.l2.dram_queue_depth", 32, 1, 4096,
              "fills and writebacks waiting to go to DRAM; full -> the pipeline stalls");
    k.choice(&L2Params::slice_hash, "memory.l2.slice_hash", "xor_fold",
             {{"xor_fold", SliceHash::XorFold}, {"modulo", SliceHash::Modulo}},
             "address -> slice: 'xor_fold' adds an XOR-fold of the upper line-address bits so strided "
             "patterns spread; 'modulo' is the line index modulo the slice count");
  }

  uint32_t sectors_per_line() const { return line_bytes / sector_bytes; }
  uint64_t sets() const { return slice_bytes / line_bytes / associativity; }

  uint64_t capacity_bytes() const { return uint64_t{slices} * slice_bytes; }
};

}  // namespace gpuvp::memory
