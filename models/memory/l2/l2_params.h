// L2 cache: one slice per memory sub-partition, addresses hashed across slices.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::memory {

struct L2Params {
  uint32_t slices = 0;
  uint64_t slice_bytes = 0;
  uint32_t line_bytes = 0;
  uint32_t sector_bytes = 0;

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
  }

  uint64_t capacity_bytes() const { return uint64_t{slices} * slice_bytes; }
};

}  // namespace gpuvp::memory
