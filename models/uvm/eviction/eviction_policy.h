// Eviction policies of the GMMU for oversubscribed device memory (seed 003's UVMSmart, after
// Ganguly et al.): when a migration needs more frames than are free, the policy picks resident
// pages to send back to the host. Only pages in state Device are candidates (a page on its way in
// is pinned until it lands).
//
//   lru_4k            least recently used 4 KB pages.
//   lru_2m            the least recently used 2 MB large page (its most recent page's use), all
//                     of its resident pages at once; repeated until enough are freed.
//   random            resident pages drawn by a seeded generator.
//   sequential_local  the least recently used 64 KB basic block, all of its resident pages.
//   lfu               least frequently used 4 KB pages (fewest uses since arrival), ties LRU.
//
// Ties are broken by the lower address, so the choice is deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "models/uvm/residency/page_table.h"

namespace gpuvp::uvm {

enum class EvictionKind { Lru4K, Lru2M, Random, SequentialLocal, Lfu };

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // At least `pages` resident pages (fewer only when fewer are resident), ascending, distinct.
  // Whole-region policies may return more than asked. With `spare_preferred`, pages whose
  // preferred location is the device (cudaMemAdviseSetPreferredLocation) are not candidates.
  std::vector<uint64_t> victims(const PageTable& table, uint64_t pages) { return victims(table, pages, false); }
  virtual std::vector<uint64_t> victims(const PageTable& table, uint64_t pages, bool spare_preferred) = 0;
};

std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, uint64_t seed);

}  // namespace gpuvp::uvm
