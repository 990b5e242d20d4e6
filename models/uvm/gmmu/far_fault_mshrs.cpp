#include "models/uvm/gmmu/far_fault_mshrs.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gpuvp::uvm {

FarFaultMshrs::FarFaultMshrs(std::size_t entries) : capacity_(entries) {
  if (entries == 0) throw std::invalid_argument("uvm: far-fault MSHRs need at least one entry");
}

FarFaultMshrs::Outcome FarFaultMshrs::record(uint64_t page, uint64_t requester) {
  auto it = entries_.find(page);
  if (it != entries_.end()) {
    it->second.waiters.push_back(requester);
    return Outcome::Coalesced;
  }
  if (entries_.size() >= capacity_) return Outcome::Full;
  entries_.emplace(page, Entry{next_order_++, false, {requester}});
  return Outcome::Allocated;
}

std::vector<uint64_t> FarFaultMshrs::take_batch(std::size_t max) {
  std::vector<std::pair<uint64_t, uint64_t>> waiting;  // (order, page)
  for (const auto& [page, e] : entries_)
    if (!e.in_service) waiting.emplace_back(e.order, page);
  std::sort(waiting.begin(), waiting.end());
  std::vector<uint64_t> out;
  for (std::size_t i = 0; i < waiting.size() && i < max; ++i) {
    out.push_back(waiting[i].second);
    entries_[waiting[i].second].in_service = true;
  }
  return out;
}

void FarFaultMshrs::requeue(uint64_t page) {
  auto it = entries_.find(page);
  if (it == entries_.end()) throw std::logic_error("uvm: requeue of a page without a far-fault MSHR");
  it->second.in_service = false;
}

std::vector<uint64_t> FarFaultMshrs::complete(uint64_t page) {
  auto it = entries_.find(page);
  if (it == entries_.end()) return {};
  std::vector<uint64_t> waiters = std::move(it->second.waiters);
  entries_.erase(it);
  return waiters;
}

std::size_t FarFaultMshrs::queued() const {
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const auto& kv) { return !kv.second.in_service; }));
}

std::vector<uint64_t> FarFaultMshrs::pages() const {
  std::vector<uint64_t> out;
  for (const auto& [page, e] : entries_) out.push_back(page);
  return out;
}

}  // namespace gpuvp::uvm
