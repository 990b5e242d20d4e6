#include "models/uvm/prefetch/prefetcher.h"

#include <algorithm>
#include <stdexcept>

namespace gpuvp::uvm {

MigrationPlan Prefetcher::plan(const PageTable& table, uint64_t fault_page) {
  const Allocation* alloc = table.allocation_of_page(fault_page);
  if (alloc == nullptr || table.state(fault_page) != PageState::Host)
    throw std::logic_error("uvm prefetcher: the faulting page must be managed and host resident");
  std::vector<uint64_t> pages = candidates(table, *alloc, fault_page);
  pages.erase(std::remove_if(pages.begin(), pages.end(),
                             [&](uint64_t p) {
                               return p == fault_page || p < alloc->first_page() || p >= alloc->end_page() ||
                                      table.state(p) != PageState::Host;
                             }),
              pages.end());
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());

  MigrationPlan plan;
  plan.transfers.push_back({fault_page, 1});
  for (uint64_t p : pages) {
    if (plan.transfers.size() > 1 && plan.transfers.back().end() == p)
      ++plan.transfers.back().count;
    else
      plan.transfers.push_back({p, 1});
  }
  return plan;
}

namespace {

class NoPrefetcher final : public Prefetcher {
  std::vector<uint64_t> candidates(const PageTable&, const Allocation&, uint64_t) override { return {}; }
};

class RandomPrefetcher final : public Prefetcher {
 public:
  explicit RandomPrefetcher(uint64_t seed) : rng_(seed) {}

 private:
  std::vector<uint64_t> candidates(const PageTable& table, const Allocation& alloc, uint64_t fault_page) override {
    uint64_t rel = fault_page - alloc.first_page();
    uint64_t lo = alloc.first_page() + rel / kPagesPerLargePage * kPagesPerLargePage;
    uint64_t hi = std::min(lo + kPagesPerLargePage, alloc.end_page());
    std::vector<uint64_t> host;
    for (uint64_t p = lo; p < hi; ++p)
      if (p != fault_page && table.state(p) == PageState::Host) host.push_back(p);
    if (host.empty()) return {};
    // Modulo of a 64-bit draw: unlike std::uniform_int_distribution, the same on every library.
    return {host[rng_() % host.size()]};
  }
  std::mt19937_64 rng_;
};

class SequentialLocalPrefetcher final : public Prefetcher {
  std::vector<uint64_t> candidates(const PageTable&, const Allocation& alloc, uint64_t fault_page) override {
    uint64_t rel = fault_page - alloc.first_page();
    uint64_t lo = alloc.first_page() + rel / kPagesPerBlock * kPagesPerBlock;
    std::vector<uint64_t> out;
    for (uint64_t p = lo; p < lo + kPagesPerBlock; ++p) out.push_back(p);
    return out;
  }
};

class TbnPrefetcher final : public Prefetcher {
  std::vector<uint64_t> candidates(const PageTable& table, const Allocation& alloc, uint64_t fault_page) override {
    TbnTree tree{};
    for (const TbnTree& t : tbn_trees(alloc))
      if (fault_page >= t.first_page && fault_page < t.first_page + t.pages) tree = t;
    const uint64_t blocks = tree.pages / kPagesPerBlock;
    // Valid bytes per leaf (pages on the device or on their way), then the leaves to fill.
    std::vector<uint64_t> valid_pages(blocks, 0);
    for (uint64_t b = 0; b < blocks; ++b)
      for (uint64_t i = 0; i < kPagesPerBlock; ++i) {
        uint64_t p = tree.first_page + b * kPagesPerBlock + i;
        if (p < alloc.end_page() && table.state(p) != PageState::Host) ++valid_pages[b];
      }
    std::vector<bool> fill(blocks, false);
    auto fill_block = [&](uint64_t b) {
      fill[b] = true;
      valid_pages[b] = kPagesPerBlock;  // to be valid once migrated
    };
    const uint64_t leaf = (fault_page - tree.first_page) / kPagesPerBlock;
    fill_block(leaf);
    // Walk from the parent of the faulting leaf to the root; a node with more than half its
    // capacity to-be-valid gets all of its blocks.
    for (uint64_t span = 2; span <= blocks; span *= 2) {
      uint64_t first = leaf / span * span;
      uint64_t valid = 0;
      for (uint64_t b = first; b < first + span; ++b) valid += valid_pages[b];
      if (2 * valid > span * kPagesPerBlock)
        for (uint64_t b = first; b < first + span; ++b) fill_block(b);
    }
    std::vector<uint64_t> out;
    for (uint64_t b = 0; b < blocks; ++b)
      if (fill[b])
        for (uint64_t i = 0; i < kPagesPerBlock; ++i) out.push_back(tree.first_page + b * kPagesPerBlock + i);
    return out;
  }
};

}  // namespace

std::vector<TbnTree> tbn_trees(const Allocation& alloc) {
  std::vector<TbnTree> trees;
  uint64_t page = alloc.first_page();
  uint64_t left = alloc.pages();
  while (left >= kPagesPerLargePage) {
    trees.push_back({page, kPagesPerLargePage});
    page += kPagesPerLargePage;
    left -= kPagesPerLargePage;
  }
  if (left > 0) {
    uint64_t size = kPagesPerBlock;
    while (size < left) size *= 2;
    trees.push_back({page, size});
  }
  return trees;
}

std::unique_ptr<Prefetcher> make_prefetcher(PrefetcherKind kind, uint64_t seed) {
  switch (kind) {
    case PrefetcherKind::None: return std::make_unique<NoPrefetcher>();
    case PrefetcherKind::Random: return std::make_unique<RandomPrefetcher>(seed);
    case PrefetcherKind::SequentialLocal: return std::make_unique<SequentialLocalPrefetcher>();
    case PrefetcherKind::Tbn: return std::make_unique<TbnPrefetcher>();
  }
  throw std::invalid_argument("uvm: unknown prefetcher");
}

}  // namespace gpuvp::uvm
