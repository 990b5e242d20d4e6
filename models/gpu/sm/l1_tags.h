// The L1 data cache's tag array: sectored (four 32 B sectors per 128 B line, each valid on its
// own), set-associative, least-recently-used replacement. The SM's LSU and the trace injector's
// L1 redo (gpuvp replay --l1 redo) use the same array, so a replay on the captured L1 makes the
// same hits and evictions for the same lookups in the same order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::gpu {

class L1Tags {
 public:
  struct Line {
    uint64_t tag = ~uint64_t{0};
    uint8_t valid = 0;  // sector bits
    uint64_t last_use = 0;
  };

  // `bytes` of 128 B lines in sets of `ways` (fewer when the cache holds fewer lines); empty.
  void resize(uint64_t bytes, uint32_t ways) {
    bytes_ = bytes;
    const uint64_t lines = std::max<uint64_t>(bytes / kLineBytes, 1);
    ways_ = std::max<uint32_t>(static_cast<uint32_t>(std::min<uint64_t>(ways, lines)), 1);
    sets_ = static_cast<uint32_t>(std::max<uint64_t>(lines / ways_, 1));
    lines_.assign(static_cast<size_t>(sets_) * ways_, Line{});
  }
  uint64_t bytes() const { return bytes_; }

  Line* find(uint64_t line) {
    const uint64_t tag = line / kLineBytes;
    Line* set = &lines_[(tag % sets_) * ways_];
    for (uint32_t i = 0; i < ways_; ++i) {
      if (set[i].tag == tag) return &set[i];
    }
    return nullptr;
  }
  // Marks a line just used (a hit).
  void touch(Line& l) { l.last_use = ++clock_; }
  // Sectors `mask` of `line` arrive: allocate the line (evicting the least recently used of its
  // set) if absent, mark the sectors valid, touch it.
  void fill(uint64_t line, uint8_t mask) {
    Line* hit = find(line);
    if (hit == nullptr) {
      const uint64_t tag = line / kLineBytes;
      Line* set = &lines_[(tag % sets_) * ways_];
      hit = &set[0];
      for (uint32_t i = 1; i < ways_; ++i) {
        if (set[i].last_use < hit->last_use) hit = &set[i];
      }
      hit->tag = tag;
      hit->valid = 0;
    }
    hit->valid = static_cast<uint8_t>(hit->valid | mask);
    touch(*hit);
  }
  // A write-through store: sectors of a present line become valid; an absent line stays absent.
  void write(uint64_t line, uint8_t mask) {
    if (Line* l = find(line)) l->valid = static_cast<uint8_t>(l->valid | mask);
  }

 private:
  std::vector<Line> lines_;
  uint64_t bytes_ = 0;
  uint32_t sets_ = 1, ways_ = 1;
  uint64_t clock_ = 0;
};

}  // namespace gpuvp::gpu
