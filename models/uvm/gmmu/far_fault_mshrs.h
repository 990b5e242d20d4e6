// Far-fault MSHRs of the GMMU (seed 003 §B.2 steps 3 and 6): one entry per faulting 4 KB page,
// bounded. A fault on a page that already has an entry coalesces into it (its requester joins
// the waiters); a fault on a new page when every entry is taken is refused (back-pressure: the
// requesting TLB keeps the translation and retries). Entries leave in the order they arrived:
// take_batch() hands out those not yet being serviced, complete() frees an entry and returns
// everyone to replay. Unlike UVMSmart's unbounded map, capacity is a knob.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace gpuvp::uvm {

class FarFaultMshrs {
 public:
  enum class Outcome { Allocated, Coalesced, Full };

  // `entries` >= 1; throws std::invalid_argument otherwise.
  explicit FarFaultMshrs(std::size_t entries);

  Outcome record(uint64_t page, uint64_t requester);
  // Up to `max` pages recorded but not yet handed out, oldest first; they become "in service".
  std::vector<uint64_t> take_batch(std::size_t max);
  // Puts a handed-out page back at the head of the queue (it could not be serviced yet).
  void requeue(uint64_t page);
  // Frees the entry of `page` and returns its waiters in arrival order (empty when none).
  std::vector<uint64_t> complete(uint64_t page);

  bool contains(uint64_t page) const { return entries_.count(page) != 0; }
  std::size_t occupancy() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  std::size_t queued() const;  // recorded, not handed out
  // Pages with an entry, ascending.
  std::vector<uint64_t> pages() const;

 private:
  struct Entry {
    uint64_t order = 0;  // arrival sequence number (queue position)
    bool in_service = false;
    std::vector<uint64_t> waiters;
  };
  std::size_t capacity_;
  uint64_t next_order_ = 0;
  std::map<uint64_t, Entry> entries_;  // by page
};

}  // namespace gpuvp::uvm
