#include "models/uvm/eviction/eviction_policy.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace gpuvp::uvm {
namespace {

std::vector<uint64_t> sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Least recently used groups of `group_pages` pages (counted from each allocation's base).
class LruGroups final : public EvictionPolicy {
 public:
  explicit LruGroups(uint64_t group_pages) : group_pages_(group_pages) {}
  std::vector<uint64_t> victims(const PageTable& table, uint64_t pages, bool spare_preferred) override {
    struct Group {
      uint64_t last_use = 0;
      std::vector<uint64_t> pages;
    };
    std::map<uint64_t, Group> groups;  // by first page of the group
    for (uint64_t p : table.resident_pages(spare_preferred)) {
      const Allocation* a = table.allocation_of_page(p);
      uint64_t key = a->first_page() + (p - a->first_page()) / group_pages_ * group_pages_;
      Group& g = groups[key];
      g.last_use = std::max(g.last_use, table.info(p).last_use);
      g.pages.push_back(p);
    }
    std::vector<std::pair<uint64_t, uint64_t>> order;  // (last use, key)
    for (const auto& [key, g] : groups) order.emplace_back(g.last_use, key);
    std::sort(order.begin(), order.end());
    std::vector<uint64_t> out;
    for (const auto& [use, key] : order) {
      if (out.size() >= pages) break;
      const auto& g = groups[key].pages;
      out.insert(out.end(), g.begin(), g.end());
    }
    return sorted(std::move(out));
  }

 private:
  uint64_t group_pages_;
};

class Lfu final : public EvictionPolicy {
 public:
  std::vector<uint64_t> victims(const PageTable& table, uint64_t pages, bool spare_preferred) override {
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> order;  // (uses, last use, page)
    for (uint64_t p : table.resident_pages(spare_preferred)) order.emplace_back(table.info(p).uses, table.info(p).last_use, p);
    std::sort(order.begin(), order.end());
    std::vector<uint64_t> out;
    for (uint64_t i = 0; i < order.size() && i < pages; ++i) out.push_back(std::get<2>(order[i]));
    return sorted(std::move(out));
  }
};

class RandomEviction final : public EvictionPolicy {
 public:
  explicit RandomEviction(uint64_t seed) : rng_(seed) {}
  std::vector<uint64_t> victims(const PageTable& table, uint64_t pages, bool spare_preferred) override {
    std::vector<uint64_t> resident = table.resident_pages(spare_preferred);
    std::vector<uint64_t> out;
    while (out.size() < pages && !resident.empty()) {
      uint64_t i = rng_() % resident.size();
      out.push_back(resident[i]);
      resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return sorted(std::move(out));
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, uint64_t seed) {
  switch (kind) {
    case EvictionKind::Lru4K: return std::make_unique<LruGroups>(1);
    case EvictionKind::Lru2M: return std::make_unique<LruGroups>(kPagesPerLargePage);
    case EvictionKind::SequentialLocal: return std::make_unique<LruGroups>(kPagesPerBlock);
    case EvictionKind::Random: return std::make_unique<RandomEviction>(seed);
    case EvictionKind::Lfu: return std::make_unique<Lfu>();
  }
  throw std::invalid_argument("uvm: unknown eviction policy");
}

}  // namespace gpuvp::uvm
