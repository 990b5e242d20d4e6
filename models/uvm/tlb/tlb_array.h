// A TLB's tag array: set-associative, LRU within a set, one entry per 4 KB page number.
// Sets are chosen by the low bits of the page number (entries / ways sets, a power of two or
// not: page % sets). Pure C++; the TLB modules own one each.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuvp::uvm {

class TlbArray {
 public:
  // `entries` >= 1, 1 <= `ways` <= entries, entries a multiple of ways; throws
  // std::invalid_argument otherwise (naming `what`).
  TlbArray(const char* what, uint32_t entries, uint32_t ways);

  // True when `page` is present (and makes it the most recently used of its set).
  bool lookup(uint64_t page);
  // Inserts `page` (no-op when present), evicting the set's least recently used entry.
  void insert(uint64_t page);
  // Removes `page` when present; returns whether it was.
  bool invalidate(uint64_t page);
  void flush();
  uint32_t size() const;  // valid entries

 private:
  struct Entry {
    uint64_t page = 0;
    uint64_t stamp = 0;  // last use; 0 = invalid
  };
  Entry* find(uint64_t page);
  uint32_t sets_;
  uint32_t ways_;
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace gpuvp::uvm
