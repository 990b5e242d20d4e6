#include "models/uvm/tlb/tlb_array.h"

#include <stdexcept>
#include <string>

namespace gpuvp::uvm {

TlbArray::TlbArray(const char* what, uint32_t entries, uint32_t ways) {
  if (entries == 0 || ways == 0 || ways > entries || entries % ways != 0)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(entries) + " entries in " +
                                std::to_string(ways) + " ways: need entries >= 1 and a whole number of sets");
  sets_ = entries / ways;
  ways_ = ways;
  entries_.resize(entries);
}

TlbArray::Entry* TlbArray::find(uint64_t page) {
  Entry* set = &entries_[(page % sets_) * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (set[w].stamp != 0 && set[w].page == page) return &set[w];
  return nullptr;
}

bool TlbArray::lookup(uint64_t page) {
  Entry* e = find(page);
  if (e == nullptr) return false;
  e->stamp = ++clock_;
  return true;
}

void TlbArray::insert(uint64_t page) {
  if (Entry* e = find(page)) {
    e->stamp = ++clock_;
    return;
  }
  Entry* set = &entries_[(page % sets_) * ways_];
  Entry* victim = &set[0];
  for (uint32_t w = 1; w < ways_; ++w)
    if (set[w].stamp < victim->stamp) victim = &set[w];
  victim->page = page;
  victim->stamp = ++clock_;
}

bool TlbArray::invalidate(uint64_t page) {
  Entry* e = find(page);
  if (e == nullptr) return false;
  e->stamp = 0;
  return true;
}

void TlbArray::flush() {
  for (Entry& e : entries_) e.stamp = 0;
}

uint32_t TlbArray::size() const {
  uint32_t n = 0;
  for (const Entry& e : entries_) n += e.stamp != 0;
  return n;
}

}  // namespace gpuvp::uvm
