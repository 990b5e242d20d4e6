// Hardware prefetchers of the GMMU, exactly as seed 003 §B.3 describes them. On a far fault a
// prefetcher decides which host-resident pages migrate along with the faulting one and how they
// are grouped into PCIe transfers.
//
//   none              only the faulting 4 KB page.
//   random            the faulting page plus one random host-resident 4 KB page of the same
//                     2 MB large page (seeded generator: runs are reproducible).
//   sequential_local  the whole 64 KB basic block of the faulting page.
//   tbn               tree-based neighbourhood (TBNp): a full binary tree per 2 MB large page of
//                     the allocation (the remainder rounded up to 2^i x 64 KB), 64 KB leaves. The
//                     faulting block becomes valid; then, from its parent up to the root, any node
//                     whose to-be-valid size is strictly more than half its capacity has all its
//                     blocks brought in. Prefetches range from 64 KB to 1020 KB.
//
// Transfers (seed 003 Figure 2): the faulting page travels alone first (the "page-fault group");
// the other pages follow as maximal runs of consecutive pages in address order (the "prefetch
// groups"). Pages already resident or already migrating are never planned again, and the plan
// stays inside the faulting page's allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "models/uvm/residency/page_table.h"

namespace gpuvp::uvm {

enum class PrefetcherKind { None, Random, SequentialLocal, Tbn };

struct MigrationPlan {
  std::vector<PageRange> transfers;  // in issue order; transfers[0] is the faulting page
  uint64_t pages() const {
    uint64_t n = 0;
    for (const auto& t : transfers) n += t.count;
    return n;
  }
};

class Prefetcher {
 public:
  virtual ~Prefetcher() = default;
  // Plan for a far fault on `fault_page`, which must be managed and host resident.
  MigrationPlan plan(const PageTable& table, uint64_t fault_page);

 protected:
  // Pages (other than the faulting one) the prefetcher wants, any order, may repeat or include
  // resident pages: plan() filters and groups them.
  virtual std::vector<uint64_t> candidates(const PageTable& table, const Allocation& alloc, uint64_t fault_page) = 0;
};

std::unique_ptr<Prefetcher> make_prefetcher(PrefetcherKind kind, uint64_t seed);

// Tree geometry of TBNp for one allocation: the trees' first pages and sizes in pages.
struct TbnTree {
  uint64_t first_page = 0;
  uint64_t pages = 0;  // 2^i x 16, at most 512
};
std::vector<TbnTree> tbn_trees(const Allocation& alloc);

}  // namespace gpuvp::uvm
